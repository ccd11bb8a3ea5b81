"""The `bp` entry point: an Agent's everyday step without importing click.

An Agent runs `bp snapshot`, `bp click 7`, `bp type 3 "text"` … once per step, and importing
click costs more than the broker's own work for a click and its observation. So the common
forms of the hot commands are read here by a small parser, and everything else — any other
command, `--help`, `--human` or a terminal on stdout, an option spelling not listed below,
anything that would be an error — goes to the full click application (cli/main.py), which
owns every message and error. The rule that keeps the two in step: this parser accepts a
subset of what click accepts and builds the same request from it (tests/unit/test_fast_path.py
checks that against the click commands, argv by argv).
"""

import os
import re
import sys

from bp import protocol

_DIGITS = re.compile(r"[0-9]{1,6}\Z")  # ASCII only: anything else is click's to judge
LIMIT_RANGE = (1, 10000)
REF_RANGE = (1, 10000)

# command -> (operation, option spellings -> (option name, takes a value), positionals)
_COMMANDS = {
    "status": (protocol.OP_STATUS, {}, ()),
    "tabs": (protocol.OP_TABS, {}, ()),
    "snapshot": (protocol.OP_SNAPSHOT, {"-l": ("limit", True), "--limit": ("limit", True),
                                        "--diff": ("diff", False)}, ()),
    "click": (protocol.OP_CLICK, {"-l": ("limit", True), "--limit": ("limit", True),
                                  "--double": ("double", False), "--right": ("right", False)}, ("ref",)),
    "hover": (protocol.OP_HOVER, {"-l": ("limit", True), "--limit": ("limit", True)}, ("ref",)),
    "type": (protocol.OP_TYPE, {"-l": ("limit", True), "--limit": ("limit", True),
                                "-c": ("clear", False), "--clear": ("clear", False),
                                "-s": ("submit", False), "--submit": ("submit", False)}, ("ref", "text")),
    "press": (protocol.OP_PRESS, {"-l": ("limit", True), "--limit": ("limit", True)}, ("key",)),
}
_GLOBALS = {"--client-key": "client_key", "--request-id": "request_id", "--timeout": "timeout"}


def _number(text, bounds):
    if text is None or not _DIGITS.match(text):
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


def _split(argv, spellings):
    """Options (by spelling, `--name=value` included) and positionals, or None on anything this
    parser does not take: a repeated option, `--`, a positional that looks like an option."""
    options, positionals = {}, []
    tokens = iter(argv)
    for token in tokens:
        name, value = token, None
        if token.startswith("--") and "=" in token:
            name, value = token.split("=", 1)
        if name in spellings:
            key, takes_value = spellings[name]
            if key in options or (value is not None and not takes_value):
                return None
            if takes_value and value is None:
                value = next(tokens, None)
                if value is None or value.startswith("-"):
                    return None
            options[key] = value if takes_value else True
        elif token.startswith("-"):
            return None
        else:
            positionals.append(token)
    return options, positionals


def plan(argv, environ=os.environ):
    """(settings fields, op, args) for an argv this path serves, else None. How the call waits
    is the operation's own (bp/ops.py), as for every command."""
    for token in argv:
        token.encode("utf-8")  # undecodable bytes (surrogate escapes) raise: click's to report
    settings = {"client_key": environ.get("BROWSER_PILOT_CLIENT_KEY", protocol.DEFAULT_CLIENT_KEY),
                "request_id": environ.get("BROWSER_PILOT_REQUEST_ID"), "timeout": None}
    json_forced = False
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        token = argv[index]
        name, value = (token.split("=", 1) + [None])[:2] if token.startswith("--") else (token, None)
        if name == "--json" and value is None:
            json_forced = True
        elif name in _GLOBALS:
            if value is None:
                index += 1
                if index >= len(argv) or argv[index].startswith("-"):
                    return None
                value = argv[index]
            settings[_GLOBALS[name]] = value
        else:
            return None  # --human, --version, --help, -x …: click's
        index += 1
    if index >= len(argv) or argv[index] not in _COMMANDS:
        return None
    if not json_forced and _tty():
        return None  # people at a terminal get click's readable rendering
    if not protocol.CLIENT_KEY_RE.match(settings["client_key"] or ""):
        return None
    if settings["request_id"] is not None and not protocol.REQUEST_ID_RE.match(settings["request_id"]):
        return None
    timeout_ms = protocol.TIMEOUT_DEFAULT_MS
    if settings["timeout"] is not None:
        timeout_ms = _number(settings["timeout"], (protocol.TIMEOUT_MIN_MS, protocol.TIMEOUT_MAX_MS))
        if timeout_ms is None:
            return None
    command = argv[index]
    op, spellings, wanted = _COMMANDS[command]
    split = _split(argv[index + 1:], spellings)
    if split is None:
        return None
    options, positionals = split
    if len(positionals) != len(wanted):
        return None
    args = _ARGS[command](options, dict(zip(wanted, positionals)))
    if args is None:
        return None
    fields = {"client_key": settings["client_key"], "request_id": settings["request_id"], "timeout_ms": timeout_ms}
    return fields, op, args


