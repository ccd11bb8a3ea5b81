"""Files: artifacts, screenshots, PDFs, uploads and downloads."""
