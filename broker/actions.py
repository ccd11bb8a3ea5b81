"""Actions: validate before dispatch, dispatch through CDP input on the tab's own session (never
activating a window), settle, then return a fresh observation with typed evidence."""

import time

from bp.errors import BPError
from broker import observe

NAVIGATION_WAIT_S = 10.0
EXPECTED_TOGGLE = {"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"}
NAVIGATION_STARTS = ("Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameNavigated")


def _mouse(session, x, y, button, count, target=None):
    """Press and release at (x, y) of `target`'s viewport (the tab's own session, or the session
    of the out-of-process frame that renders the element)."""
    target = target or session
    # A move is aligned to animation frames, which a background tab barely gets: send it without
    # waiting for its acknowledgement; the press that follows flushes it, in order.
    target.send_nowait("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    for kind in ("mousePressed", "mouseReleased"):
        # A click that opens alert()/confirm() blocks the page before it acknowledges the input.
        target.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                                 "clickCount": count, "buttons": 1 if kind == "mousePressed" else 0},
                    abort=session.dialog_open)
        if session.dialog_open():
            return


def input_point(session, answer):
    """(target session, x, y) for input at a resolved ref."""
    if "input" in answer:
        return answer["input"]
    return session, answer["x"], answer["y"]


def settle(session, since, deadline):
    """After input: if it started a main-frame navigation, wait until the new document is
    interactive. Returns "navigation" when the main document changed, None otherwise.

    One round trip through the tab's renderer orders us after every event the input caused, so
    no fixed sleep is needed to notice a navigation."""
    loader_before = session.loader
    if not session.dialog_open():
        session.call("Runtime.evaluate", {"expression": "0", "returnByValue": True},
                     timeout_s=max(0.1, deadline - time.monotonic()), abort=session.dialog_open)

    def main_frame_navigation(method, params):
        frame = params.get("frame") or {}
        frame_id = params.get("frameId") or frame.get("id")
        return method in NAVIGATION_STARTS and frame_id == session.frame_id and not frame.get("parentId")

    if session.dialog_open() or session.wait_for(main_frame_navigation, since, 0) is None:
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
    before = role = name_before = None
    if "xy" in args:
        (x, y), target = args["xy"], session
        kind = "coordinates"
    else:
        answer = observe.resolve(broker, agent, raw, session, args["ref"])
        target, x, y = input_point(session, answer)
        before, role, name_before = answer["state"], answer["role"], answer["name"]
        kind = role if role in EXPECTED_TOGGLE or role == "option" else "control"
    loader_before = session.loader
    since = session.mark()
    _mouse(session, x, y, button, count, target)  # dispatched: from here on, failures are unknown_outcome
    navigated = settle(session, since, deadline)
    effects = []
    if navigated or session.loader != loader_before:
        effects.append("navigation")
    if session.dialog_open():
        effects.append("dialog_opened")
    if session.wait_for(lambda m, p: m == "Page.navigatedWithinDocument" and p.get("frameId") == session.frame_id,
                        since, 0):
        effects.append("url_changed")  # same-document navigation (fragment, history API)
    popups_after = {t for t, i in broker.browser.targets.infos.items() if i.get("openerId") == raw}
    if popups_after - popups_before:
        effects.append("popup_opened")
    evidence = {"action": "click", "kind": kind}
    after = None
    if before is not None and "navigation" not in effects and not session.dialog_open():
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


def _key(session, key, code, vk, modifiers=0, text=None, target=None):
    target = target or session
    down = {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk,
            "modifiers": modifiers}
    if text:
        down["text"] = text
    target.call("Input.dispatchKeyEvent", down, abort=session.dialog_open)
    if not session.dialog_open():
        target.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk,
                                               "modifiers": modifiers}, abort=session.dialog_open)


def type_text(broker, agent, raw, session, args, deadline):
    """Focus the ref, optionally clear it, insert the text, optionally press Enter. Every step
    re-checks that the page is the one the first step saw; after the first mutation a change
    ends as unknown_outcome and no remaining step reaches the changed page."""
    text, clear, submit = args["text"], args.get("clear", False), args.get("submit", False)
    answer = observe.resolve(broker, agent, raw, session, args["ref"], focus=True, clear=clear)
    editable = answer["editable"]
    target = input_point(session, answer)[0]
    loader, since = session.loader, session.mark()
    dispatched = []

    def check(step):
        reason = None
        if session.dialog_open():
            reason = "dialog_opened"
        elif session.loader != loader:
            reason = "document_changed"
        else:
            session.call("Runtime.evaluate", {"expression": "0"}, timeout_s=5.0, abort=session.dialog_open)
            if session.dialog_open():
                reason = "dialog_opened"
            elif session.wait_for(lambda m, p: m in NAVIGATION_STARTS and (p.get("frameId") or (p.get("frame") or {}).get("id"))
                                  == session.frame_id, since, 0):
                reason = "loader_changed"
            else:
                try:
                    state = observe.resolve(broker, agent, raw, session, args["ref"], mode="state")["state"]
                    if not state.get("focused"):
                        reason = "focus_changed"
                except BPError:
                    reason = "target_changed"
        if reason is None:
            return
        context = {"action": "type", "step": step, "reason": reason, "dispatchedSteps": len(dispatched),
                   "remainingStepsStopped": True}
        if not dispatched:
            raise BPError("action_not_verified", "The page changed before typing started.", retryable=True,
                          context=context)
        raise BPError("unknown_outcome", "The page changed while typing; the remaining steps were not sent.",
                      context=context)

    check("focus")
    if clear:
        # Select-all + delete reaches rich editors and code editors that keep their own model.
        _key(session, "a", "KeyA", 65, modifiers=4 if editable["mac"] else 2, target=target)
        _key(session, "Backspace", "Backspace", 8, target=target)
        dispatched.append("clear")
        check("type")
    if text:
        target.call("Input.insertText", {"text": text}, abort=session.dialog_open)
        dispatched.append("type")
    if submit:
        check("submit")
        _key(session, "Enter", "Enter", 13, text="\r", target=target)
        dispatched.append("submit")
    navigated = settle(session, since, deadline)
    evidence = {"action": "type", "kind": editable["kind"], "sensitive": editable["sensitive"],
                "beforeLength": editable["beforeLength"]}
    if navigated or session.dialog_open():
        evidence.update({"status": "unavailable", "reason": "navigation" if navigated else "dialog_opened"})
        return evidence
    try:
        readback = observe.resolve(broker, agent, raw, session, args["ref"], mode="readback", text=text,
                                   clear=clear)["readback"]
    except BPError:
        readback = None
    if readback is None:
        evidence.update({"status": "unavailable", "reason": "active_element_not_readable"})
        return evidence
    evidence.update({"expectedLength": readback["expectedLength"], "afterLength": readback["afterLength"]})
    if readback["matches"]:
        evidence["status"] = "verified"
    else:
        evidence.update({"status": "mismatch", "reason": "value_mismatch"})
    return evidence
