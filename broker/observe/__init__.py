"""Observation: the isolated world, snapshots, refs and listener discovery."""
