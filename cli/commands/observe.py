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
@click.option("--diff", is_flag=True,
              help="Only what changed since this Agent's previous observation of the tab: added, changed "
                   "and removed elements, and how the old refs map to the new ones.")
def snapshot(limit, diff):
    """Show what can be acted on in the selected tab now, as numbered refs.

    A ref names an element of this Agent's latest snapshot (or action result) of the tab; after
    the page changes, old refs fail with stale_ref and are never re-bound. With --diff the new
    observation still supersedes the previous one: use the refs it reports (refMap gives the
    new number of every element that stayed).

    \b
    Example:  bp snapshot --limit 100
              bp snapshot --diff
    """
    signals.install()
    args = {"limit": limit}
    if diff:
        args["diff"] = True
    finish(client.call(click.get_current_context().obj, protocol.OP_SNAPSHOT, args),
           render.observation)
