"""broker/network/journal.py without a browser: rule precedence, globs, redaction (journal bounds:
tests/unit/test_bounds.py)."""

import time

from broker.network import journal as network


def test_precedence_glob_and_redaction():
    block = network.Rule("block", "*/api/*")
    time.sleep(0.001)
    old_mock = network.Rule("mock", "*/API/*", status=200, body=b"old")
    new_mock = network.Rule("mock", "*/api/*", status=201, body=b"new")
    headers = network.Rule("headers", "*", headers=[{"name": "X-A", "value": "1"}])
    rules = [headers, old_mock, new_mock]
    assert network.choose(rules, "https://x.test/api/user") is new_mock  # mock before headers; newest first
    assert network.choose(rules + [block], "https://x.test/api/user") is block  # block wins whatever its age
    assert network.choose(rules, "https://x.test/other") is headers
    assert network.choose([block], "https://x.test/apix") is None  # whole-URL match
    assert network.glob_matcher("*example.com/*")("HTTPS://EXAMPLE.COM/a")
    rows = [{"name": "Cookie", "value": "sid=1"}, {"name": "Accept", "value": "*/*"},
            {"name": "authorization", "value": "Bearer t"}]
    shown, redacted = network.redact(rows, reveal=False)
    assert [r["value"] for r in shown] == ["[redacted]", "*/*", "[redacted]"] and redacted == ["cookie", "authorization"]
    assert network.redact(rows, reveal=True) == (rows, [])

