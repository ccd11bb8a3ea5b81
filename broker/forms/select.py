"""Dropdowns: list the options of a native <select> or ARIA combobox/listbox, and choose one.

A native <select> is set in Browser Pilot's isolated world with the input and change events a
person's choice fires. An ARIA widget is operated with real mouse input: open it (if its options
are not exposed yet), click the option, then, once what the click caused has settled, read back
aria-selected or what the combobox shows.
That is a composite action: every step re-checks the page; a change before the first click is
`action_not_verified`, after it `unknown_outcome` with the steps that were sent.
"""

import os
import time
from typing import Any

from bp.errors import BPError
from broker.actions import inputs, settle as settling
from broker.observe import snapshot, worlds
from broker.actions import slider
from broker.forms.scroll import in_world

OPTIONS_WAIT_S = 3.0  # how long an opened widget may take to render its options
READBACK_WAIT_S = 1.0  # how long a chosen option may take to show after the settle
READ_AGAIN_S = 0.05

def _read_until(read, done, until):
    """read() again every READ_AGAIN_S until done(answer) or the monotonic time `until`; the last
    answer. For a widget that answers a moment later (a framework's next tick, a server's echo)."""
    answer = read()
    while not done(answer) and time.monotonic() < until:
        time.sleep(READ_AGAIN_S)
        answer = read()
    return answer


def _not_dropdown():
    return BPError("invalid_argument", "The element is not a dropdown (a select, combobox or listbox).",
                   context={"field": "target"})


def _on_target(broker, agent, raw, session, args, opts):
    source = worlds.script("select.js")
    if "ref" in args:
        return snapshot.on_ref(broker, agent, raw, session, args["ref"], source, opts)
    return worlds.by_selector(session, source, {**opts, "selector": args["selector"]})


def dropdown(broker, agent, raw: str, session, args: dict[str, Any]) -> dict[str, Any]:
    answer = _on_target(broker, agent, raw, session, args, {"op": "inspect"})
    if not answer or answer.get("notDropdown"):
        raise _not_dropdown()
    url = (broker.browser.targets.info(raw) or {}).get("url", "")
    out = {"url": url, **{k: answer[k] for k in ("kind", "expanded", "multiple", "requiresOpen", "options",
                                                  "truncated")}}
    if out["requiresOpen"] and not out["options"]:
        # A list that renders its options only while open (issue 38's trial: "options: []" read
        # as "nothing to choose"): say how to get them.
        out["hint"] = ("Its options show only while it is open: 'bp select REF LABEL' opens it and chooses; "
                       "or 'bp click REF', then 'bp dropdown REF' lists them.")
    return out


