"""The `bp` / `browser-pilot` click application.

Global options are declared once here and reach commands through the context object. Command
modules load lazily: `bp status` imports the setup family only, never the others.
"""

import sys

import click

import bp
from bp import protocol
from cli import table
from cli.client import Settings

# command name -> (module, attribute): from the command table, one module per command family.
COMMANDS = {row.name: (row.module, row.function) for row in table.TABLE}

# Shown under every command's own --help: global options go before the command.
GLOBAL_OPTIONS_EPILOG = (
    "\b\nGlobal options (before the command): --client-key KEY, --request-id ID, --timeout MS,"
    "\n--json, --human, --fence; see 'bp --help'."
)


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module_name, attr = COMMANDS[name]
        module = __import__(module_name, fromlist=[attr])
        command = getattr(module, attr)
        if hasattr(command, "click_command"):  # declared with cli.declare (a hot command's family)
            command = command.click_command()
        if command.epilog is None or GLOBAL_OPTIONS_EPILOG not in command.epilog:
            command.epilog = f"{command.epilog}\n\n{GLOBAL_OPTIONS_EPILOG}" if command.epilog else GLOBAL_OPTIONS_EPILOG
        return command


def _check(pattern, field, label):
    def validate(ctx, param, value):
        if value is not None and not pattern.match(value):
            raise click.BadParameter(f"{label} must match {pattern.pattern}", param=param)
        return value

    return validate


def _ascii_int(value):
    """int() also reads Unicode digits ('١', '１'); a number on Browser Pilot's command line is
    ASCII, so `bp click ١` is refused instead of clicking ref 1."""
    if isinstance(value, str) and not value.isascii():
        raise ValueError(value)
    return int(value, 10) if isinstance(value, str) else int(value)


# Every INTEGER / IntRange option and argument parses through click's IntParamType.
click.types.IntParamType._number_class = staticmethod(_ascii_int)


def _timeout(ctx, param, value):
    if value is None:
        return protocol.TIMEOUT_DEFAULT_MS
    try:
        number = _ascii_int(value)
    except ValueError:
        number = None
    if number is None or not protocol.TIMEOUT_MIN_MS <= number <= protocol.TIMEOUT_MAX_MS:
        raise click.BadParameter(f"must be an integer from {protocol.TIMEOUT_MIN_MS} to {protocol.TIMEOUT_MAX_MS} (ms)",
                                 param=param)
    return number


def _version(ctx, param, value):
    """Not eager, so that --json/--human (eager) are already applied: the plain version number
    when piped (what scripts compare), JSON with the protocol range under --json."""
    if not value or ctx.resilient_parsing:
        return
    from cli.output import Mode

    low, high = protocol.PROTOCOL_RANGE["min"], protocol.PROTOCOL_RANGE["max"]
    if Mode.forced == "json":
        import json

        click.echo(json.dumps({"ok": True, "version": bp.__version__, "protocol": protocol.PROTOCOL_RANGE},
                              separators=(",", ":")))
    elif Mode.human():
        click.echo(f"bp {bp.__version__} (protocol {low['major']}.{low['minor']}-{high['major']}.{high['minor']})")
    else:
        click.echo(bp.__version__)
    ctx.exit(0)


def _output_mode(ctx, param, value):
    if value is not None:
        from cli.output import Mode

        Mode.forced = value
    return value


def _fence(ctx, param, value):
    if value:
        from cli.output import Mode

        Mode.fence = True
    return value


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-V", "--version", is_flag=True, expose_value=False, callback=_version,
              help="Print the version (with --json: also the protocol range) and exit.")
@click.option("--json", "output", flag_value="json", default=None, is_eager=True, expose_value=False,
              callback=_output_mode, help="Print JSON even on a terminal.")
@click.option("--human", "output", flag_value="human", is_eager=True, expose_value=False,
              callback=_output_mode, help="Print readable text even when piped.")
@click.option("--fence", is_flag=True, default=None, is_eager=True, expose_value=False, callback=_fence,
              help="Wrap page text in a per-call random boundary (env BROWSER_PILOT_FENCE=1).")
