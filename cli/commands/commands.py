"""Command recovery family: commands, command, cancel.

Broker side: broker/commands/records.py. Records belong to the client key and are kept for
30 minutes after they finish (at most 256 per key).
"""

import click

from bp import protocol
from cli import client
from cli.build import given
from cli.output import escape, finish

STATUSES = ("accepted", "dispatched", "completed", "unknown_outcome", "cancelled", "expired")


def _statuses(ctx, param, value):
    if not value:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in STATUSES]
    if unknown:
        raise click.BadParameter(f"unknown status {unknown[0]!r}; use {', '.join(STATUSES)}")
    return names


def _command_id(ctx, param, value):
    import re

    if not re.match(r"^cmd-[A-Za-z0-9]{8,64}$", value):
        raise click.BadParameter("a command id looks like cmd-0123abcd… (from 'bp commands' or an error's context)")
    return value


def _line(c):
    return f"{c['id']}  {c['status']:<15} {escape(c['method'])}" + (f"  tab {c['targetId']}" if c.get("targetId") else "")


def _render_list(r):
    return "\n".join(_line(c) for c in r["commands"]) or "(no commands)"


def _render_one(r):
    lines = [_line(r["command"])]
    if r.get("cancelled"):
        lines.append("cancelled before it reached the browser")
    if r.get("note"):
        lines.append(escape(r["note"]))
    if "result" in r:
        lines.append("result: ok")
    if "error" in r:
        lines.append(f"error: {escape(r['error'].get('code'))}: {escape(r['error'].get('message'))}")
    return "\n".join(lines)


@click.command(name="commands")
@click.option("-l", "--limit", type=click.IntRange(1, 100), default=20, show_default=True, help="Most records to list (1-100).")
@click.option("--status", callback=_statuses, metavar="S1,S2",
              help="Only these statuses: accepted, dispatched, completed, unknown_outcome, cancelled, expired.")
def list_commands(limit, status):
    """List this Agent's recent browser commands, newest first.

    \b
    Example:  bp commands --status dispatched,unknown_outcome
    """
    args = given({"limit": limit}, status=status)
    finish(client.call(click.get_current_context().obj, protocol.OP_COMMANDS, args), _render_list)


@click.command(name="command")
@click.argument("command_id", callback=_command_id)
def show_command(command_id):
    """Show one command's record and, once finished, its recorded result.

    \b
    Example:  bp command cmd-3f2a9c0d41b7e6a8
    """
    finish(client.call(click.get_current_context().obj, protocol.OP_COMMAND, {"commandId": command_id}), _render_one)


@click.command(name="cancel")
@click.argument("command_id", callback=_command_id)
def cancel(command_id):
    """Cancel a command. Before it reaches the browser this is certain; afterwards it is only a
    request, and nothing is rolled back.

    \b
    Example:  bp cancel cmd-3f2a9c0d41b7e6a8
    """
    finish(client.call(click.get_current_context().obj, protocol.OP_CANCEL, {"commandId": command_id}), _render_one)
