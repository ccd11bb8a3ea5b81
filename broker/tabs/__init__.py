"""Tabs: the per-tab CDP session and worker thread, and routing from a request to a tab."""
