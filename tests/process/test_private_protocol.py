"""Hostile or broken messages on the private pipes get error replies and break nothing."""

import json
import os
import subprocess
import sys

import pytest
import zmq

from bp import janitor_pipe as jp
from bp import protocol
from tests import helpers
from tests.helpers import bp


def _raw(home, payload, wait_ms=5000):
    with helpers.broker_socket(home) as sock:
        sock.send(payload)
        assert sock.poll(wait_ms), "the broker did not answer"
        return json.loads(sock.recv())


def _request(**overrides):
    request, _ = protocol.encode_request("status", "test-agent", {}, timeout_ms=5000)
    request.update(overrides)
    return json.dumps(request).encode()


@pytest.mark.parametrize("payload,field", [
    (b"not json", "request"),
    (b"[1,2,3]", "request"),
    (_request(op="tool"), "op"),
    (_request(op="status", args={"unexpected": 1}), "args.unexpected"),
    (_request(client="x"), "client"),
    (_request(timeoutMs="60000"), "timeoutMs"),
    (_request(timeoutMs=0), "timeoutMs"),
    (_request(extra=True), "extra"),
    (_request(commandId="../../etc"), "commandId"),
])
def test_malformed_requests_get_invalid_argument(home, connected, payload, field):
    reply = _raw(home, payload)
    assert reply["ok"] is False
    assert reply["code"] == "invalid_argument"
    assert reply["context"]["field"] == field
    assert bp(home, "status", env=connected).json["browser"]["state"] == "ready"  # nothing broke


def test_oversized_request_is_refused_before_parsing(home, connected):
    reply = _raw(home, b"{" + b" " * (protocol.MAX_REQUEST_BYTES + 10) + b"}")
    assert reply["code"] == "invalid_argument"
    assert reply["context"]["field"] == "request"
    assert bp(home, "status", env=connected).rc == 0


def test_request_of_another_protocol_major_is_protocol_incompatible(home, connected):
    reply = _raw(home, _request(v=[protocol.PROTOCOL[0] + 1, 0]))
    assert reply["code"] == "protocol_incompatible"
    assert reply["remediation"]["code"] == "stop_incompatible_broker_or_isolate"
    assert len(helpers.brokers_of(home)) == 1  # left running


class FakeBroker:
    """The test plays the broker's side of the janitor pipe, against real Chromium."""

    def __init__(self, chromium, run_dir, env=None):
        self.ctx = zmq.Context()
        self.pipe = self.ctx.socket(zmq.PAIR)
        self.address = f"ipc://{run_dir}/janitor-test.sock"
        self.pipe.bind(self.address)
        port, ws_path = open(os.path.join(chromium.root, "DevToolsActivePort")).read().split()
        self.proc = subprocess.Popen([sys.executable, "-m", "janitor", "--pipe", self.address],
                                     stdin=subprocess.PIPE, env=env)
        self.proc.stdin.write(f"ws://127.0.0.1:{port}{ws_path}\n".encode())  # never on argv
        self.proc.stdin.flush()
        kind, _ = self.expect({jp.READY, jp.FAILED})
        assert kind == jp.READY

    def expect(self, kinds, timeout_ms=10000):
        while True:
            assert self.pipe.poll(timeout_ms), f"no {kinds} from the janitor"
            kind, payload = self.pipe.recv_multipart()
            if kind in kinds:
                return kind, payload

    def call(self, call_id, method, params=None):
        self.pipe.send_multipart([jp.CALL, json.dumps({"id": call_id, "method": method, "params": params or {}}).encode()])
        _, payload = self.expect({jp.RESULT})
        return json.loads(payload)

    def close(self):
        if self.proc.poll() is None:
            if not self.proc.stdin.closed:
                self.proc.stdin.close()
            self.proc.wait(10)
        self.pipe.close(0)
        self.ctx.destroy(linger=0)


@pytest.fixture
def fake_broker(chromium, home):
    broker = FakeBroker(chromium, home)
    yield broker
    broker.close()


def test_janitor_refuses_malformed_messages_and_keeps_the_session(fake_broker, chromium):
    created = fake_broker.call(1, "create", {"url": "about:blank#owned"})
    target = created["result"]["targetId"]
    garbage = [
        [jp.CALL, b"{not json"],
        [jp.CALL, json.dumps({"id": 2, "method": "closeEverything"}).encode()],
        [jp.CALL, b"x" * (jp.MAX_CALL_BYTES + 1)],
        [jp.CDP, b'{"method":"Target.closeTarget"}'],  # no id
        [jp.CDP, json.dumps({"id": jp.JANITOR_ID_BASE + 5, "method": "Browser.close"}).encode()],  # janitor id space
        [b"bogus-kind", b"{}"],
        [jp.CDP, b"{\"id\":1," + b" " * (jp.MAX_BROKER_MESSAGE_BYTES + 1) + b"}"],
        [jp.CALL],
    ]
    for frames in garbage:
        fake_broker.pipe.send_multipart(frames)
        _, payload = fake_broker.expect({jp.RESULT})
        assert json.loads(payload)["error"]["code"] == "janitor_error", frames[0]
    assert fake_broker.proc.poll() is None  # still running
    assert target in chromium.pages()  # and no cleanup was triggered
    assert fake_broker.call(3, "status")["result"]["owned"] == 1


def test_janitor_closes_owned_targets_on_stdin_eof_and_exits(fake_broker, chromium):
    user_tab = chromium.new_user_tab()
    ids = [fake_broker.call(i, "create")["result"]["targetId"] for i in range(1, 6)]
    assert set(ids) <= set(chromium.pages())
    fake_broker.proc.stdin.close()
    assert fake_broker.proc.wait(10) == 0
    assert not set(ids) & set(chromium.pages())
    assert user_tab in chromium.pages()


def test_janitor_relays_cdp_replies_unchanged(fake_broker):
    fake_broker.pipe.send_multipart([jp.CDP, b'{"id":7,"method":"Browser.getVersion"}'])
    while True:
        _, payload = fake_broker.expect({jp.CDP})
        if jp.peek_id(payload) == 7:
            break
    assert "product" in json.loads(payload)["result"]


def test_janitor_still_cleans_up_when_the_broker_vanished_while_events_flowed(fake_broker, chromium):
    ids = [fake_broker.call(i, "create")["result"]["targetId"] for i in range(1, 4)]
    fake_broker.pipe.close(0)  # the broker's end is gone: nobody reads the janitor's messages
    extra = [chromium.new_user_tab() for _ in range(5)]  # events the janitor must relay (or drop)
    fake_broker.proc.stdin.close()
    assert fake_broker.proc.wait(15) == 0  # never stuck sending to a broker that is gone
    assert helpers.wait_until(lambda: not set(ids) & set(chromium.pages()), timeout=5)
    assert set(extra) <= set(chromium.pages())
    for target in extra:
        chromium.close_tab(target)
