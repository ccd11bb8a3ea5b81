"""Actions: validate before dispatch, dispatch through CDP input on the tab's own session (never
activating a window), settle, then return a fresh observation with typed evidence."""

import time

from bp.errors import BPError
from broker import observe

SETTLE_S = 0.15  # how long to watch for a navigation to start after input
NAVIGATION_WAIT_S = 10.0
EXPECTED_TOGGLE = {"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"}


def _mouse(session, x, y, button, count):
    session.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    for kind in ("mousePressed", "mouseReleased"):
        session.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                                  "clickCount": count, "buttons": 1 if kind == "mousePressed" else 0})


def settle(session, since, deadline):
    """Wait for a navigation the input may have started to become interactive. Returns
    "navigation" when the main document changed, None otherwise."""
    loader_before = session.loader
    started = session.wait_for(
        lambda m, p: (m == "Page.frameStartedLoading" and p.get("frameId") == session.frame_id)
        or (m == "Page.frameNavigated" and not (p.get("frame") or {}).get("parentId"))
        or m == "Page.javascriptDialogOpening",
        since, min(SETTLE_S, max(0.0, deadline - time.monotonic())))
    if started is None or started[0] == "Page.javascriptDialogOpening":
        return None
    done = session.wait_for(lambda m, p: m == "Page.lifecycleEvent" and p.get("name") == "DOMContentLoaded"
                            and p.get("frameId") == session.frame_id and p.get("loaderId") != loader_before,
                            since, max(0.0, min(NAVIGATION_WAIT_S, deadline - time.monotonic())))
    if done is None and session.loader == loader_before:
        return None  # a started load that did not replace the document (e.g. a download)
    if done is None:
        raise BPError("unknown_outcome", "The click started a navigation that did not become interactive in time.",
                      context={"action": "click", "reason": "navigation_stalled"})
    return "navigation"


def click(broker, agent, raw, session, args, deadline):
    button, count = args.get("button", "left"), args.get("clickCount", 1)
    popups_before = {t for t, i in broker.browser.targets.infos.items() if i.get("openerId") == raw}
    if "xy" in args:
        x, y = args["xy"]
        before, kind, role = None, "coordinates", None
    else:
        answer = observe.resolve(broker, agent, raw, session, args["ref"])
        x, y, before, role = answer["x"], answer["y"], answer["state"], answer["role"]
        name_before = answer["name"]
        kind = role if role in EXPECTED_TOGGLE or role in ("option",) else "control"
    loader_before = session.loader
    since = session.mark()
    _mouse(session, x, y, button, count)  # dispatched: from here on, failures are unknown_outcome
    try:
        navigated = settle(session, since, deadline)
    except BPError:
        raise
    effects = []
    if navigated or session.loader != loader_before:
        effects.append("navigation")
    if session.dialog is not None:
        effects.append("dialog_opened")
    if session.wait_for(lambda m, p: m == "Page.navigatedWithinDocument" and p.get("frameId") == session.frame_id,
                        since, 0):
        effects.append("url_changed")  # same-document navigation (fragment, history API)
    time.sleep(0.02)  # let a popup's target event arrive
    popups_after = {t for t, i in broker.browser.targets.infos.items() if i.get("openerId") == raw}
    if popups_after - popups_before:
        effects.append("popup_opened")
    evidence = {"action": "click", "kind": kind}
    after = None
    if before is not None and "navigation" not in effects and session.dialog is None:
        try:
            answer = observe.resolve(broker, agent, raw, session, args["ref"], mode="state")
            after = answer["state"]
            if answer.get("name") != name_before:
                effects.append("content_changed")
        except BPError:
            effects.append("document_changed")
    if before and after:
        for field, effect in (("checked", "checked_changed"), ("selected", "selected_changed"),
                              ("pressed", "pressed_changed"), ("expanded", "expanded_changed"),
                              ("focused", "focus_changed")):
            if before.get(field) != after.get(field):
                effects.append(effect)
        evidence.update({k: after[k] for k in ("checked", "expanded", "focused") if k in after})
    evidence["effects"] = effects
    if kind in EXPECTED_TOGGLE and "navigation" not in effects:
        if "checked_changed" in effects or (role == "radio" and after and after.get("checked")):
            evidence["status"] = "verified"
        else:
            evidence["status"], evidence["reason"] = "mismatch", "expected_state_unchanged"
    elif kind == "coordinates":
        evidence["status"], evidence["reason"] = ("verified" if effects else "unavailable"), "coordinate_target"
    elif effects:
        evidence["status"] = "verified"
    else:
        evidence["status"], evidence["reason"] = "unavailable", "no_observable_effect"
    return evidence
