"""Batches: several steps of one Agent in one command, each with its own record."""
