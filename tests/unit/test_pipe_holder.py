"""The pipe holder's routing (janitor/pipe_holder.py) against a scripted 'Chromium' on real
pipes and clients on real socket pairs. The real browser behind it: tests/e2e/test_launch_pipe.py."""

import json
import os
import socket

import pytest

from janitor.pipe_holder import Client, Holder


class Rig:
    def __init__(self):
        self.cmd_read, cmd_write = os.pipe()  # holder -> "Chromium"
        msg_read, self.msg_write = os.pipe()  # "Chromium" -> holder
        os.set_blocking(cmd_write, False)
        os.set_blocking(msg_read, False)
        os.set_blocking(self.cmd_read, False)
        self.holder = Holder(cmd_write, msg_read, None, 0)
        self.pending = b""

    def client(self):
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        theirs.settimeout(2)
        client = Client(ours)
        self.holder.clients[ours.fileno()] = client
        return client, theirs

    def pump(self, rounds=5):
        for _ in range(rounds):
            self.holder.step(10)

    def commands(self):
        """What the holder sent to 'Chromium' so far, decoded."""
        self.pump()
        try:
            self.pending += os.read(self.cmd_read, 1 << 20)
        except BlockingIOError:
            pass
        *done, self.pending = self.pending.split(b"\0")
        return [json.loads(m) for m in done]

    def chrome_says(self, message):
        os.write(self.msg_write, json.dumps(message, separators=(",", ":")).encode() + b"\0")
        self.pump()


def received(sock):
    data = b""
    sock.settimeout(0.2)
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, BlockingIOError):
        pass
    return [json.loads(m) for m in data.split(b"\0") if m]


@pytest.fixture
def rig():
    return Rig()


