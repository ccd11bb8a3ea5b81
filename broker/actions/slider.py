"""Sliders: `bp select REF 7` (and `bp type REF 7`) set a slider's value in one command.

Kept apart from the dropdown code and from broker/actions (which `bp type` comes from) so that
neither imports the other. The observation after the action is the registry's (observe_after).
"""

import time

from bp.errors import BPError
from broker.observe import snapshot, worlds


def _key(session, key, vk):
    """One key press (down, up) on the focused element of the tab."""
    for kind in ("rawKeyDown", "keyUp"):
        if session.dialog_open():
            return
        session.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": vk},
                     abort=session.dialog_open)


# Sliders (a native range input, visually hidden or not, or role=slider): `bp select REF VALUE`
# sets the value in one command: the slider is focused and moved with arrow keys, as a keyboard
# user moves it, until it shows the value (at most SLIDER_KEYS presses); a native range input
# the keys cannot bring there gets the value and the input/change events a drag fires. Either
# way the evidence is the value read back.
SLIDER_KEYS = 200  # arrow presses at most, for an ARIA slider


def slider_of(broker, agent, raw, session, ref):
    """The slider facts of the ref's element ({native, value, text, min, max}), or None when it
    is not a slider."""
    return snapshot.on_ref(broker, agent, raw, session, ref, worlds.helper("slider"), {"op": "read"})


def set_slider(broker, agent, raw, session, ref, value, deadline, info, action="select"):
    """Set the slider `ref` to `value` (text of a number): the evidence reads the value back.
    `bp select REF 7` and `bp type REF 7` both come here."""
    return _slider(broker, agent, raw, session, {"ref": ref, "option": value}, deadline, info, action)


def _slider(broker, agent, raw, session, args, deadline, info, action="select"):
    try:
        wanted = float(args["option"])
    except ValueError:
        raise BPError("invalid_argument", "A slider takes a number (bp select REF 7).",
                      context={"field": "option", "reason": "not_a_number"}) from None
    low, high = info.get("min"), info.get("max")
    if (low is not None and wanted < low) or (high is not None and wanted > high):
        raise BPError("invalid_argument", f"The slider's range is {low}-{high}.",
                      context={"field": "option", "reason": "out_of_range", "min": low, "max": high})
    snapshot.resolve(broker, agent, raw, session, args["ref"])  # current, enabled, shown, not covered
    session.dispatching()

    def on(op, **extra):
        return snapshot.on_ref(broker, agent, raw, session, args["ref"], worlds.helper("slider"), {"op": op, **extra}) or {}

    # Keys first, for a native range input too: a person's keys are what every framework handles
    # completely (React Aria ends a change — onChangeEnd — on key up, never on an input event).
    now = on("focus")
    for _ in range(SLIDER_KEYS):
        value = now.get("value")
        if value is None or value == wanted or time.monotonic() > deadline - 1.0:
            break
        up = value < wanted
        _key(session, "ArrowRight" if up else "ArrowLeft", 39 if up else 37)
        moved = on("read")
        for _ in range(10):  # a widget that redraws later (its next frame, a server's answer): a moment first
            if moved.get("value") != value:
                break
            time.sleep(0.03)
            moved = on("read")
        after = moved.get("value")
        if after is None or after == value or (after > wanted) != (value > wanted) and after != wanted:
            now = moved  # stuck at an end, or the step passes the value: stop at the nearest
            break
        now = moved
    low, high = now.get("min"), now.get("max")
    if not info.get("native") and now.get("value") != wanted and low is not None and high is not None and high > low:
        # Keys did not move it (a widget that takes only the pointer): press the track where the
        # value lies, as a person would.
        box = on("box")
        if box.get("top_world") and box.get("width", 0) > 0 and box.get("height", 0) > 0:
            share = (wanted - low) / (high - low)
            if box.get("vertical"):
                x, y = box["left"] + box["width"] / 2, box["top"] + box["height"] * (1 - share)
            else:
                x, y = box["left"] + box["width"] * share, box["top"] + box["height"] / 2
            for kind in ("mousePressed", "mouseReleased"):
                session.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                          "clickCount": 1}, abort=session.dialog_open)
            now = on("read")
            for _ in range(10):
                if now.get("value") == wanted:
                    break
                time.sleep(0.03)
                now = on("read")
    if info.get("native") and now.get("value") != wanted:
        # Keys could not reach it (a page that swallows them, a step finer than 200 presses):
        # the value and the input/change events a drag fires.
        now = on("set", value=args["option"])
    value = now.get("value")
    status = "verified" if value is not None and value == wanted else "mismatch"
    shown = str(now.get("text") or "")
    out = {"action": action, "status": status, "kind": "slider", "value": shown, "selected": [shown]}
    if status != "verified":
        out["reason"] = "value_not_reached"
    return out


