"""The `bp` command line: parse, one request to the broker, print. Nothing heavy at import."""
