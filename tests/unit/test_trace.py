"""The trace's record (broker/trace/book.py): what an argument becomes, URLs, scrubbing, bounds,
one key's trace never holding another's commands; and the report's escaping."""

import html
import time
from types import SimpleNamespace

from bp import ops
from broker.registry import Request
from broker.trace import book, report


def _request(op, args, client="agent-a", dispatched=False):
    request = Request(op=op, client=client, args=args, timeout_ms=5000, command_id="cmd-abcdefgh12")
    request.record = SimpleNamespace(dispatched_at=1 if dispatched else None)
    return request


def _traces():
    agent = SimpleNamespace(key="agent-a", selected="RAW1")
    # The target table's title lags behind the page (Chrome updates it later).
    targets = SimpleNamespace(info=lambda raw: {"url": "https://x.test/?q=s3cret-typed", "title": "from table"})
    broker = SimpleNamespace(agents=SimpleNamespace(get=lambda key: agent if key == "agent-a" else None),
                             browser=SimpleNamespace(targets=targets))
    return book.Traces(None, broker.agents, broker.browser, None), agent


def test_secret_arguments_are_replaced_and_unknown_fields_too():
    secrets = []
    assert book.redact_args(ops.OP_TYPE, {"ref": 3, "text": "hunter2", "clear": True}, secrets) == {
        "ref": 3, "text": "[redacted]", "clear": True}
    assert book.redact_args(ops.OP_COOKIE_SET, {"name": "sid", "value": "v-123", "url": "https://a.test/?t=1"},
                            secrets) == {"name": "sid", "value": "[redacted]", "url": "https://a.test/?t=…"}
    assert book.redact_args(ops.OP_AUTH_SET, {"username": "ada", "password": "pw-9"}, secrets) == {
        "username": "[redacted]", "password": "[redacted]"}
    assert book.redact_args(ops.OP_NET_RULE_ADD, {"type": "headers", "pattern": "*",
                                                  "headers": [{"name": "X-Key", "value": "k-42"}]}, secrets) == {
        "type": "headers", "pattern": "*", "headers": [{"name": "X-Key", "value": "[redacted]"}]}
    assert book.redact_args(ops.OP_EVAL, {"expression": "localStorage.token"}, secrets) == {"expression": "[redacted]"}
    assert book.redact_args(ops.OP_DIALOG, {"dialogId": "d-1", "action": "accept", "promptText": "answer"},
                            secrets)["promptText"] == "[redacted]"
    assert book.redact_args(ops.OP_CLICK, {"ref": 1, "somethingNew": "x"}, secrets)["somethingNew"] == "[redacted]"
    assert book.redact_args(ops.OP_WAIT, {"text": "Welcome"}, secrets) == {"text": "Welcome"}  # a condition, not typed
    assert book.redact_args(ops.OP_UPLOAD, {"path": "/home/ada/private/cv.pdf"}, secrets) == {"path": "cv.pdf"}
    batch = book.redact_args(ops.OP_BATCH, {"steps": [{"cmd": "type", "op": "type", "args": {"ref": 2, "text": "in-batch"}}]},
                             secrets)
    assert batch["steps"][0]["args"]["text"] == "[redacted]"
    assert secrets == ["hunter2", "v-123", "ada", "pw-9", "k-42", "answer", "in-batch"]


def test_urls_lose_credentials_and_query_values():
    assert book.clean_url("https://ada:pw@a.test/p?token=abc&x=1#frag") == "https://a.test/p?token=…&x=…#frag"
    assert book.clean_url("https://a.test/cb#access_token=abc&state=1") == "https://a.test/cb#access_token=…&state=…"
    assert book.clean_url("https://a.test/p?opaque-secret") == "https://a.test/p?…"
    assert book.clean_url("about:blank") == "about:blank"
    assert len(book.clean_url("https://a.test/" + "x" * 5000)) == 2048


