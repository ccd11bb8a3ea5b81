"""Keys to whatever has focus: `bp keyboard` (text, optionally clear/submit, per-key delay) and
`bp press` (one key or combo). Both pin the focused element first (scripts/focus.js) and report
lengths, verdicts and effects — never the text or a field's value."""

import time
from typing import Any

from bp import keys
from bp.errors import BPError
from broker.actions import pipeline, settle as settling
from broker.actions.evidence import Effect, Evidence
from broker.actions.inputs import Pin, _mouse, focus_script as _focus, key_event, send_text, typed_verdict
from broker.observe.snapshot import refusal

MAX_DELAY_MS = 1000


def _click_selector(broker, agent, session, selector):
    answer = _focus(broker, agent, session, {"mode": "click", "selector": selector})
    if answer.get("invalid") or answer.get("missing"):
        raise BPError("invalid_argument", f"--click selector did not match: {selector[:200]}",
                      context={"field": "click"})
    if answer.get("refuse"):
        raise refusal(answer, "click", "The --click element cannot be clicked now")
    return answer["x"], answer["y"]


def _type_keys(session, text, delay_s, pin):
    """One key event per character (code editors that listen to keys see each one)."""
    for index, ch in enumerate(text):
        if index:
            time.sleep(delay_s)
            pin.check("type")
        try:
            combo = keys.parse(ch)
        except keys.KeyError_:
            combo = None
        if combo is None or ch == "\n":
            session.call("Input.insertText", {"text": ch}, abort=session.dialog_open)
        else:
            key_event(session, combo["key"], combo["code"], combo["vk"], combo["mask"], combo.get("text"))
        if not pin.dispatched:
            pin.dispatched.append("type")


def keyboard(broker, agent, raw: str, session, args: dict[str, Any], deadline: float):
    text, clear, submit = args["text"], args.get("clear", False), args.get("submit", False)
    delay_s = args.get("delay", 0) / 1000.0
    if delay_s and delay_s * len(text) > max(0.0, deadline - time.monotonic() - 1.0):
        raise BPError("invalid_argument", "--delay times the text length exceeds the command's --timeout.",
                      context={"field": "delay"})
    if args.get("click"):
        x, y = _click_selector(broker, agent, session, args["click"])
        loader, since = session.loader, session.mark()
        _mouse(session, x, y, "left", 1)
        settling.navigation(session, since, deadline, loader)
    pinned = _focus(broker, agent, session, {"mode": "pin"})
    pin = Pin(session, "keyboard", lambda: _focus(broker, agent, session, {"mode": "check"}).get("same"))
    if args.get("click"):
        pin.dispatched.append("click")
    evidence = Evidence("keyboard", pinned["kind"], facts={"sensitive": pinned["sensitive"],
                                                           "beforeLength": pinned["beforeLength"]}, listed=False)
    if pinned.get("readOnly"):
        raise BPError("action_not_verified", "The focused field is read-only or disabled.", retryable=True,
                      context={"reason": "readonly"})
    settling.begin(session, raw)
    pin.check("focus")
    if clear:
        key_event(session, "a", "KeyA", 65, modifiers=4 if pinned["mac"] else 2)
        key_event(session, "Backspace", "Backspace", 8)
        pin.dispatched.append("clear")
        pin.check("type")
    if text and delay_s:
        _type_keys(session, text, delay_s, pin)
        evidence.facts["method"] = "keys"
    elif text:
        evidence.facts["method"] = send_text(session, text, pin)
    def read_back():
        try:
            return _focus(broker, agent, session, {"mode": "readback", "text": text, "clear": clear}).get("readback")
        except BPError:
            return None

    typed = None
    if submit:
        pin.check("submit")
        typed = read_back()  # before Enter: the app may clear the field after it (see actions.type_text)
        key_event(session, "Enter", "Enter", 13, text="\r")
        pin.dispatched.append("submit")
    settling.end(session, deadline, debounce=bool(text) and not submit)
    # Enter that moved focus on (no field to read back) took: focus_changed.
    return typed_verdict(session, evidence, pin, typed, read_back, submit, deadline, Effect.FOCUS_CHANGED)


def press(broker, agent, raw: str, session, args: dict[str, Any], deadline: float) -> Evidence:
    try:
        combo = keys.parse(args["key"])
    except keys.KeyError_ as exc:
        raise BPError("invalid_argument", str(exc), context={"field": "key"}) from None
    pinned = _focus(broker, agent, session, {"mode": "pin"})
    popups_before = pipeline.opener_tabs(broker, raw)
    armed = settling.begin(session, raw)
    mask = 0
    held = []
    for name in combo["modifiers"]:
        bit, key, code, vk = keys.MODIFIERS[name]
        mask |= bit
        session.call("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": key, "code": code,
                                                "windowsVirtualKeyCode": vk, "modifiers": mask})
        held.append((bit, key, code, vk))
    key_event(session, combo["key"], combo["code"], combo["vk"], combo["mask"], combo.get("text"))
    for bit, key, code, vk in reversed(held):
        if session.dialog_open():
            break
        mask &= ~bit
        session.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                                "windowsVirtualKeyCode": vk, "modifiers": mask})
    # As after a click: a key that activates a link starts its load (or download) in a later
    # task than the key event; the settle waits for what the key caused.
    settling.end(session, deadline)
    evidence = Evidence("press", pinned["kind"], facts={"sensitive": pinned["sensitive"]})
    pipeline.caused(broker, agent, raw, session, armed, popups_before, deadline, evidence)
    if not evidence.has(Effect.NAVIGATION, Effect.DIALOG_OPENED, Effect.POPUP_OPENED, Effect.DOWNLOAD_STARTED):
        try:
            for effect in _focus(broker, agent, session, {"mode": "effects"}).get("effects") or []:
                evidence.add(effect)
        except BPError:
            evidence.add(Effect.DOCUMENT_CHANGED)
    return evidence.by_effects()