@click.option("--client-key", envvar="BROWSER_PILOT_CLIENT_KEY", default=protocol.DEFAULT_CLIENT_KEY,
              show_default=True, metavar="KEY",
              callback=_check(protocol.CLIENT_KEY_RE, "clientKey", "client key"),
              help="This Agent's namespace: one stable key per Agent (env BROWSER_PILOT_CLIENT_KEY).")
@click.option("--request-id", envvar="BROWSER_PILOT_REQUEST_ID", default=None, metavar="ID",
              callback=_check(protocol.REQUEST_ID_RE, "requestId", "request id"),
              help="Stable identity of one intended call, for safe recovery (env BROWSER_PILOT_REQUEST_ID).")
@click.option("--timeout", "timeout_ms", default=None, metavar="MS", callback=_timeout,
              help="Deadline of this command in milliseconds (1-300000, default 60000; bp wait: 30000).")
@click.pass_context
def cli(ctx, client_key, request_id, timeout_ms):
    """Browser Pilot: drive your real Chrome from the shell, safely beside you and other Agents.

    \b
    Start:  bp launch --headless && bp connect --browser launched
    Check:  bp status
    Done:   bp disconnect
    """
    given = ctx.get_parameter_source("timeout_ms") is not click.core.ParameterSource.DEFAULT
    ctx.obj = Settings(client_key, request_id, timeout_ms, timeout_given=given)


# click parameter names -> the contract's camelCase `context.field`
_FIELD_NAMES = {"client_key": "clientKey", "request_id": "requestId", "timeout_ms": "timeout"}


def _field_for(exc):
    param = getattr(exc, "param", None)
    if param is not None and param.name:
        return _FIELD_NAMES.get(param.name, param.name)
    option = getattr(exc, "option_name", None)  # NoSuchOption, BadOptionUsage
    if option:
        name = option.lstrip("-").replace("-", "_")
        return _FIELD_NAMES.get(name, name) or "option"
    if "No such command" in exc.format_message():
        return "command"
    return "arguments"


def _parser_code(exc):
    if isinstance(exc, click.NoSuchOption):
        return "unknown_option"
    if isinstance(exc, click.MissingParameter):
        return "missing_argument"
    if isinstance(exc, click.BadParameter):
        return "invalid_value"
    if isinstance(exc, click.BadOptionUsage):
        return "missing_option_value"
    message = exc.format_message()
    if "No such command" in message:
        return "unknown_command"
    if "unexpected extra argument" in message:
        return "unexpected_argument"
    return "usage"


def main(argv=None):
    from cli.output import finish

    from bp import text

    # Undecodable argv bytes arrive surrogate-escaped; as U+FFFD they can travel as UTF-8.
    argv = text.clean_argv(sys.argv[1:] if argv is None else argv)
    try:
        cli.main(args=argv, prog_name="bp", standalone_mode=False)
    except click.UsageError as exc:
        from bp.errors import failure

        finish(failure("invalid_argument", exc.format_message(),
                       context={"field": _field_for(exc), "parserCode": _parser_code(exc)}))
    except click.exceptions.Exit as exc:
        sys.stdout.flush()
        sys.exit(exc.exit_code)
    except click.Abort:
        from bp.errors import failure

        finish(failure("command_cancelled", "Interrupted."), exit_code=130)
    except click.ClickException as exc:
        from bp.errors import failure

        finish(failure("invalid_argument", exc.format_message(), context={"field": "arguments"}))
    except Exception as exc:  # the last line of defence: a code, never a traceback
        from bp.errors import BPError, failure
        from cli.signals import Interrupted

        if isinstance(exc, Interrupted):  # before the request reached the broker: nothing happened
            finish(failure("command_cancelled", "Interrupted before the request was sent."), exit_code=exc.exit_code)
        if isinstance(exc, BPError):
            finish(exc.envelope(), exit_code=getattr(exc, "exit_code", None))
        finish(failure("internal_error", f"Unexpected failure: {type(exc).__name__}"))
    sys.stdout.flush()
    sys.exit(0)  # --help and friends
