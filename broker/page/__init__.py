"""Page content: read, search, find, locate, frames and eval."""
