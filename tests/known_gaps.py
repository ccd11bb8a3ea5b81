"""Tests that fail today for a gap an open issue names and that is not built yet, each with its cause.

They run in the default suite as strict xfails: a gap that closes turns its test into a failure
(XPASS strict) until its line here is removed, so nothing here hides a regression of what works.
Empty since 2026-12-04: issue 26's last gaps (editable grid cells, the agreement pages) closed.
"""

GAPS = {
    # "tests/...::test_name": "issue N item M: why it fails today",
}
