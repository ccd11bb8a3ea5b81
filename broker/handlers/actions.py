"""Action family: click, type (cli/commands/actions.py)."""

import time

from bp import protocol
from bp.errors import BPError
from broker import actions, observe, routing
from broker.registry import handler
from broker.tabs import session_for


@handler(protocol.OP_CLICK)
def click(broker, request):
    return _act(broker, request, actions.click)


@handler(protocol.OP_TYPE)
def type_text(broker, request):
    return _act(broker, request, actions.type_text)


def _act(broker, request, action):
    """Run one action on the selected tab's worker, then observe the tab afresh."""
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request, create=False)
    deadline = time.monotonic() + request.remaining()
    name = request.op

    def run(worker):
        session = session_for(worker, broker.browser)
        evidence = action(broker, agent, raw, session, request.args, deadline)
        if session.dialog is not None:
            # A JavaScript dialog blocks the page: answer with the evidence, not a hung observation.
            return {"evidence": evidence, "dialog": {"type": session.dialog.get("type")}}
        try:
            result = observe.observe(broker, agent, raw, session, request.args.get("limit", 50),
                                     timeout_s=max(1.0, deadline - time.monotonic()))
        except BPError as exc:
            raise BPError("unknown_outcome", f"The {name} was dispatched but the page could not be observed after it.",
                          context={"action": name, "reason": exc.code, "evidence": evidence}) from None
        result["evidence"] = evidence
        return result

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())
