"""The `bp` entry point: an Agent's everyday step without importing click.

An Agent runs `bp snapshot`, `bp click 7`, `bp type 3 "text"` … once per step, and importing
click costs more than the broker's own work for a click and its observation. So the common
forms of the hot commands are read here by a small parser, and everything else — any other
command, `--help`, `--human` or a terminal on stdout, an option spelling not in the command's
table, anything that would be an error — goes to the full click application (cli/main.py),
which owns every message and error. The options and arguments, and each command's request
builder, come from cli/fast_table.py, generated from the commands themselves (python
scripts/fast_table_gen.py): the builder is the very function the click command calls. The rule
that keeps the two in step: this parser accepts a subset of what click accepts, and the same
builder makes the request (tests/unit/test_fast_path.py checks that against the click commands,
on argv generated from their declarations).
"""

import os
import re
import sys

from bp import protocol
from cli.build import Refused, Values

# ASCII only: anything else ('١', '１', '+5', ' 5', '1e3') is click's to judge
_INT = re.compile(r"[0-9]{1,7}\Z")
_FLOAT = re.compile(r"[0-9]{1,7}(\.[0-9]{1,6})?\Z")
_ATTRIBUTE_NAME = re.compile(r"^[A-Za-z_:][-A-Za-z0-9_:.]{0,127}$")  # cli.commands.page.ATTRIBUTE_NAME
_GLOBALS = {"--client-key": "client_key", "--request-id": "request_id", "--timeout": "timeout"}


def _number(text, bounds):
    if text is None or not _INT.match(text):
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


_NOT_TAKEN = object()  # a value the fast path does not take: click's to judge


def _convert(kind, text):
    """A parameter's value as click's type would make it, or _NOT_TAKEN."""
    if kind[0] == "str":
        return text
    if kind[0] == "int":
        value = _number(text, (kind[1], kind[2]))
        return _NOT_TAKEN if value is None else value
    if kind[0] == "float" and _FLOAT.match(text):
        value, low, high, low_open, high_open = float(text), kind[1], kind[2], kind[3], kind[4]
        if low is not None and (value <= low if low_open else value < low):
            return _NOT_TAKEN
        if high is not None and (value >= high if high_open else value > high):
            return _NOT_TAKEN
        return value
    if kind[0] == "choice" and text in kind[1]:
        return text
    return _NOT_TAKEN


def _attributes(value):
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names or len(names) > 20 or not all(_ATTRIBUTE_NAME.match(name) for name in names):
        return _NOT_TAKEN
    return names


def _combo(value):
    from bp import keys

    try:
        keys.parse(value)
    except keys.KeyError_:
        return _NOT_TAKEN
    return value


# The click callbacks the fast path repeats; a parameter with any other callback is click's.
_CALLBACKS = {"_attributes": _attributes, "_combo": _combo}


def _values(params, argv):
    """The command's parameter values as click would pass them (defaults filled in), or None on
    anything this parser does not take: a repeated option, `--`, a token that looks like an
    option where a value or argument is due, a value outside its type."""
    options = {spelling: param for param in params if param[0] == "option" for spelling in param[2]}
    arguments = [param for param in params if param[0] == "argument"]
    given, positionals = {}, []
    tokens = iter(argv)
    for token in tokens:
        spelling, text = token, None
        if token.startswith("--") and "=" in token:
            spelling, text = token.split("=", 1)
        if spelling in options:
            param = options[spelling]
            if param[1] in given:
                return None
            if param[3] == ("flag",):
                if text is not None:
                    return None
                given[param[1]] = True
                continue
            if text is None:
                text = next(tokens, None)
                if text is None or text.startswith("-"):
                    return None
            given[param[1]] = (param, text)
        elif token.startswith("-"):
            return None
        else:
            positionals.append(token)
    if len(positionals) > len(arguments):
        return None
    for param, text in zip(arguments, positionals):
        given[param[1]] = (param, text)
    values = Values(given=given)
    for param in params:
        kind, name, _, type_, default, required, callback = param
        if name not in given:
            if required:
                return None
            values[name] = default
            continue
        if given[name] is True:
            values[name] = True
            continue
        value = _convert(type_, given[name][1])
        if value is not _NOT_TAKEN and callback is not None:
            value = _CALLBACKS[callback](value) if callback in _CALLBACKS else _NOT_TAKEN
        if value is _NOT_TAKEN:
            return None
        values[name] = value
    return values


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
    from cli.fast_table import BUILDERS, COMMANDS

    if index >= len(argv) or argv[index] not in BUILDERS:
        return None
    if not json_forced and _tty(sys.stdout):
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
    values = _values(COMMANDS[command], argv[index + 1:])
    if values is None or dict.get(values, "text") == "-":
        return None  # ('-': the text is on stdin, which click reads)
    op, build = BUILDERS[command]
    try:
        args = build(values)
    except Refused:
        return None  # the command refuses this argv: click reports it in its words
    except Exception as exc:
        from bp.errors import BPError  # (imported only on a refusal)

        if isinstance(exc, BPError):
            return None
        raise
    if command == "wait":  # as cli/commands/wait.py: its own --timeout, else the global one, else 30 s
        if _tty(sys.stderr):
            return None  # a person at a terminal gets click's progress line
        if values["timeout_ms"] is not None:
            timeout_ms = values["timeout_ms"]
        elif settings["timeout"] is None:
            timeout_ms = protocol.WAIT_TIMEOUT_DEFAULT_MS
    if values.unread():
        return None
    fields = {"client_key": settings["client_key"], "request_id": settings["request_id"], "timeout_ms": timeout_ms}
    return fields, op, args


def _tty(stream):
    try:
        return os.isatty(stream.fileno())
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
        reply = client.call(settings, op, args)
        if op == protocol.OP_WAIT and reply.get("code") == "wait_timeout" and not reply.get("hint"):
            reply["hint"] = f"Waited {settings.timeout_ms} ms; give 'bp wait ... --timeout MS' to wait longer."
        finish(reply)
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
