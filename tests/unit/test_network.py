"""broker/network.py without a browser: rule precedence, globs, redaction, journal bounds."""

import time
from types import SimpleNamespace

from broker import network


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


def test_journal_is_bounded_and_filtered():
    state = network.KeyState(agent=None)
    session = SimpleNamespace(session_id="s1")
    for i in range(network.MAX_ENTRIES + 5):
        state.seq += 1
        entry = network.Entry(state.seq, session, f"r{i}", {"method": "GET", "url": f"https://x.test/{i}"}, "Fetch")
        entry.status = 404 if i % 2 else 200
        state.add(entry)
    assert len(state.entries) == network.MAX_ENTRIES and state.dropped == 5
    assert len(state.by_request) == network.MAX_ENTRIES
    hub = SimpleNamespace(lock=network.threading.RLock(), state=lambda agent: state)
    result = network.list_requests(hub, None, {"limit": 3, "status": "4xx"})
    assert [r["status"] for r in result["requests"]] == [404, 404, 404] and result["truncated"] is True
    assert result["requests"][-1]["id"] == f"req-{network.MAX_ENTRIES + 4}"  # the latest
    paged = network.list_requests(hub, None, {"limit": 2, "after": "req-6"})
    assert [r["id"] for r in paged["requests"]] == ["req-7", "req-8"] and paged["nextCursor"] == "req-8"
    assert network.Entry(1, session, "r", {"url": "u" * 20000}, None).row()["url"] == "u" * network.MAX_URL
