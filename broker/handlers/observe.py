"""Observation family: snapshot (cli/commands/observe.py)."""

from bp import protocol
from broker import observe, routing
from broker.registry import handler
from broker.tabs import session_for


@handler(protocol.OP_SNAPSHOT)
def snapshot(broker, request):
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request)
    limit = request.args.get("limit", 50)
    diff = bool(request.args.get("diff"))

    def run(worker):
        session = session_for(worker, broker.browser)
        return observe.observe(broker, agent, raw, session, limit, timeout_s=max(1.0, request.remaining() - 0.5),
                               diff=diff)

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())
