"""The private CLI <-> broker message protocol: operation names, limits, identities.

A request is one JSON object:
    {"v": [major, minor], "op": "connect", "client": "<agent key>", "requestId": "..."?,
     "commandId": "...", "timeoutMs": 60000, "args": {...}, "installation": {...}?}
A reply is exactly the public result (`ok: true, ...`) or failure envelope (`ok: false, ...`).
Stdlib only: the CLI builds requests on every call; the broker validates them with the
marshmallow schemas in bp.schemas.
"""

import os

# Operation names, OPERATIONS and MUTATING come from the operation table (bp/ops.py), re-exported
# here for the senders and servers that name them as protocol.OP_*.
from bp.ops import MUTATING, OPERATIONS  # noqa: F401
from bp.ops import *  # noqa: F401,F403  (the OP_* names)

TYPE_CHECKING = False  # typing is never imported at run time (the CLI's every call): annotations are strings
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

PROTOCOL = (1, 0)  # (major, minor) this package speaks
PROTOCOL_MIN = (1, 0)  # oldest minor the broker still serves
PROTOCOL_RANGE = {"min": {"major": PROTOCOL_MIN[0], "minor": PROTOCOL_MIN[1]},
                  "max": {"major": PROTOCOL[0], "minor": PROTOCOL[1]}}

MAX_REQUEST_BYTES = 1024 * 1024  # checked before parsing, on the broker
MAX_REQUEST_DEPTH = 16  # nesting of a request's JSON (the deepest real one, a headers rule, is 4)
# Frames above these sizes are refused by ZeroMQ before allocation (ZMQ_MAXMSGSIZE): the peer is
# dropped. Between MAX_REQUEST_BYTES and the frame limit a request still gets its invalid_argument.
MAX_REQUEST_FRAME = 2 * MAX_REQUEST_BYTES
MAX_REPLY_BYTES = 32 * 1024 * 1024  # checked before parsing, on the CLI

DEFAULT_CLIENT_KEY = "browser-pilot-cli"
# A client key and a request id: a letter or digit, then letters, digits and . _ : -. The CLI's
# every step checks them with client_key_ok / request_id_ok (no `re` import); the schemas and
# click read the patterns as CLIENT_KEY_RE / REQUEST_ID_RE, compiled when first asked for.
_PATTERNS = {"CLIENT_KEY_RE": r"^[A-Za-z0-9][A-Za-z0-9._:-]{2,127}\Z",
             "REQUEST_ID_RE": r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z"}
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_KEY_CHARS = _ALNUM | frozenset("._:-")


def _shaped(text: "object", shortest: "int") -> "bool":
    return isinstance(text, str) and shortest <= len(text) <= 128 and text[0] in _ALNUM and _KEY_CHARS.issuperset(text)


def client_key_ok(text: "object") -> "bool":
    return _shaped(text, 3)


def request_id_ok(text: "object") -> "bool":
    return _shaped(text, 1)


def __getattr__(name: "str") -> "Any":
    if name in _PATTERNS:
        import re

        compiled = globals()[name] = re.compile(_PATTERNS[name])
        return compiled
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
TIMEOUT_MIN_MS, TIMEOUT_MAX_MS, TIMEOUT_DEFAULT_MS = 1, 300_000, 60_000
WAIT_TIMEOUT_DEFAULT_MS = 30_000  # `bp wait` without --timeout: a condition not met in 30 s rarely comes later

# The roles an observation gives elements (broker/scripts/observe.js), for `bp snapshot --role`.
# What an element's `haspopup` says it opens (aria-haspopup's tokens; "true" is a menu).
HASPOPUP = ("menu", "listbox", "tree", "grid", "dialog")
ELEMENT_ROLES = ("button", "link", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio",
                 "spinbutton", "slider", "switch", "menuitem", "menuitemcheckbox", "menuitemradio", "tab",
                 "option", "treeitem", "row", "gridcell", "columnheader", "rowheader")
MAX_GREP = 1000  # characters of `bp snapshot --grep` text
# Ref numbers are never reused within a document (broker/observe/snapshot.py), so they may pass the
# 10,000 elements one observation lists.
MAX_REF = 1_000_000

# How long a CLI waits for a broker that should answer at once before calling it unresponsive.
HEALTH_WAIT_MS = 2_000
# Extra CLI-side wait beyond the command's own deadline, for the reply to travel back.
REPLY_MARGIN_MS = 3_000

def canonical_json(value: "Any") -> "str":
    import json  # only with --request-id

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def command_id(client: "str", op: "str", args: "dict[str, Any]", request_id: "str | None" = None) -> "str":
    """Deterministic from the intended call when a request id is given (so a retry from a new
    process finds the same record), random otherwise. Never from anything per process."""
    if request_id is None:
        return "cmd-" + os.urandom(16).hex()
    import hashlib  # only with --request-id: keep it off the common path

    material = "\0".join((client, request_id, op, canonical_json(args))).encode()
    return "cmd-" + hashlib.sha256(material).hexdigest()[:32]


def encode_request(op: "str", client: "str", args: "dict[str, Any]", *, timeout_ms: "int",
                   request_id: "str | None" = None, command: "str | None" = None,
                   installation: "dict[str, Any] | None" = None) -> "tuple[dict[str, Any], bytes]":
    request: dict[str, Any] = {"v": list(PROTOCOL), "op": op, "client": client, "timeoutMs": timeout_ms,
                                 "args": args, "commandId": command or command_id(client, op, args, request_id)}
    if request_id is not None:
        request["requestId"] = request_id
    if installation is not None:
        request["installation"] = installation
    from bp import wirejson

    return request, wirejson.dumps(request).encode()


def compatible(version: "Sequence[int]") -> "bool":
    """Whether this package's broker can serve a request of protocol `version` (major, minor)."""
    return version[0] == PROTOCOL[0] and PROTOCOL_MIN <= tuple(version) <= PROTOCOL
