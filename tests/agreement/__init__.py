"""The agreement check (issue 26 item 7): Browser Pilot's observation of a page compared with
Chromium's own accessibility tree, read over the test's own DevTools connection."""
