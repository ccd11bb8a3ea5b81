"""Observation family: snapshot (cli/commands/observe.py)."""

from bp import protocol
from broker.observe.snapshot import observe
from broker.registry import handler


@handler(protocol.OP_SNAPSHOT, create=True)  # the only reader that opens the Agent's first tab when none is selected
def snapshot(tab):
    return observe(tab.broker, tab.agent, tab.raw, tab.session, tab.args.get("limit", 50),
                           timeout_s=tab.remaining(floor=1.5) - 0.5, diff=bool(tab.args.get("diff")),
                           grep=tab.args.get("grep"), role=tab.args.get("role"),
                           disabled=bool(tab.args.get("disabled")))
