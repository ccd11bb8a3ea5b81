"""Issue 14: no single request can stop the broker. Raw frames go to its ROUTER socket; after
each one the broker still answers, and a following `bp status` works."""

import json
import subprocess

import pytest
import zmq

from bp import protocol
from tests import helpers
from tests.helpers import bp


def _raw(home, payload, wait_ms=10000):
    """The broker's reply to one raw frame, as bytes (so a test can check it is valid UTF-8)."""
    with helpers.broker_socket(home) as sock:
        sock.send(payload)
        assert sock.poll(wait_ms), "the broker did not answer"
        return sock.recv()


def _request(op="ping", args=None, **overrides):
    request, _ = protocol.encode_request(op, "test-agent", args if args is not None else {}, timeout_ms=5000)
    request.update(overrides)
    return request


def _nested(depth):
    value = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _still_serving(home, env):
    result = bp(home, "status", env=env)
    assert result.rc == 0, result
    assert len(helpers.brokers_of(home)) == 1


@pytest.mark.parametrize("payload", [
    b"[" * 1000 + b"]" * 1000,
    b"[" * 200_000 + b"]" * 200_000,
    b'{"v":[1,0],"op":"ping","args":' + b"[" * 5000 + b"]" * 5000 + b"}",
    json.dumps(_request(args=_nested(protocol.MAX_REQUEST_DEPTH))).encode(),
], ids=["deep-2000-bytes", "deep-400k", "deep-args", "deep-17"])
def test_deep_json_is_invalid_argument(home, connected, payload):
    reply = json.loads(_raw(home, payload))
    assert reply["code"] == "invalid_argument", reply
    assert reply["context"]["field"] == "request"
    _still_serving(home, connected)


@pytest.mark.parametrize("payload", [
    json.dumps(_request(args={"\ud800": 1})).encode(),  # the frame: the error echoes the key
    json.dumps(_request(op="\udfff")).encode(),
    json.dumps(_request(args={"a": 1}), ensure_ascii=False).encode("utf-8", "surrogatepass"),  # CESU-8 bytes
    json.dumps(_request(args={"\ud800" * 5000: 1})).encode(),
    json.dumps(_request(args={"k" * 900_000: 1})).encode(),
], ids=["surrogate-key", "surrogate-op", "cesu", "many-surrogates", "huge-key"])
def test_lone_surrogates_get_a_valid_utf8_answer(home, connected, payload):
    raw = _raw(home, payload)
    reply = json.loads(raw.decode("utf-8"))  # strict: the reply is valid UTF-8
    assert reply["ok"] is False and reply["code"] == "invalid_argument", reply
    assert len(raw) < 4096  # the echo of a field name is bounded
    _still_serving(home, connected)


def test_lone_surrogate_in_a_stored_value_is_replaced(home, connected):
    """A request that is valid apart from its text is served, with U+FFFD for the surrogate."""
    reply = json.loads(_raw(home, json.dumps(_request(op="net.rules.add", args={"type": "block", "pattern": "*x\ud800*"})).encode()))
    assert reply["ok"] is True, reply
    assert reply["rule"]["pattern"] == "*x\ufffd*"
    rules = bp(home, "--client-key", "test-agent", "net", "rules", env=connected)
    assert rules.rc == 0, rules
    assert rules.json["rules"][0]["pattern"] == "*x\ufffd*"


@pytest.mark.parametrize("frames", [
    [b"", b""],
    [b"", b"\xff\xfe"],
    [b"", b"null"],
    [b"", b"{}"],
    [b"", b'"\\ud800"'],
    [b"", b"1e999999"],
    [b"", b'{"v":[1,0]' + b',"v":[1,0]' * 10 + b"}"],
], ids=["empty", "bad-utf8", "null", "empty-object", "string", "huge-number", "duplicate-keys"])
def test_any_frame_gets_an_answer(home, connected, frames):
    with helpers.broker_socket(home, zmq.DEALER) as sock:
        sock.send_multipart(frames)
        assert sock.poll(10000), "the broker did not answer"
        reply = json.loads(sock.recv_multipart()[-1].decode("utf-8"))
        assert reply["ok"] is False and reply["code"] == "invalid_argument", reply
    _still_serving(home, connected)


def test_frames_beyond_the_size_bound_are_dropped_before_allocation(home, connected):
    """ZMQ_MAXMSGSIZE: the sender of a frame above the bound is disconnected, nothing allocated."""
    with helpers.broker_socket(home) as sock:
        sock.send(b"x" * (protocol.MAX_REQUEST_FRAME + 1))
        assert not sock.poll(1000)  # no answer: the connection was dropped
    _still_serving(home, connected)


def test_star_runs_cannot_hold_the_broker(home, connected):
    """The issue's `bp wait --url '**…*x'`: it ends with wait_timeout, and another Agent's call
    meanwhile is answered. (Before, the regex backtracked for minutes holding the GIL.)"""
    assert bp(home, "open", "about:blank", env=connected).rc == 0
    waiter = subprocess.Popen([helpers.BP, "--timeout", "3000", "wait", "--url", "*" * 50 + "x"], env=connected,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        other = bp(home, "--client-key", "other-agent", "status", env=connected, timeout=20)
        assert other.rc == 0, other
        out, _ = waiter.communicate(timeout=30)
    finally:
        if waiter.poll() is None:
            waiter.kill()
    assert json.loads(out)["code"] == "wait_timeout"
    rule = bp(home, "net", "block", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", env=connected)
    assert rule.rc == 0, rule
    assert bp(home, "net", "--url", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", env=connected).rc == 0
    _still_serving(home, connected)
