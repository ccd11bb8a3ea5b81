"""Observation family: snapshot.

Broker side: broker/commands/observe.py (same operation names, from bp.protocol).
"""

from bp import protocol
from cli import client, render, signals
from cli.build import Refused, given
from cli.commands import built
from cli.declare import Choice, IntRange, command, command_settings, option
from cli.output import finish


@command()
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements to return (1-10000); more sets truncated with element_limit.")
@option("--diff", is_flag=True,
              help="Only what changed since this Agent's previous observation of the tab: added, changed "
                   "and removed elements.")
@option("--grep", metavar="TEXT",
              help="Only elements whose name, value or context contains TEXT (any case), the whole page "
                   "searched; matches gives how many.")
@option("--role", type=Choice(protocol.ELEMENT_ROLES),
              help="Only elements of this role (with or without --grep).")
@option("--disabled", is_flag=True,
              help="Also list the disabled controls (disabledElements, each disabled: true, no ref); "
                   "disabledCount always says how many were left out.")
def snapshot(**values):
    """Show what can be acted on in the selected tab now, as numbered refs.

    An element keeps its ref number for as long as it stays in the page: every later snapshot
    and action result shows it under the same number, and a number is never given to another
    element of that page. A ref stops working (stale_ref) when its element is removed or
    changes role or name, or the tab shows a new page (which numbers from 1 again).

    \b
    Example:  bp snapshot --limit 100
              bp snapshot --diff
              bp snapshot --grep delete --role button
    """
    signals.install()
    finish(client.call(command_settings(), protocol.OP_SNAPSHOT, built(snapshot_request, values)),
           render.observation)


def snapshot_request(v):
    grep, role = v["grep"], v["role"]
    if v["diff"] and (grep is not None or role is not None):
        raise Refused("give --diff or --grep/--role, not both")
    if grep is not None and not grep.strip():
        raise Refused("the text is empty", param_hint="'--grep'")
    args = given({"limit": v["limit"]}, diff=v["diff"], disabled=v["disabled"])
    if grep is not None:
        args["grep"] = grep
    if role is not None:
        args["role"] = role
    return args
