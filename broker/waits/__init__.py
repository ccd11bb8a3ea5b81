"""Waits and JavaScript dialogs."""