def select(broker, agent, raw: str, session, args: dict[str, Any], deadline: float):
    if "ref" in args:
        info = slider.slider_of(broker, agent, raw, session, args["ref"])
        if info:
            return slider.set_slider(broker, agent, raw, session, args["ref"], args["option"], deadline, info)
    slot = {"slot": worlds.world_key(agent.key), "token": os.urandom(8).hex()}
    match = {"option": args["option"], "by": args.get("by", "label"), "contains": args.get("contains", False)}
    # Before any input: the target is current, enabled, visible and not covered.
    if "ref" in args:
        answer = snapshot.resolve(broker, agent, raw, session, args["ref"])
        bound = _on_target(broker, agent, raw, session, args, {**slot, "op": "bind"})
        # Later steps run where the ref lives (an out-of-process iframe has its own world and
        # its own input target), on the bound handle: the combobox's name may change meanwhile.
        _, world, _ = snapshot.check_ref(broker, agent, raw, session, args["ref"])
        where: dict[str, Any] = dict(zip(("input", "x", "y"), inputs.input_point(session, answer)))
    else:
        bound = _on_target(broker, agent, raw, session, args, {**slot, "op": "bind", "preflight": True})
        world = None
        where = dict((bound or {}).get("point") or {}, input=session)
    if not bound or bound.get("notDropdown"):
        raise _not_dropdown()
    if where.get("refuse"):
        raise snapshot.refusal(where, "selector")
    kind = bound["kind"]
    source = worlds.script("select.js")
    loader, since = session.loader, session.mark()
    dispatched = []

    def step(op: str, **extra: Any) -> dict[str, Any]:
        opts, on_slot = {**slot, **match, "op": op, **extra}, worlds.helper("onSlot")
        try:
            if world is None:
                answer = in_world(session, on_slot, opts, fn=source)
            else:
                answer = worlds.call_in_world(world.session, world.context_id, on_slot, opts, fn=source)
        except BPError as exc:
            if not worlds.context_gone(exc):
                raise
            answer = {"gone": True}
        return answer or {"gone": True}

    def check(name, answer=None):
        """Stop the composite action if the page is no longer the one the first step saw."""
        reason = None
        if session.dialog_open():
            reason = "dialog_opened"
        elif session.loader != loader:
            reason = "document_changed"
        elif session.wait_for(lambda m, p: m in settling.NAVIGATION_STARTS
                              and (p.get("frameId") or (p.get("frame") or {}).get("id")) == session.frame_id,
                              since, 0):
            reason = "loader_changed"
        elif answer is not None and answer.get("gone"):
            reason = "target_changed"
        if reason is None:
            return
        context = {"action": "select", "step": name, "reason": reason, "dispatchedSteps": len(dispatched),
                   "remainingStepsStopped": True}
        if not dispatched:
            raise BPError("action_not_verified", "The page changed before the selection started.", retryable=True,
                          context=context)
        raise BPError("unknown_outcome", "The page changed while selecting; the remaining steps were not sent.",
                      context=context)

    def evidence(status, selected, reason=None):
        out = {"action": "select", "status": status, "kind": kind, "selected": selected}
        if reason:
            out["reason"] = reason
        return out

    if kind == "aria" and bound["requiresOpen"]:
        check("open")
        inputs._mouse(session, where["x"], where["y"], "left", 1, where["input"])
        dispatched.append("open")
        settling.navigation(session, since, deadline)

        def options():
            found = step("find")
            check("options", found)
            return found

        # The options may render a moment after the click (a framework's next tick, a fetch).
        found = _read_until(options, lambda found: found.get("open"), min(deadline, time.monotonic() + OPTIONS_WAIT_S))
    else:
        found = step("find")
        check("find", found)
    if found.get("notFound"):
        return evidence("mismatch", found.get("selected", []), "option_not_found")
    if found.get("disabled"):
        context: dict[str, Any] = {"field": "option", "reason": "option_disabled"}
        if dispatched:
            context.update({"action": "select", "step": "option", "dispatchedSteps": len(dispatched),
                            "remainingStepsStopped": True})
        raise BPError("action_not_verified", "The option is disabled.", retryable=False, context=context)
    label = found["label"]
    if kind == "native":
        session.dispatching()  # the script sets the option and fires input/change
        done = step("native")
        check("select", done)
        if done.get("dispatched"):
            dispatched.append("select")
    else:
        target = step("optionPoint")
        check("option", target)
        if target.get("refuse"):
            if dispatched:  # the list was opened: composite rule, even though the option was never clicked
                raise BPError("unknown_outcome", "The opened option could not be clicked; the selection was not sent.",
                              context={"action": "select", "step": "option", "reason": "option_" + target["refuse"],
                                       "dispatchedSteps": len(dispatched), "remainingStepsStopped": True})
            raise BPError("action_not_verified", f"The option cannot be clicked now: {target['refuse']}.",
                          retryable=True, context={"field": "option", "reason": target["refuse"]})
        # The option's point is in the viewport of the document that holds the combobox.
        inputs._mouse(session, target["x"], target["y"], "left", 1, world.session if world else session)
        dispatched.append("option")
    # Read back after what the choice caused has settled: a server-driven widget (NiceGUI's
    # loopback) shows the choice only when the server's echo comes over its WebSocket, another
    # after a fetch. Without an armed settle (a caller outside the pipeline) only a navigation.
    def left():
        """The page the choice was made on is no longer there to read (a new document, a dialog)."""
        return session.dialog_open() or session.loader != loader

    navigated = settling.end(session, deadline)["status"] == "navigated"
    if navigated or left():
        return evidence("unavailable", [], "navigation" if not session.dialog_open() else "dialog_opened")
    # The settle may end before the echo (the menu's own closing changes the DOM, which reads as
    # the frame's answer): a readback that does not show the choice yet is read again, briefly.
    # Only a mismatch pays this wait.
    verdict = _read_until(lambda: step("verify", label=label),
                          lambda v: kind != "aria" or v.get("gone") or v.get("status") == "verified" or left(),
                          min(deadline - settling.OBSERVE_RESERVE_S, time.monotonic() + READBACK_WAIT_S))
    if verdict.get("gone"):
        return evidence("unavailable", [], "selection_not_exposed")
    return evidence(verdict["status"], verdict.get("selected", []), verdict.get("reason"))
