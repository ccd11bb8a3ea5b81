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


def connect(ctx, run_dir, url, handshake_timeout_s=10.0, events=None, on_event=None):
    if events is not None:
        on_event = lambda method, raw: events.append(method)  # noqa: E731
    conn = BrowserConnection(ctx, run_dir, {"id": "test", "product": "chromium"}, url, 1, handshake_timeout_s,
                             on_event=on_event)
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


def test_the_first_mutation_a_tab_worker_sends_dispatches_the_command_it_was_handed(ctx, run_dir, chromium):
    """The transport knows nothing of records: the tab's session marks the command its worker
    runs (handed over with the work, broker/tabs/session.py Workers.run), and only for what that
    worker sends; a call of another thread on the same session speaks for no command."""
    from broker.browser.targets import Targets
    from broker.tabs.session import TabSession, Workers

    targets = Targets()
    conn = connect(ctx, run_dir, ws_url(chromium), on_event=targets.on_event)
    target = conn.cdp("Target.createTarget", {"url": "about:blank", "background": True})["targetId"]
    record = store.Record("cmd-0000000000000001", "open", True, 60.0, 1, None, None, None,
                          SimpleNamespace(generation=1))
    workers = Workers()
    try:
        def attach(worker):
            worker.session = TabSession(conn, targets, target, worker=worker)
            worker.session.call("Runtime.evaluate", {"expression": "1"})
            return record.status

        assert workers.run(target, attach, timeout_s=WAIT_S, record=record) == "accepted"  # reads: no dispatch
        session = workers.session(target)
        session.call("Page.navigate", {"url": "about:blank#other-thread"})
        assert record.status == "accepted"  # not sent by the worker: not this command's
        navigate = lambda worker: worker.session.call("Page.navigate", {"url": "about:blank#mine"})  # noqa: E731
        workers.run(target, navigate, timeout_s=WAIT_S, record=record)
        assert record.status == "dispatched"
    finally:
        workers.stop_all()
        conn.cdp("Target.closeTarget", {"targetId": target})
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
