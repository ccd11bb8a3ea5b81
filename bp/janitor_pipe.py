"""Messages on the private broker <-> janitor pipe (ZeroMQ PAIR over ipc, multipart frames).

Each message is [kind, payload]. CDP traffic travels as the raw JSON bytes Chrome sent or will
receive, so neither side re-encodes big payloads; the janitor only peeks at the head of a frame.

broker -> janitor
    cdp     raw CDP command bytes ({"id": < JANITOR_ID_BASE, "method", "params"?, "sessionId"?})
    call    JSON {"id": n, "method": "create" | "status" | "takeover", "params": {...}}
            takeover {"targetIds": [...]}: own a dead predecessor's targets, then close them
janitor -> broker
    ready   JSON {"product", "protocolVersion"}           handshake done, discovery on
    failed  JSON {"reason": "refused"|"timeout"|"rejected"|"error", "message"}   then exits
    cdp     raw CDP bytes from Chrome (replies to broker ids, and every event)
    result  JSON {"id": n, "result": {...}} | {"id": n, "error": {"code", "message"}}
    owned   JSON {"targetId", "openerId"?}                 a target the janitor will clean up
    log     JSON {"level", "message"}                      the janitor writes nothing to disk
    closed  JSON {"reason"}                                browser WebSocket lost; then exits
"""

from __future__ import annotations

import re

CDP = b"cdp"
CALL = b"call"
READY = b"ready"
FAILED = b"failed"
RESULT = b"result"
OWNED = b"owned"
LOG = b"log"
CLOSED = b"closed"

# Janitor's own CDP ids live above this; the broker's below.
JANITOR_ID_BASE = 1 << 30  # Chrome wants ids that fit a signed 32-bit int
MAX_BROKER_MESSAGE_BYTES = 64 * 1024 * 1024  # a file chooser payload may be large; still bounded
MAX_CALL_BYTES = 64 * 1024
# The most the janitor forwards of one CDP frame from Chrome; a larger reply becomes an error
# reply with the same id (the broker's call fails at once), a larger event is dropped.
MAX_CDP_FORWARD_BYTES = 64 * 1024 * 1024
JANITOR_METHODS = ("create", "status", "takeover")
# Events the broker never reads that a journaled tab sends in bulk (one per received chunk or
# frame): the janitor drops them instead of forwarding (broker/network/journal.py, "Cost decisions").
# Network.webSocketFrameSent passes: a frame the page sends after an action is one of its causes
# (broker/actions/settle.py); frames come from the page's own sends, so they are few.
DROPPED_EVENTS = frozenset({"Network.dataReceived", "Network.resourceChangedPriority",
                            "Network.webSocketFrameReceived",
                            "Network.eventSourceMessageReceived"})

# Chrome serialises replies as {"id":N,...} and events as {"method":"...",...}.
_HEAD_ID = re.compile(rb'^\s*\{\s*"id"\s*:\s*(\d{1,16})\s*,')
_HEAD_METHOD = re.compile(rb'^\s*\{\s*"method"\s*:\s*"([A-Za-z.]{1,80})"')


def peek_id(raw: bytes | bytearray | memoryview) -> int | None:
    match = _HEAD_ID.match(raw[:64])
    return int(match.group(1)) if match else None


def peek_method(raw: bytes | bytearray | memoryview) -> str | None:
    match = _HEAD_METHOD.match(raw[:128])
    return match.group(1).decode() if match else None
