"""Action family: click, type, hover (cli/commands/actions.py); keyboard, press
(cli/commands/keys.py). `act` is shared by every command that acts and then observes."""

import time

from bp import protocol
from bp.errors import BPError
from broker import actions, keyboard, observe, routing
from broker.registry import handler
from broker.tabs import session_for


@handler(protocol.OP_CLICK)
def click(broker, request):
    return act(broker, request, actions.click)


@handler(protocol.OP_TYPE)
def type_text(broker, request):
    return act(broker, request, actions.type_text)


@handler(protocol.OP_HOVER)
def hover(broker, request):
    return act(broker, request, actions.hover)


@handler(protocol.OP_KEYBOARD)
def keyboard_text(broker, request):
    return act(broker, request, keyboard.keyboard)


@handler(protocol.OP_PRESS)
def press(broker, request):
    return act(broker, request, keyboard.press)


STREAK = 3  # consecutive actions without progress on one tab before the watchdog hint


def _no_progress(evidence):
    if evidence.get("status") == "mismatch":
        return "mismatch"
    if evidence.get("status") == "unavailable" and evidence.get("reason") == "no_observable_effect":
        return "no_effect"
    if evidence.get("action") == "scroll" and evidence.get("moved") is False:
        return "no_effect"
    return None


def _watchdog(agent, raw, evidence, result):
    """Three consecutive actions on the same tab that mismatched or changed nothing observable
    add one `repeated_action` hint (once per streak). Progress or a navigation resets it."""
    reason = _no_progress(evidence)
    if reason is None or "navigation" in (evidence.get("effects") or ()):
        agent.streaks.pop(raw, None)
        return
    streak = agent.streaks.get(raw, 0) + 1
    agent.streaks[raw] = streak
    if streak == STREAK:
        result.setdefault("hints", []).append({
            "code": "repeated_action", "source": "watchdog", "confidence": "strong",
            "recommendedAction": "change_strategy", "streak": streak, "reason": reason})
        del result["hints"][16:]


def act(broker, request, action):
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
            from broker import dialogs

            return {"evidence": evidence, "dialog": dialogs.brief(session)}
        try:
            result = observe.observe(broker, agent, raw, session, request.args.get("limit", 50),
                                     timeout_s=max(1.0, deadline - time.monotonic()))
        except BPError as exc:
            raise BPError("unknown_outcome", f"The {name} was dispatched but the page could not be observed after it.",
                          context={"action": name, "reason": exc.code, "evidence": evidence}) from None
        result["evidence"] = evidence
        _watchdog(agent, raw, evidence, result)
        return result

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())