def test_a_step_is_scrubbed_of_what_the_page_shows_back_and_other_keys_are_not_traced():
    traces, agent = _traces()
    trace, _ = traces.start(agent, screenshots=False)
    traces.record(_request(ops.OP_TYPE, {"ref": 1, "text": "s3cret-typed"}, dispatched=True),
                  {"ok": True, "title": "Results for s3cret-typed", "url": "https://x.test/?q=s3cret-typed",
                   "evidence": {"action": "type", "status": "verified", "settle": {"waitedMs": 12}},
                   "elements": [{}, {}], "hints": [{"code": "repeated_action"}]})
    traces.record(_request(ops.OP_CLICK, {"ref": 1}, client="agent-b"), {"ok": True})  # not this key's
    traces.record(_request(ops.OP_OPEN, {"url": "https://x.test/?q=s3cret-typed"}, dispatched=True),
                  {"ok": True, "title": "Results for s3cret-typed", "url": "https://x.test/?q=s3cret-typed",
                   "settle": {"requests": 3}})  # open's settle stands beside its observation
    traces.record(_request(ops.OP_TRACE_STOP, {}), {"ok": True})  # the trace's own commands are not steps
    step_of_batch = _request(ops.OP_CLICK, {"ref": 2})
    step_of_batch.batched = True
    traces.record(step_of_batch, {"ok": False, "code": "capability_denied", "error": "denied"})  # in the batch's step
    traces.record(_request(ops.OP_CLICK, {"ref": 9}, dispatched=True),
                  {"ok": False, "code": "unknown_outcome", "error": "lost s3cret-typed",
                   "context": {"reason": "deadline", "value": "x", "evidence": {"action": "click"}}})
    steps = list(trace.steps)
    assert [s["op"] for s in steps] == ["type", "open", "click"] and [s["seq"] for s in steps] == [1, 2, 3]
    first, opened, second = steps
    assert opened["settle"] == {"requests": 3} and opened["args"] == {"url": "https://x.test/?q=…"}
    assert first["title"] == "Results for [redacted]" and first["url"] == "https://x.test/?q=…"
    assert first["settle"] == {"waitedMs": 12} and first["counts"] == {"elements": 2}
    assert first["hints"] == ["repeated_action"] and first["outcome"] == "ok"
    assert second["outcome"] == "unknown_outcome" and second["message"] == "lost [redacted]"
    assert second["context"]["value"] == "[redacted]" and second["evidence"] == {"action": "click"}
    # Without a fresh observation, the URL and title are the ones last seen on that tab.
    assert second["title"] == "Results for [redacted]"
    assert "s3cret-typed" not in repr(steps)


def test_bounds_steps_bytes_and_detail():
    traces, agent = _traces()
    trace, _ = traces.start(agent, screenshots=False)
    for i in range(book.MAX_STEPS + 40):
        traces.record(_request(ops.OP_SNAPSHOT, {}), {"ok": True, "title": "t", "url": "https://x.test/"})
    assert len(trace.steps) == book.MAX_STEPS and trace.dropped == 40
    assert trace.steps[0]["seq"] == 41 and trace.steps[-1]["seq"] == book.MAX_STEPS + 40
    big = {"ok": True, "evidence": {"action": "click", "pad": "x" * (book.MAX_DETAIL_BYTES + 10)}}
    traces.record(_request(ops.OP_CLICK, {"ref": 1}), big)
    assert trace.steps[-1]["evidence"]["omitted"] is True
    before = len(trace.steps)
    for _ in range(40):
        traces.record(_request(ops.OP_CLICK, {"ref": 1}),
                      {"ok": False, "code": "invalid_argument", "error": "e" * book.MAX_TEXT,
                       "context": {"field": "x", "pad": "y" * (book.MAX_DETAIL_BYTES - 100)}})
    assert trace.bytes <= book.MAX_TRACE_BYTES and len(trace.steps) < before + 40
    assert sum(s["_size"] for s in trace.steps) == trace.bytes


def test_too_many_traces_is_a_quota():
    traces, _ = _traces()
    for i in range(book.MAX_TRACES):
        traces.start(SimpleNamespace(key=f"k{i}"), screenshots=False)
    try:
        traces.start(SimpleNamespace(key="one-more"), screenshots=False)
    except book.BPError as exc:
        assert exc.code == "quota_exceeded" and exc.context == {"limit": "traces", "max": book.MAX_TRACES}
    else:
        raise AssertionError("a trace past the bound was started")
    traces.start(SimpleNamespace(key="k0"), screenshots=False)  # restarting one of them is not a new one


def test_the_report_escapes_page_text_and_allows_only_its_own_script():
    step = {"seq": 1, "op": "click", "args": {"ref": 1}, "ok": True, "outcome": "ok", "startedAt": time.time() * 1000,
            "durationMs": 3.0, "title": "</script><script>alert(1)</script><img src=x onerror=alert(2)>",
            "url": "https://x.test/\"><b>", "evidence": {"action": "click", "note": "<i>x</i>"}}
    page = report.render({"key": "k", "startedAt": 0, "recording": False, "screenshots": False, "dropped": 0},
                         [step], {1: None}).decode()
    assert "<script>alert" not in page and "<img src=x" not in page and '"><b>' not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page
    assert page.count("<script>") == 1
    csp = html.unescape(page.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0])
    assert "script-src 'sha256-" in csp and "default-src 'none'" in csp and "img-src data:;" in csp
