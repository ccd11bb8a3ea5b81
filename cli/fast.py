"""The `bp` entry point: an Agent's everyday step without importing click.

An Agent runs `bp snapshot`, `bp click 7`, `bp type 3 "text"` … once per step, and importing
click costs more than the broker's own work for a click and its observation. So the common
forms of the hot commands are read here by a small parser, and everything else — any other
command, `--help`, `--human` or a terminal on stdout, an option spelling not in the command's
table, anything that would be an error — goes to the full click application (cli/main.py),
which owns every message and error. The options and arguments come from the commands' own
declarations (cli/declare.py: click's decorators, recorded, so reading them imports no click),
and the request from the command's builder beside them: the very function the click command
calls. The rule that keeps the two in step: this parser accepts a subset of what click accepts,
and the same builder makes the request (tests/unit/test_fast_path.py checks that against the
click commands, on argv generated from their declarations).
"""

import os
import sys

from bp import protocol
from cli.build import Refused, Values
from cli.declare import IntRange

TYPE_CHECKING = False  # typing is never imported at run time
if TYPE_CHECKING:
    from typing import NoReturn

_GLOBALS = {"--client-key": "client_key", "--request-id": "request_id", "--timeout": "timeout"}
_TIMEOUT = IntRange(protocol.TIMEOUT_MIN_MS, protocol.TIMEOUT_MAX_MS)


def _take(param, text):
    """The parameter's value as click would make it (its type, then its callback), or None: a
    value the fast path leaves to click."""
    value = param.type.take(text)
    if value is None or param.callback is None:
        return value
    try:
        return param.callback(None, param, value)
    except Refused:
        return None


def _values(params, argv):
    """The command's parameter values as click would pass them (defaults filled in), or None on
    anything this parser does not take: a repeated option, `--`, a token that looks like an
    option where a value or argument is due, a value outside its type."""
    if not all(param.fast for param in params):
        return None  # a parameter the fast path does not model (cli/declare.py Param.fast)
    options = {spelling: param for param in params if param.kind == "option" for spelling in param.spellings}
    arguments = [param for param in params if param.kind == "argument"]
    given, positionals = {}, []
    tokens = iter(argv)
    for token in tokens:
        spelling, text = token, None
        if token.startswith("--") and "=" in token:
            spelling, text = token.split("=", 1)
        if spelling in options:
            param = options[spelling]
            if param.name in given:
                return None
            if param.is_flag:
                if text is not None:
                    return None
                given[param.name] = True
                continue
            if text is None:
                text = next(tokens, None)
                if text is None or text.startswith("-"):
                    return None
            given[param.name] = text
        elif token.startswith("-"):
            return None
        else:
            positionals.append(token)
    if len(positionals) > len(arguments):
        return None
    for param, text in zip(arguments, positionals):
        given[param.name] = text
    values = Values(given=given)
    for param in params:
        if param.name not in given:
            if param.required:
                return None
            values[param.name] = param.default
        elif param.is_flag:
            values[param.name] = True
        else:
            value = _take(param, given[param.name])
            if value is None:
                return None
            values[param.name] = value
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
    from cli.table import COMMANDS

    row = COMMANDS.get(argv[index]) if index < len(argv) else None
    if row is None or row.request is None:  # not a hot command
        return None
    if not json_forced and _tty(sys.stdout):
        return None  # people at a terminal get click's readable rendering
    if not protocol.client_key_ok(settings["client_key"] or ""):
        return None
    if settings["request_id"] is not None and not protocol.request_id_ok(settings["request_id"]):
        return None
    timeout_ms = protocol.TIMEOUT_DEFAULT_MS
    if settings["timeout"] is not None:
        timeout_ms = _TIMEOUT.take(settings["timeout"])
        if timeout_ms is None:
            return None
    module = __import__(row.module, fromlist=[row.function])
    values = _values(getattr(module, row.function).params, argv[index + 1:])
    if values is None or dict.get(values, "text") == "-":
        return None  # ('-': the text is on stdin, which click reads)
    try:
        args = getattr(module, row.request)(values)
    except Refused:
        return None  # the command refuses this argv: click reports it in its words
    except Exception as exc:
        from bp.errors import BPError  # (imported only on a refusal)

        if isinstance(exc, BPError):
            return None
        raise
    if row.name == "wait":  # as cli/commands/wait.py: its own --timeout, else the global one, else 30 s
        if _tty(sys.stderr):
            return None  # a person at a terminal gets click's progress line
        if values["timeout_ms"] is not None:
            timeout_ms = values["timeout_ms"]
        elif settings["timeout"] is None:
            timeout_ms = protocol.WAIT_TIMEOUT_DEFAULT_MS
    if values.unread():
        return None
    fields = {"client_key": settings["client_key"], "request_id": settings["request_id"], "timeout_ms": timeout_ms}
    return fields, row.op, args


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
        reply = client.call(settings, op, args, raw=not Mode.fenced())
        if isinstance(reply, bytes):
            _print_as_it_came(reply)
        if op == protocol.OP_WAIT and reply.get("code") == "wait_timeout" and not reply.get("hint"):
            reply["hint"] = f"Waited {settings.timeout_ms} ms; give 'bp wait ... --timeout MS' to wait longer."
        finish(reply)
    except BPError as exc:
        finish(exc.envelope(), exit_code=getattr(exc, "exit_code", None))
    except signals.Interrupted as exc:
        finish(failure("command_cancelled", "Interrupted before the request was sent."), exit_code=exc.exit_code)
    except Exception as exc:  # the last line of defence, as in cli.main: a code, never a traceback
        finish(failure("internal_error", f"Unexpected failure: {type(exc).__name__}"))


def _print_as_it_came(reply) -> "NoReturn":
    """A success exactly as the broker wrote it: the broker's compact JSON (bp/fastjson.py) is
    byte for byte what cli/output.py would print after parsing it, so neither is done here."""
    sys.stdout.buffer.write(reply + b"\n")
    sys.stdout.flush()
    os._exit(0)


def _status(settings):
    """The running broker's own answer; anything else (stopped, silent) is the full status's."""
    from bp import paths
    from bp.errors import BPError
    from cli import client
    from cli.output import Mode, finish

    if client.broker_running(paths.home()):
        try:
            reply = client.call(settings, protocol.OP_STATUS, {}, raw=not Mode.fenced())
            if isinstance(reply, bytes):
                _print_as_it_came(reply)
        except BPError as exc:
            from cli.commands import setup

            setup.report_status(settings, failure=exc)
        else:
            finish(reply)
    from cli.commands import setup

    setup.report_status(settings)
