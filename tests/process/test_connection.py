"""broker.connection.BrowserConnection against a real janitor and real Chromium: the handshake,
CDP calls and their errors, events, command dispatch marking, and the ends (close, a killed
janitor, a handshake that never completes)."""

import os
import signal
from types import SimpleNamespace

import pytest
import zmq

from bp.errors import BPError
from broker.records import store
from broker.browser.connection import BrowserConnection, CDPError
from tests import helpers

WAIT_S = 30.0  # bound on the test's own waits; never a speed assertion


@pytest.fixture
def run_dir():
    with helpers.scratch_dir("bpr-") as path:
        yield path


@pytest.fixture
def ctx():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


def ws_url(chromium):
    with open(os.path.join(chromium.root, "DevToolsActivePort")) as fh:
        port, path = fh.read().splitlines()[:2]
    return f"ws://127.0.0.1:{port}{path}"


def connect(ctx, run_dir, url, handshake_timeout_s=10.0, events=None, on_dispatch=None):
    conn = BrowserConnection(ctx, run_dir, {"id": "test", "product": "chromium"}, url, 1, handshake_timeout_s,
                             on_event=(lambda method, raw: events.append(method)) if events is not None else None,
                             on_dispatch=on_dispatch)
    conn.start()
    assert conn.wait_settled(WAIT_S)
    return conn


def test_a_ready_connection_answers_cdp_and_relays_events(ctx, run_dir, chromium):
    events = []
    conn = connect(ctx, run_dir, ws_url(chromium), events=events)
    try:
        assert (conn.state, conn.alive) == ("ready", True)
        assert "Chrome" in conn.cdp("Browser.getVersion")["product"]
        conn.cdp("Target.setDiscoverTargets", {"discover": True})
        assert helpers.wait_until(lambda: "Target.targetCreated" in events, timeout=WAIT_S)
        with pytest.raises(CDPError) as caught:
            conn.cdp("No.suchMethod")
        assert caught.value.code == "internal_error" and caught.value.context == {"method": "No.suchMethod"}
        assert caught.value.cdp_code == -32601 and caught.value.method == "No.suchMethod"  # the protocol's own code
        assert conn.alive  # a refused call does not end the connection
    finally:
        conn.close()


def test_the_first_mutating_call_marks_the_bound_command_dispatched(ctx, run_dir, chromium):
    # The broker hands the connection its records' hook (broker/server.py); the transport itself
    # knows nothing of records.
    conn = connect(ctx, run_dir, ws_url(chromium), on_dispatch=store.dispatching)
    record = store.Record("cmd-0000000000000001", "open", True, 60.0, 1, None, None, None,
                             SimpleNamespace(generation=1))
    try:
        with store.bound(record):
            conn.cdp("Browser.getVersion")
            assert record.status == "accepted"  # a read is not a dispatch
            target = conn.cdp("Target.createTarget", {"url": "about:blank", "background": True})["targetId"]
            assert record.status == "dispatched"
        conn.cdp("Target.closeTarget", {"targetId": target})
    finally:
        conn.close()


def test_after_close_calls_fail_as_disconnected_and_the_janitor_is_gone(ctx, run_dir, chromium):
    conn = connect(ctx, run_dir, ws_url(chromium))
    conn.close()
    # The relay may see the janitor exit before close() finishes: "lost" then, never usable.
    assert conn.state in ("closed", "lost") and not conn.alive
    assert conn.process.poll() is not None
    with pytest.raises(BPError) as caught:
        conn.cdp("Browser.getVersion")
    assert caught.value.code == "browser_disconnected"


def test_a_killed_janitor_is_a_lost_connection(ctx, run_dir, chromium):
    conn = connect(ctx, run_dir, ws_url(chromium))
    try:
        conn.process.send_signal(signal.SIGKILL)
        assert helpers.wait_until(lambda: conn.state == "lost", timeout=WAIT_S)
        assert conn.failure["reason"] == "janitor_exited"
        with pytest.raises(BPError) as caught:
            conn.cdp("Browser.getVersion")
        assert caught.value.code == "browser_disconnected"
    finally:
        conn.close()


def test_a_handshake_that_never_completes_fails_the_connection(ctx, run_dir):
    listener, _held = helpers.stalling_endpoint()
    try:
        conn = connect(ctx, run_dir, f"ws://127.0.0.1:{listener.getsockname()[1]}/devtools/browser/x",
                       handshake_timeout_s=1.0)
        assert conn.state == "failed" and not conn.alive
        assert conn.failure["reason"]
        conn.close()
    finally:
        listener.close()