def _limit(options, args):
    limit = _number(options.get("limit", "50"), LIMIT_RANGE)
    if limit is None:
        return None
    args["limit"] = limit
    return args


def _with_ref(options, given, args):
    ref = _number(given["ref"], REF_RANGE)
    if ref is None:
        return None
    return _limit(options, dict(args, ref=ref))


def _snapshot(options, given):
    args = _limit(options, {})
    if args is not None and options.get("diff"):
        args["diff"] = True
    return args


def _click(options, given):
    if options.get("double") and options.get("right"):
        return None
    args = _with_ref(options, given, {})
    if args is None:
        return None
    if options.get("right"):
        args["button"] = "right"
    if options.get("double"):
        args["clickCount"] = 2
    return args


def _type(options, given):
    text = given["text"]
    if text == "-" or len(text) > 100_000:
        return None  # stdin and oversized text: click's (it reads and bounds them)
    args = _with_ref(options, given, {"text": text})
    if args is None:
        return None
    for flag in ("clear", "submit"):
        if options.get(flag):
            args[flag] = True
    return args


def _press(options, given):
    from bp import keys

    try:
        keys.parse(given["key"])
    except keys.KeyError_:
        return None
    args = _limit(options, {"key": given["key"]})
    return args


_ARGS = {
    "status": lambda options, given: {},
    "tabs": lambda options, given: {},
    "snapshot": _snapshot,
    "click": _click,
    "hover": lambda options, given: _with_ref(options, given, {}),
    "type": _type,
    "press": _press,
}


def _tty():
    try:
        return os.isatty(sys.stdout.fileno())
    except (AttributeError, ValueError, OSError):
        return False


def main():
    argv = sys.argv[1:]
    if "_BP_COMPLETE" in os.environ:
        planned = None  # shell completion (bp completion): click's own machinery answers
    else:
        try:
            planned = plan(argv)
        except UnicodeError:
            planned = None
    if planned is None:
        from cli.main import main as full

        return full()
    return run(*planned)


def run(fields, op, args):
    from bp import ops
    from bp.errors import BPError, failure
    from cli import client, signals
    from cli.output import Mode, finish

    Mode.forced = "json"
    settings = client.Settings(**fields)
    try:
        if op == protocol.OP_STATUS:
            return _status(settings)
        if ops.OPS[op].long:
            signals.install()  # a long wait is cancellable, as in the click commands
        finish(client.call(settings, op, args))
    except BPError as exc:
        finish(exc.envelope(), exit_code=getattr(exc, "exit_code", None))
    except signals.Interrupted as exc:
        finish(failure("command_cancelled", "Interrupted before the request was sent."), exit_code=exc.exit_code)
    except Exception as exc:  # the last line of defence, as in cli.main: a code, never a traceback
        finish(failure("internal_error", f"Unexpected failure: {type(exc).__name__}"))


def _status(settings):
    """The running broker's own answer; anything else (stopped, silent) is the full status's."""
    from bp import paths
    from bp.errors import BPError
    from cli import client
    from cli.output import finish

    if client.broker_running(paths.home()):
        try:
            reply = client.call(settings, protocol.OP_STATUS, {})
        except BPError as exc:
            from cli.commands import setup

            setup.report_status(settings, failure=exc)
        else:
            finish(reply)
    from cli.commands import setup

    setup.report_status(settings)
