"""The settle corpus (tests/settle_corpus.py) on real Chromium: for every way a page answers an
action, the answer is in that action's own observation; pages busy on their own (SSE, WebSocket,
long poll, a clock, a CSS animation) do not hold it, and the evidence says what was waited for.
Managed tabs are background tabs (the person's own tab stays in front), so every case is also
the background-tab case.

Each run appends a row (case, answer in the same call, call duration, settle) to the file named by
BP_SETTLE_TABLE, if set: the table of the closing note. Durations are printed, never asserted.
"""

import json
import os
import time

import pytest

from tests.helpers import bp, names, ok, ref_of
from tests.settle_corpus import CASES, LATE

# Pages that stay busy on their own: the action's answer is sync, and the busy page must not make
# the settle wait for the whole bound (it would say "capped").
BUSY = ("sse_open", "websocket_open", "long_poll_open", "clock", "css_animation", "timer_poll")


def _record(case, in_call, ms, settle):
    path = os.environ.get("BP_SETTLE_TABLE")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"case": case, "inSameCall": in_call, "ms": ms, "settle": settle}) + "\n")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_answer_is_in_the_same_call(home, connected, corpus, case):
    body, action, expected = CASES[case]
    page = ok(home, connected, "open", corpus.url(case))
    if "dataset.ready" in body:  # as an Agent would: wait for what the page says it needs first
        ok(home, connected, "wait", "--selector", "body[data-ready]")
    if action[0] == "click":
        args = ("click", ref_of(page, "button", action[1]))
    else:
        args = ("type", ref_of(page, "searchbox", action[1]), action[2])
    started = time.monotonic()
    result = bp(home, "--timeout", "15000", *args, env=connected)
    ms = int((time.monotonic() - started) * 1000)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    settle = evidence["settle"]
    in_call = expected is None or expected in names(result.json)
    _record(case, in_call, ms, settle)
    print(case, in_call, ms, settle)
    assert settle["status"] in ("settled", "quiet", "navigated", "capped"), settle
    if expected is not None:
        assert in_call, (case, names(result.json), evidence)
    if case in LATE:
        assert LATE[case] not in names(result.json), (case, settle)
    if case == "post_then_location":
        assert settle["status"] == "navigated", settle
    elif case in BUSY:
        # The sync answer, nothing awaited: the page's own connections and clock are not causes.
        assert settle["status"] in ("settled", "quiet"), settle
        assert "pending" not in settle, settle
    elif case == "search_noop":
        # Typed into a search box that answers nothing: the debounce grace ran out, nothing came.
        assert settle["status"] == "quiet", settle
        assert evidence["status"] == "verified", evidence  # the text reads back
    elif case == "noop":
        assert settle["status"] == "quiet", settle
        assert "content_changed" not in evidence.get("effects", ()), evidence  # focus moved, nothing else
    elif case == "fetch_caused_noop_dom":
        assert settle["status"] == "settled", settle  # it waited for the fetch, which changed nothing
    else:
        assert settle["status"] == "settled", settle


def test_a_request_open_past_the_bound_is_reported_not_awaited(home, connected, corpus):
    """A click that starts a long poll: the settle stops at its bound and says what is pending,
    and evidence never claims that nothing changed."""
    from broker.actions import settle as settling

    page = ok(home, connected, "open", corpus.url("noop"))
    ok(home, connected, "eval", "document.querySelector('button').onclick = () => fetch('/api?wait=60000&secret=k')")
    started = time.monotonic()
    result = bp(home, "--timeout", "20000", "click", ref_of(page, "button", "Go"), env=connected)
    elapsed = time.monotonic() - started
    assert result.rc == 0, result
    settle = result.json["evidence"]["settle"]
    assert settle["status"] == "capped", settle
    assert settle["pending"]["requests"] == 1
    assert settle["pending"]["urls"] == [f"http://127.0.0.1:{corpus.port}/api?…"]  # no query: it may hold secrets
    assert result.json["evidence"].get("reason") != "no_observable_effect", result.json["evidence"]
    assert elapsed < settling.SETTLE_MAX_S + 10  # bounded by the settle's own bound, not the 20 s deadline


@pytest.mark.parametrize("page", ["echoed_select", "echoed_select_late"])
def test_a_selection_the_server_echoes_is_read_back_after_the_echo(home, connected, corpus, page):
    """A combobox whose value is the server's (NiceGUI's loopback): the option click sends the
    choice over a WebSocket and the combobox shows it only when the echo comes, 300 ms later
    (700 ms, after the list's delayed closing has ended the settle, on the late page). The
    selection is read back after the settle, and again briefly when it does not show yet."""
    page = ok(home, connected, "open", corpus.url(page))
    ok(home, connected, "wait", "--selector", "body[data-ready]")
    chosen = ok(home, connected, "select", ref_of(page, "combobox", "Plan"), "Pro")
    evidence = chosen["evidence"]
    assert evidence["status"] == "verified", evidence
    assert evidence["selected"] == ["Pro"], evidence
    assert evidence["settle"]["status"] == "settled", evidence
    plan = [e for e in chosen["elements"] if e["role"] == "combobox"]
    assert [e.get("value") for e in plan] == ["Pro"], chosen["elements"]  # the observation agrees
