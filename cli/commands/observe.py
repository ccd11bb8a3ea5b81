"""Observation family: snapshot.

Broker side: broker/handlers/observe.py (same operation names, from bp.protocol).
"""

import click

from bp import protocol
from cli import client, render, signals
from cli.output import finish


@click.command()
@click.option("-l", "--limit", type=click.IntRange(1, 10000), default=50, show_default=True,
              help="Most elements to return (1-10000); more sets truncated with element_limit.")
def snapshot(limit):
    """Show what can be acted on in the selected tab now, as numbered refs.

    A ref names an element of this Agent's latest snapshot (or action result) of the tab; after
    the page changes, old refs fail with stale_ref and are never re-bound.

    \b
    Example:  bp snapshot --limit 100
    """
    signals.install()
    finish(client.call(click.get_current_context().obj, protocol.OP_SNAPSHOT, {"limit": limit}, long_running=True),
           render.observation)
