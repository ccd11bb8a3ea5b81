"""Forms family: scroll, dropdown, select (cli/commands/scroll.py, cli/commands/select.py)."""

from bp import protocol
from broker import routing
from broker import scroll as scrolling
from broker import select as choosing
from broker.handlers.actions import act
from broker.registry import handler
from broker.tabs import session_for


@handler(protocol.OP_SCROLL)
def scroll(broker, request):
    return act(broker, request, scrolling.scroll)


@handler(protocol.OP_SELECT)
def select(broker, request):
    return act(broker, request, choosing.select)


@handler(protocol.OP_DROPDOWN)
def dropdown(broker, request):
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request, create=False)

    def run(worker):
        return choosing.dropdown(broker, agent, raw, session_for(worker, broker.browser), request.args)

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())
