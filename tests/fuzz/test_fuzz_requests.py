"""The broker's request parser and every args schema, in process: whatever the frame holds,
parse() returns a request or raises a BPError with a stable code, and encode() of any reply
gives valid UTF-8 JSON. A handful of generated frames then go to a real broker's socket."""

import json

import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from bp import protocol, schemas
from bp.errors import BPError
from broker.server import Broker
from tests import helpers
from tests.fuzz.strategies import hostile_text, json_values, nested

CODES = {"invalid_argument", "protocol_incompatible"}


def _parse(payload):
    """('ok', request) or ('error', envelope); anything else propagates and fails the test."""
    try:
        return "ok", Broker.parse(None, payload)
    except BPError as exc:
        assert exc.code in CODES, exc.envelope()
        return "error", exc.envelope()


def _encodes(reply):
    data = Broker.encode(reply)
    decoded = json.loads(data.decode("utf-8"))  # strict UTF-8
    assert isinstance(decoded, dict) and "ok" in decoded
    return decoded


def _deep_frame(depth):
    """A ping whose args nest `depth` levels (built as bytes: too deep for json.dumps)."""
    return _frame("ping", {"a": "DEEP"}).replace(b'"DEEP"', b"[" * depth + b"]" * depth)


def _frame(op, args, **extra):
    request, _ = protocol.encode_request(op, "fuzz-agent", {}, timeout_ms=5000)
    request["args"] = args
    request.update(extra)
    return json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_any_bytes(payload):
    kind, out = _parse(payload)
    if kind == "error":
        _encodes(out)


@settings(max_examples=120)
@given(json_values)
def test_any_json_document(value):
    kind, out = _parse(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if kind == "error":
        _encodes(out)


@settings(max_examples=50)
@given(st.integers(min_value=protocol.MAX_REQUEST_DEPTH - 2, max_value=3000))
def test_any_depth(depth):
    kind, out = _parse(_deep_frame(depth))
    if depth >= protocol.MAX_REQUEST_DEPTH:
        assert kind == "error" and out["context"]["field"] in ("request", "args")
    _encodes(out if kind == "error" else {"ok": True})


@settings(max_examples=150)
@given(st.sampled_from(sorted(schemas.ARGS_SCHEMAS)),
       st.dictionaries(st.one_of(hostile_text, st.sampled_from(
           ["url", "ref", "text", "limit", "selector", "pattern", "headers", "name", "value", "expression",
            "index", "targetId", "all", "type", "status", "body", "id", "browser", "profile", "key"])),
           json_values, max_size=5))
def test_every_args_schema(op, args):
    kind, out = _parse(_frame(op, args))
    if kind == "ok":
        json.dumps(out.args, ensure_ascii=False).encode("utf-8")  # what a handler gets encodes
    else:
        assert out["code"] == "invalid_argument"
        assert out["context"]["field"].startswith(("args", "request")), out
        _encodes(out)


@settings(max_examples=60)
@given(json_values, hostile_text)
def test_encode_never_raises(value, message):
    _encodes({"ok": True, "value": value})
    _encodes({"ok": False, "code": "internal_error", "error": message, "retryable": False, "context": {"v": value}})


def test_encode_of_a_reply_too_deep_to_encode_is_a_failure_reply():
    assert _encodes({"ok": True, "value": nested(5000)})["code"] == "internal_error"


@settings(max_examples=20)
@given(st.lists(hostile_text, min_size=1, max_size=3), st.integers(min_value=0, max_value=10))
def test_sizes(keys, repeat):
    big = {key * (repeat * 1000 + 1): 1 for key in keys}
    kind, out = _parse(_frame("ping", big))
    assert kind == "error"
    assert len(_encodes(out)["error"]) < 2000


@pytest.mark.chromium
def test_a_real_broker_answers_every_generated_frame(home, connected):
    with helpers.broker_socket(home, zmq.DEALER) as sock:

        @settings(max_examples=60)
        @given(st.one_of(st.binary(max_size=200),
                         json_values.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),
                         st.tuples(st.sampled_from(sorted(schemas.ARGS_SCHEMAS)), st.dictionaries(
                             hostile_text, json_values, max_size=3)).map(lambda t: _frame(*t)),
                         st.integers(min_value=10, max_value=5000).map(_deep_frame)))
        def answered(payload):
            sock.send_multipart([b"", payload])
            assert sock.poll(15000), f"no answer to {payload[:200]!r}"
            reply = json.loads(sock.recv_multipart()[-1].decode("utf-8"))
            assert "ok" in reply

        answered()
    assert helpers.bp(home, "status", env=connected).rc == 0
    assert len(helpers.brokers_of(home)) == 1
