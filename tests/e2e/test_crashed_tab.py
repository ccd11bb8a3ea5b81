"""A crashed or silent tab is reported as what it is (issue 15 §2): marked in `bp tabs` and
`bp status`, commands on it answer target_crashed at once, `bp open` reloads it, other tabs
and Agents carry on; a read-only command that runs out of time answers command_expired."""

import json

from tests import helpers
from tests.helpers import bp


def ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    return result.json


def raw_of(chromium, title):
    return [t for t, i in chromium.pages().items() if i["title"] == title][0]


def page_socket(chromium, raw):
    import websocket

    return websocket.create_connection(f"ws://127.0.0.1:{chromium.port}/devtools/page/{raw}",
                                       suppress_origin=True, timeout=10)


def send(ws, method, params=None, id_=1):
    ws.send(json.dumps({"id": id_, "method": method, "params": params or {}}))


def tab_row(home, env, target_id):
    return [t for t in ok(home, env, "tabs")["tabs"] if t["targetId"] == target_id][0]


def selected_id(home, env):
    return [t for t in ok(home, env, "tabs")["tabs"] if t["selected"]][0]["targetId"]


def assert_crashed(result, reason="renderer_crashed"):
    assert result.code == "target_crashed", result
    assert result.json["context"]["reason"] == reason
    assert result.json["remediation"]["code"] == "reload_or_close_tab"
    assert "commandId" in result.json["context"]


def test_a_crashed_tab_is_marked_fails_at_once_and_reloads(home, connected, pages, chromium):
    other_url = pages.page("<button>Other</button>", title="crash-other", site="b")  # another renderer
    ok(home, connected, "open", "--new", other_url)
    other = selected_id(home, connected)
    url = pages.page("<button>Victim</button>", title="crash-victim")
    ok(home, connected, "open", "--new", url)
    victim = selected_id(home, connected)
    ws = page_socket(chromium, raw_of(chromium, "crash-victim"))
    send(ws, "Page.crash")  # never answered: the renderer is gone
    try:
        assert helpers.wait_until(lambda: "crashed" in tab_row(home, connected, victim), 20)
        assert tab_row(home, connected, victim)["crashed"]["reason"] == "renderer_crashed"
        assert "crashed" not in tab_row(home, connected, other)
        status = ok(home, connected, "status")
        assert [t["targetId"] for t in status["crashedTabs"]["tabs"]] == [victim]
        for command in (["snapshot"], ["screenshot"], ["errors"], ["read"], ["find", "button"]):
            assert_crashed(bp(home, "--timeout", "20000", *command, env=connected))

        # Another Agent, and this Agent's other tab, are unaffected.
        other_agent = dict(connected, BROWSER_PILOT_CLIENT_KEY="crash-other-agent")
        seen = ok(home, other_agent, "open", "--new", pages.page("<button>Elsewhere</button>", title="crash-else"))
        assert ("button", "Elsewhere") in [(e["role"], e["name"]) for e in seen["elements"]]
        ok(home, connected, "tab", other)
        assert ("button", "Other") in [(e["role"], e["name"]) for e in ok(home, connected, "snapshot")["elements"]]

        # bp open reloads the crashed tab: it answers again and is no longer marked.
        ok(home, connected, "tab", victim)
        reopened = ok(home, connected, "open", url)
        assert ("button", "Victim") in [(e["role"], e["name"]) for e in reopened["elements"]]
        assert "crashed" not in tab_row(home, connected, victim)
        assert ok(home, connected, "status")["crashedTabs"]["count"] == 0
    finally:
        ws.close()


def test_a_silent_renderer_is_reported_and_recovers(home, connected, pages, chromium):
    ok(home, connected, "open", "--new", pages.page("<button>Busy</button>", title="crash-silent"))
    target = selected_id(home, connected)
    ws = page_socket(chromium, raw_of(chromium, "crash-silent"))
    try:
        send(ws, "Runtime.evaluate", {"expression": "for (;;) {}"})  # the page's main thread never returns
        first = bp(home, "--timeout", "6000", "snapshot", env=connected)
        # Out of time, nothing changed: a retry is invited (never unknown_outcome for a read).
        assert first.code in ("command_expired", "target_crashed"), first
        assert "commandId" in first.json["context"]
        if first.code == "command_expired":
            assert first.json["retryable"] is True
        assert helpers.wait_until(lambda: "crashed" in tab_row(home, connected, target), 20)
        assert tab_row(home, connected, target)["crashed"]["reason"] == "unresponsive"
        assert_crashed(bp(home, "--timeout", "20000", "snapshot", env=connected), "unresponsive")

        send(ws, "Runtime.terminateExecution", id_=2)  # the page answers again
        seen = ok(home, connected, "snapshot")
        assert ("button", "Busy") in [(e["role"], e["name"]) for e in seen["elements"]]
        assert "crashed" not in tab_row(home, connected, target)
    finally:
        ws.close()


def test_a_paused_browser_is_browser_unresponsive_not_a_crashed_tab(home, connected, pages, chromium):
    """Issue 27 item 3: with the whole browser stopped (SIGSTOP to its process group), a command
    answers browser_unresponsive (retryable, wait_for_browser), and the tab is not marked crashed."""
    import os
    import signal

    ok(home, connected, "open", "--new", pages.page("<button>Paused</button>", title="paused"))
    target = selected_id(home, connected)
    button = [e["ref"] for e in ok(home, connected, "snapshot")["elements"] if e["name"] == "Paused"][0]
    os.killpg(chromium.proc.pid, signal.SIGSTOP)
    try:
        paused = bp(home, "--timeout", "6000", "snapshot", env=connected)
        clicked = bp(home, "--timeout", "6000", "click", str(button), env=connected)
    finally:
        os.killpg(chromium.proc.pid, signal.SIGCONT)
    # A click may have been sent before the browser went silent: then not retryable (it may run on resume).
    assert clicked.code == "browser_unresponsive", clicked
    assert clicked.json["retryable"] is (not clicked.json["context"]["dispatched"])
    assert paused.code == "browser_unresponsive", paused
    assert paused.json["retryable"] is True and paused.json["remediation"]["code"] == "wait_for_browser"
    assert "commandId" in paused.json["context"]
    assert "crashed" not in tab_row(home, connected, target)
    assert ok(home, connected, "status").get("crashedTabs", {}).get("count", 0) == 0
    again = ok(home, connected, "snapshot")
    assert ("button", "Paused") in [(e["role"], e["name"]) for e in again["elements"]]
