"""bp batch: several steps in the CLI's own vocabulary, run in order on the selected tab.

Each step is parsed by the very click command it names (so it takes exactly the arguments and
options that command takes on the command line) with the broker call captured instead of sent;
the broker runs the captured requests (broker/commands/batch.py, the same operation names).
"""

import json
import sys

import click

from bp import protocol
from bp.errors import BPError, invalid_argument
from cli import client, render, signals, table
from cli.output import escape, finish

MAX_STEPS = 50
MAX_BATCH_BYTES = 1_000_000
# The commands a step may name (the command table's `step` rows): they act on, or read, the selected tab.
STEP_COMMANDS = table.STEPS


class _Captured(Exception):
    def __init__(self, op, args, timeout_ms):
        super().__init__(op)
        self.op, self.request_args, self.timeout_ms = op, args, timeout_ms


class _NoStdin:
    """A step cannot read stdin: it is the batch itself (or closed)."""

    def read(self, *_):
        raise click.UsageError("a batch step cannot read stdin ('-'): put the value in the step")

    def isatty(self):
        return False

    readline = read


def _capture(settings, op, args, **_):
    raise _Captured(op, args, settings.timeout_ms)


def _step_error(index, field, message, code=None):
    return invalid_argument(f"steps.{index}.{field}", f"Step {index}: {message}",
                            **({"parserCode": code} if code else {}))


def _parse_step(ctx, index, step):
    """The request one step stands for: (cmd, op, args, timeoutMs or None)."""
    from cli.main import _parser_code
    from cli.client import Settings

    if not isinstance(step, dict) or set(step) - {"cmd", "args"} or not isinstance(step.get("cmd"), str):
        raise _step_error(index, "cmd", 'each step is {"cmd": NAME, "args": [...]}')
    name, argv = step["cmd"], step.get("args", [])
    if name not in STEP_COMMANDS:
        raise _step_error(index, "cmd", f"{name[:64]!r} is not a command a batch can run "
                          f"(one of: {', '.join(STEP_COMMANDS)})", "unknown_command")
    if not isinstance(argv, list) or not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in argv):
        raise _step_error(index, "args", "args is a list of strings and numbers, as on the command line")
    command = ctx.parent.command.get_command(ctx.parent, name)
    # A step's own default (wait's 30 s) applies unless the global --timeout was given.
    settings = Settings(ctx.obj.client_key, None, ctx.obj.timeout_ms, getattr(ctx.obj, "timeout_given", True))
    saved_call, saved_stdin = client.call, sys.stdin
    client.call, sys.stdin = _capture, _NoStdin()
    try:
        with command.make_context(name, [str(a) for a in argv], parent=ctx, obj=settings) as sub:
            command.invoke(sub)
    except _Captured as captured:
        own_timeout = captured.timeout_ms if captured.timeout_ms != ctx.obj.timeout_ms else None
        if captured.op == protocol.OP_OPEN and ({"new", "profile"} & set(captured.request_args)):
            raise _step_error(index, "args.new", "open --new/--profile picks another tab: not in a batch") from None
        return name, captured.op, captured.request_args, own_timeout
    except click.UsageError as exc:
        raise _step_error(index, "args", exc.format_message(), _parser_code(exc)) from None
    except click.ClickException as exc:
        raise _step_error(index, "args", exc.format_message()) from None
    except click.exceptions.Exit:
        raise _step_error(index, "args", "--help is not a step") from None
    except BPError as exc:  # a command's own check (say wait's one condition)
        context = dict(exc.context or {})
        raise _step_error(index, "args." + str(context.get("field", "arguments")), exc.message) from None
    finally:
        client.call, sys.stdin = saved_call, saved_stdin
        progress = sys.modules.get("cli.progress")
        if progress is not None:
            progress.forget()  # a step's progress line is not the batch's
    raise _step_error(index, "args", "this form of the command sends nothing to the tab")


