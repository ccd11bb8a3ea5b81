"""broker/network/ (journal, entries, interception) without a browser: rule precedence, globs, redaction (journal bounds:
tests/unit/test_bounds.py)."""

import time

from broker.network import entries
from broker.network import interception


def test_precedence_glob_and_redaction():
    block = interception.Rule("block", "*/api/*")
    time.sleep(0.001)
    old_mock = interception.Rule("mock", "*/API/*", status=200, body=b"old")
    new_mock = interception.Rule("mock", "*/api/*", status=201, body=b"new")
    headers = interception.Rule("headers", "*", headers=[{"name": "X-A", "value": "1"}])
    rules = [headers, old_mock, new_mock]
    assert interception.choose(rules, "https://x.test/api/user") is new_mock  # mock before headers; newest first
    assert interception.choose(rules + [block], "https://x.test/api/user") is block  # block wins whatever its age
    assert interception.choose(rules, "https://x.test/other") is headers
    assert interception.choose([block], "https://x.test/apix") is None  # whole-URL match
    assert interception.glob_matcher("*example.com/*")("HTTPS://EXAMPLE.COM/a")
    rows = [{"name": "Cookie", "value": "sid=1"}, {"name": "Accept", "value": "*/*"},
            {"name": "authorization", "value": "Bearer t"}]
    shown, redacted = entries.redact(rows, reveal=False)
    assert [r["value"] for r in shown] == ["[redacted]", "*/*", "[redacted]"] and redacted == ["cookie", "authorization"]
    assert entries.redact(rows, reveal=True) == (rows, [])

