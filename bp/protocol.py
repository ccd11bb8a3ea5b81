"""The private CLI <-> broker message protocol: operation names, limits, identities.

A request is one JSON object:
    {"v": [major, minor], "op": "connect", "client": "<agent key>", "requestId": "..."?,
     "commandId": "...", "timeoutMs": 60000, "args": {...}, "installation": {...}?}
A reply is exactly the public result (`ok: true, ...`) or failure envelope (`ok: false, ...`).
Stdlib only: the CLI builds requests on every call; the broker validates them with the
marshmallow schemas in bp.schemas.
"""

import json
import os
import re

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
CLIENT_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{2,127}$")
REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
TIMEOUT_MIN_MS, TIMEOUT_MAX_MS, TIMEOUT_DEFAULT_MS = 1, 300_000, 60_000

# How long a CLI waits for a broker that should answer at once before calling it unresponsive.
HEALTH_WAIT_MS = 2_000
# Extra CLI-side wait beyond the command's own deadline, for the reply to travel back.
REPLY_MARGIN_MS = 3_000

# Operation names. cli/commands/<family>.py sends them, broker/handlers/<family>.py serves them.
OP_PING = "ping"
OP_STATUS = "status"
OP_BROWSERS = "browsers"
OP_CONNECT = "connect"
OP_DISCONNECT = "disconnect"
OP_TABS = "tabs"
OP_TAB = "tab"
OP_OPEN = "open"
OP_CLOSE = "close"
OP_PROFILES = "profiles"
OP_PROFILE = "profile"
OP_SNAPSHOT = "snapshot"
OP_CLICK = "click"
OP_TYPE = "type"
OP_KEYBOARD = "keyboard"
OP_PRESS = "press"
OP_HOVER = "hover"
OP_SCROLL = "scroll"
OP_DROPDOWN = "dropdown"
OP_SELECT = "select"
OP_EVAL = "eval"
OP_FRAME = "frame"
OP_READ = "read"
OP_SEARCH = "search"
OP_FIND = "find"
OP_LOCATE = "locate"
OP_WAIT = "wait"
OP_DIALOGS = "dialogs"
OP_DIALOG = "dialog"
OP_COMMANDS = "commands"
OP_COMMAND = "command"
OP_CANCEL = "cancel"
OP_SCREENSHOT = "screenshot"
OP_PDF = "pdf"
OP_DOWNLOADS = "downloads"
OP_DOWNLOAD = "download"
OP_UPLOAD = "upload"
OP_NET = "net.requests"
OP_NET_SHOW = "net.show"
OP_NET_CLEAR = "net.clear"
OP_NET_RULE_ADD = "net.rules.add"
OP_NET_RULES = "net.rules.list"
OP_NET_RULE_REMOVE = "net.rules.remove"
OP_COOKIES = "cookies.list"
OP_COOKIE_SET = "cookies.set"
OP_COOKIE_DELETE = "cookies.delete"
OP_AUTH_SET = "auth.set"
OP_AUTH_CLEAR = "auth.clear"
OP_CONSOLE = "console"
OP_ERRORS = "errors"

OPERATIONS = (OP_PING, OP_STATUS, OP_BROWSERS, OP_CONNECT, OP_DISCONNECT,
              OP_TABS, OP_TAB, OP_OPEN, OP_CLOSE, OP_PROFILES, OP_PROFILE, OP_SNAPSHOT, OP_CLICK, OP_TYPE,
              OP_KEYBOARD, OP_PRESS, OP_HOVER, OP_SCROLL, OP_DROPDOWN, OP_SELECT, OP_EVAL,
              OP_FRAME, OP_READ, OP_SEARCH, OP_FIND, OP_LOCATE, OP_COMMANDS, OP_COMMAND, OP_CANCEL,
              OP_WAIT, OP_DIALOGS, OP_DIALOG, OP_SCREENSHOT, OP_PDF, OP_DOWNLOADS, OP_DOWNLOAD, OP_UPLOAD,
              OP_NET, OP_NET_SHOW, OP_NET_CLEAR, OP_NET_RULE_ADD, OP_NET_RULES, OP_NET_RULE_REMOVE,
              OP_COOKIES, OP_COOKIE_SET, OP_COOKIE_DELETE, OP_AUTH_SET, OP_AUTH_CLEAR, OP_CONSOLE, OP_ERRORS)
# Operations that may change the browser or broker state: a CLI-side timeout is unknown_outcome.
MUTATING = frozenset({OP_CONNECT, OP_DISCONNECT, OP_OPEN, OP_CLOSE, OP_PROFILES, OP_CLICK, OP_TYPE,
                      OP_KEYBOARD, OP_PRESS, OP_HOVER, OP_SCROLL, OP_SELECT, OP_EVAL, OP_DIALOG,
                      OP_SCREENSHOT, OP_PDF, OP_DOWNLOAD, OP_UPLOAD,  # files: a file may have been written
                      OP_NET_SHOW,  # with --save it writes a file
                      OP_NET_CLEAR, OP_NET_RULE_ADD, OP_NET_RULE_REMOVE, OP_COOKIE_SET, OP_COOKIE_DELETE,
                      OP_AUTH_SET, OP_AUTH_CLEAR})


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def command_id(client, op, args, request_id=None):
    """Deterministic from the intended call when a request id is given (so a retry from a new
    process finds the same record), random otherwise. Never from anything per process."""
    if request_id is None:
        return "cmd-" + os.urandom(16).hex()
    import hashlib  # only with --request-id: keep it off the common path

    material = "\0".join((client, request_id, op, canonical_json(args))).encode()
    return "cmd-" + hashlib.sha256(material).hexdigest()[:32]


def encode_request(op, client, args, *, timeout_ms, request_id=None, command=None, installation=None):
    request = {"v": list(PROTOCOL), "op": op, "client": client, "timeoutMs": timeout_ms, "args": args,
               "commandId": command or command_id(client, op, args, request_id)}
    if request_id is not None:
        request["requestId"] = request_id
    if installation is not None:
        request["installation"] = installation
    return request, json.dumps(request, separators=(",", ":")).encode()


def compatible(version):
    """Whether this package's broker can serve a request of protocol `version` (major, minor)."""
    return version[0] == PROTOCOL[0] and PROTOCOL_MIN <= tuple(version) <= PROTOCOL
