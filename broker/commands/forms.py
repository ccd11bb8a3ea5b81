"""Forms family: scroll, dropdown, select (cli/commands/scroll.py, cli/commands/select.py)."""

from bp import protocol
from broker.forms import scroll as scrolling
from broker.forms import select as choosing
from broker.registry import handler

# Acting commands: each runs through the action pipeline (broker/actions/pipeline.py, observe_after).
for _op, _action in {protocol.OP_SCROLL: scrolling.scroll, protocol.OP_SELECT: choosing.select}.items():
    handler(_op, observe_after=True)(lambda tab, action=_action: action(*tab.parts()))


@handler(protocol.OP_DROPDOWN)
def dropdown(tab):
    return choosing.dropdown(tab.broker, tab.agent, tab.raw, tab.session, tab.args)
