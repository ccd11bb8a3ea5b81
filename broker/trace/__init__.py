"""bp trace: a per-Agent record of its commands, exported as one self-contained HTML file."""
