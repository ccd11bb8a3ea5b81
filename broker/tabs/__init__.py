"""Tabs: the per-tab CDP session and worker thread, routing from a request to a tab, and
which Chrome profile a browser context is (profiles.py)."""