def _read_steps(file):
    if file is None:
        if sys.stdin.isatty():
            raise click.UsageError("Give the steps on stdin (a JSON array) or with --file.")
        raw = sys.stdin.read(MAX_BATCH_BYTES + 1)
    else:
        try:
            with open(file, encoding="utf-8") as handle:
                raw = handle.read(MAX_BATCH_BYTES + 1)
        except (OSError, UnicodeDecodeError) as exc:
            raise invalid_argument("file", f"Cannot read the batch file: {type(exc).__name__}.") from None
    if len(raw) > MAX_BATCH_BYTES:
        raise invalid_argument("steps", f"The batch is larger than {MAX_BATCH_BYTES} bytes.")
    try:
        steps = json.loads(raw)
    except ValueError:
        raise invalid_argument("steps", "The batch is not valid JSON (a JSON array of steps).") from None
    if not isinstance(steps, list) or not steps:
        raise invalid_argument("steps", "The batch is a non-empty JSON array of steps.")
    if len(steps) > MAX_STEPS:
        raise invalid_argument("steps", f"At most {MAX_STEPS} steps in one batch ({len(steps)} given).",
                               maxSteps=MAX_STEPS)
    return steps


def _render(r):
    lines = []
    for index, step in enumerate(r["steps"]):
        if step["ok"]:
            evidence = step.get("evidence")
            detail = f"{evidence.get('action')}: {evidence.get('status')}" if evidence else "ok"
        else:
            detail = f"✗ {escape(step['error'].get('error'))} [{step['error'].get('code')}]"
        lines.append(f"[step {index}] {escape(step['cmd'])}: {detail}")
    lines.append(f"[batch] {r['completed']} of {len(r['steps'])} step(s) completed"
                 + (f", stopped at step {r['stoppedAt']}" if "stoppedAt" in r else ""))
    return "\n".join(lines) + "\n\n" + render.observation(r)


@click.command()
@click.option("--file", "file", metavar="PATH", help="Read the steps from PATH instead of stdin.")
@click.option("-l", "--limit", type=click.IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the closing observation.")
@click.pass_context
def batch(ctx, file, limit):
    """Run up to 50 steps in order on the selected tab: one call, one observation at the end.

    The steps are a JSON array on stdin (or in --file), each {"cmd": NAME, "args": [...]} with
    NAME a command and args exactly what follows it on the command line, options included
    (["5", "Poetry", "--submit"]; numbers may be JSON numbers). Steps may be: click, type,
    hover, keyboard, press, scroll, select, dropdown, snapshot, read, search, find, locate,
    frame, eval, open (not --new/--profile), wait, screenshot, pdf, upload. Every step is checked
    before the first runs (a bad one is invalid_argument, field steps.N...); refs mean what they
    meant in your last snapshot (steps take no observation of their own). The batch stops at the
    first failing step. Answer: steps [{cmd, ok, commandId, evidence | result | error}],
    completed, stoppedAt (0-based, on a failure), then the tab's observation. Each step has a
    command record of its own (an unknown_outcome step names its commandId); the global
    --timeout bounds the whole batch and --request-id covers it all. A stopped batch exits 1.

    \b
    Example:  echo '[{"cmd":"type","args":[5,"Poetry"]},{"cmd":"click","args":[6]}]' | bp batch
    Example:  bp batch --file steps.json
    """
    steps = _read_steps(file)
    wire = []
    for index, step in enumerate(steps):
        name, op, args, own_timeout = _parse_step(ctx, index, step)
        wire.append({"cmd": name, "op": op, "args": args, **({"timeoutMs": own_timeout} if own_timeout else {})})
    signals.install()
    reply = client.call(ctx.obj, protocol.OP_BATCH, {"steps": wire, "limit": limit})
    finish(reply, _render, exit_code=1 if reply.get("ok") and "stoppedAt" in reply else None)