def test_the_same_id_from_two_clients_reaches_each_its_own_reply(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    a_sock.sendall(b'{"id":1,"method":"Browser.getVersion","params":{}}\0')
    b_sock.sendall(b'{"id":1,"method":"Target.getTargets","params":{}}\0')
    sent = rig.commands()
    assert [m["method"] for m in sent] == ["Browser.getVersion", "Target.getTargets"]
    assert sent[0]["id"] != sent[1]["id"]
    rig.chrome_says({"id": sent[1]["id"], "result": {"who": "b"}})
    rig.chrome_says({"id": sent[0]["id"], "result": {"who": "a"}})
    assert received(a_sock) == [{"id": 1, "result": {"who": "a"}}]
    assert received(b_sock) == [{"id": 1, "result": {"who": "b"}}]


def test_events_reach_every_client(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    event = {"method": "Target.targetCreated", "params": {"targetInfo": {"targetId": "T"}}}
    rig.chrome_says(event)
    assert received(a_sock) == [event] and received(b_sock) == [event]


def test_a_leaving_client_gets_nothing_more_and_its_state_is_undone(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    a_sock.sendall(b'{"id":7,"method":"Target.setDiscoverTargets","params":{"discover":true}}\0'
                   b'{"id":8,"method":"Target.setAutoAttach","params":{"autoAttach":true,'
                   b'"waitForDebuggerOnStart":true,"flatten":true}}\0'
                   b'{"id":9,"method":"Runtime.evaluate","params":{}}\0')
    sent = rig.commands()
    rig.chrome_says({"method": "Target.attachedToTarget",
                     "params": {"sessionId": "S1", "targetInfo": {"targetId": "T1"}, "waitingForDebugger": True}})
    a_sock.close()
    rig.pump()
    assert a.gone and list(rig.holder.clients.values()) == [b]
    undo = rig.commands()
    assert {(m["method"], json.dumps(m["params"], sort_keys=True)) for m in undo} == {
        ("Target.detachFromTarget", '{"sessionId": "S1"}'),
        ("Target.setAutoAttach", '{"autoAttach": false, "flatten": true, "waitForDebuggerOnStart": false}'),
        ("Target.setDiscoverTargets", '{"discover": false}')}
    # The reply to the leaver's last call goes nowhere: not to the client still there.
    received(b_sock)
    rig.chrome_says({"id": sent[2]["id"], "result": {"secret": 1}})
    assert received(b_sock) == []


def test_discovery_stays_on_while_another_client_wants_it(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    for sock in (a_sock, b_sock):
        sock.sendall(b'{"id":1,"method":"Target.setDiscoverTargets","params":{"discover":true}}\0')
    rig.commands()
    a_sock.close()
    rig.pump()
    assert [m["method"] for m in rig.commands()] == []
    b_sock.close()
    rig.pump()
    assert [m["method"] for m in rig.commands()] == ["Target.setDiscoverTargets"]


def test_a_session_an_explicit_attach_claims_is_not_the_auto_attachers(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    a_sock.sendall(b'{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true}}\0')
    b_sock.sendall(b'{"id":2,"method":"Target.attachToTarget","params":{"targetId":"T","flatten":true}}\0')
    sent = rig.commands()
    rig.chrome_says({"method": "Target.attachedToTarget", "params": {"sessionId": "SB", "targetInfo": {}}})
    rig.chrome_says({"id": sent[1]["id"], "result": {"sessionId": "SB"}})
    a_sock.close()
    rig.pump()
    assert "Target.detachFromTarget" not in [m["method"] for m in rig.commands()]
    assert b.sessions == {"SB"}


def test_a_message_without_a_leading_id_drops_the_client_and_is_not_forwarded(rig):
    a, a_sock = rig.client()
    a_sock.sendall(b'{"method":"Browser.close","id":1}\0')
    rig.pump()
    assert a.gone
    assert rig.commands() == []


def test_discovery_reads_the_launched_socket_only_when_it_is_our_owner_only_socket(tmp_path):
    from bp import discovery

    home = str(tmp_path)
    path = discovery.launched_socket(home)
    assert discovery.read_launched_endpoint(home) is None
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    try:
        os.chmod(path, 0o600)
        assert discovery.read_launched_endpoint(home) == ("unix", path)
        assert discovery.endpoint_url(("unix", path)) == f"unix:{path}"
        os.chmod(path, 0o660)
        assert discovery.read_launched_endpoint(home) == "stale"
    finally:
        listener.close()
    os.unlink(path)
    with open(path, "w"):
        pass  # a regular file where the socket should be
    assert discovery.read_launched_endpoint(home) == "stale"
    assert discovery.endpoint_url((9222, "/devtools/browser/x")) == "ws://127.0.0.1:9222/devtools/browser/x"


def test_the_janitor_refuses_a_broker_payload_holding_a_nul_on_the_pipe_transport(tmp_path):
    """A NUL ends a message on the pipe: one inside a broker payload would smuggle a second,
    unchecked command (e.g. one with a janitor-range id) past the janitor."""
    import zmq

    from bp import janitor_pipe as jp
    from janitor.relay import Janitor

    path = str(tmp_path / "cdp.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    ctx = zmq.Context()
    broker = ctx.socket(zmq.PAIR)
    broker.bind(f"ipc://{tmp_path}/pipe.sock")
    janitor = Janitor(f"ipc://{tmp_path}/pipe.sock", f"unix:{path}", 5)
    try:
        assert janitor.connect_browser() is None
        browser, _ = server.accept()
        browser.settimeout(0.5)
        janitor.on_broker([jp.CDP, b'{"id":1,"method":"Browser.getVersion"}\0{"id":1073741999,"method":"Browser.close"}'])
        kind, payload = broker.recv_multipart()
        assert kind == jp.RESULT and json.loads(payload)["error"]["code"] == "janitor_error"
        janitor.on_broker([jp.CDP, b'{"id":2,"method":"Browser.getVersion"}'])
        assert browser.recv(4096) == b'{"id":2,"method":"Browser.getVersion"}\0'  # only the clean one
        browser.close()
    finally:
        janitor.ws.shutdown()
        janitor.pipe.close(linger=0)
        janitor.ctx.destroy(linger=0)
        broker.close(linger=0)
        ctx.destroy(linger=0)
        server.close()


def test_what_a_reply_creates_after_its_client_left_is_undone_at_once(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    a_sock.sendall(b'{"id":1,"method":"Target.attachToTarget","params":{"targetId":"T","flatten":true}}\0'
                   b'{"id":2,"method":"Target.createBrowserContext","params":{}}\0')
    sent = rig.commands()
    a_sock.close()
    rig.pump()
    rig.commands()
    rig.chrome_says({"method": "Target.attachedToTarget", "params": {"sessionId": "LATE", "targetInfo": {},
                                                                     "waitingForDebugger": False}})
    rig.chrome_says({"id": sent[0]["id"], "result": {"sessionId": "LATE"}})
    rig.chrome_says({"id": sent[1]["id"], "result": {"browserContextId": "CTX"}})
    assert [(m["method"], m["params"]) for m in rig.commands()] == [
        ("Target.detachFromTarget", {"sessionId": "LATE"}),
        ("Target.disposeBrowserContext", {"browserContextId": "CTX"})]


def test_a_tab_held_by_a_departed_auto_attach_is_let_go(rig):
    (a, a_sock), (b, b_sock) = rig.client(), rig.client()
    a_sock.sendall(b'{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,'
                   b'"waitForDebuggerOnStart":true,"flatten":true}}\0')
    rig.commands()
    a_sock.close()
    rig.pump()
    assert "Target.setAutoAttach" in [m["method"] for m in rig.commands()]
    # Auto-attached before Chromium saw the reset: the tab waits for a debugger nobody is.
    rig.chrome_says({"method": "Target.attachedToTarget", "params": {"sessionId": "HELD", "targetInfo": {},
                                                                     "waitingForDebugger": True}})
    assert [(m["method"], m["params"]) for m in rig.commands()] == [("Target.detachFromTarget", {"sessionId": "HELD"})]
