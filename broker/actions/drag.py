"""bp drag: press on one ref, move to another, release (cli/commands/actions.py drag).

The browser tells which kind of drag the page reads. A page using HTML5 drag and drop
(draggable elements, SortableJS by default) starts a native drag, which Chromium hands to us
(Input.setInterceptDrags, then Input.dragIntercepted with the drag's data) and we deliver to the
target point as dragEnter, dragOver and drop. A page reading pointer events (jQuery UI's
sortable, pointer-based libraries) sees the pointer travel there with the button down, and the
release. The moves go out in steps, each acknowledged, so a library that follows the pointer
frame by frame sees it travel."""

import time
from typing import Any

from bp.errors import BPError, invalid_argument
from broker.actions import pipeline, settle as settling
from broker.actions.evidence import Effect, Evidence
from broker.actions.inputs import focus_script, input_point
from broker.observe import snapshot, worlds

STEPS = 8  # moves from the source to the target: a sortable list reorders as the pointer passes
STEP_ACK_S = 2.0  # a move is acknowledged after the frame it lands in (slower in a background tab)
# Over the target the pointer rests a moment before the release, as a person's does: a list that
# animates each move (SortableJS's 150 ms) ignores the moves that come while it animates.
HOLD_MOVES, HOLD_S = 3, 0.1


def _point(broker, agent, raw, session, ref, selector, field):
    """(input session, x, y) of a ref (the resolver's checks) or of a selector's first match."""
    if ref is not None:
        return input_point(session, snapshot.resolve(broker, agent, raw, session, ref))
    answer = worlds.by_selector(session, worlds.script("point.js"), {"selector": selector},
                                field="selector" if field == "ref" else "toSelector")
    if answer.get("refuse"):
        raise snapshot.refusal(answer, field=field)
    return session, answer["x"], answer["y"]


def drag(broker, agent, raw: str, session, args: dict[str, Any], deadline: float) -> Evidence:
    if args.get("ref") is not None and args.get("ref") == args.get("to") or \
            args.get("selector") is not None and args.get("selector") == args.get("toSelector"):
        raise invalid_argument("to", "Drag to another element than the one dragged.")
    target, x0, y0 = _point(broker, agent, raw, session, args.get("ref"), args.get("selector"), "ref")
    goal_target, x1, y1 = _point(broker, agent, raw, session, args.get("to"), args.get("toSelector"), "to")
    if goal_target is not target:
        raise invalid_argument("to", "The target is in another frame than the dragged element.")
    focus_script(broker, agent, session, {"mode": "pin"})  # starts counting DOM changes
    armed = settling.begin(session, raw)
    since = target.mark()

    def send(method, params):
        left = deadline - time.monotonic()
        if left <= 0:
            raise BPError("unknown_outcome", "The drag ran out of time half way; it was not finished.",
                          context={"action": "drag", "reason": "timeout"})
        return target.call(method, params, timeout_s=max(0.1, min(STEP_ACK_S, left)), abort=session.dialog_open)

    def mouse(kind, x, y, buttons):
        send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons,
                                          "clickCount": 1 if kind != "mouseMoved" else 0})

    native = None
    send("Input.setInterceptDrags", {"enabled": True})
    try:
        armed.armed()
        mouse("mouseMoved", x0, y0, 0)
        mouse("mousePressed", x0, y0, 1)  # dispatched: from here on, failures are unknown_outcome
        for step in range(1, STEPS + 1):
            x, y = x0 + (x1 - x0) * step / STEPS, y0 + (y1 - y0) * step / STEPS
            if native is None:
                mouse("mouseMoved", x, y, 1)
                found = target.wait_for(lambda m, p: m == "Input.dragIntercepted", since, 0)
                native = found[1]["data"] if found else None
                if native is not None:
                    send("Input.dispatchDragEvent", {"type": "dragEnter", "x": x, "y": y, "data": native})
            else:
                send("Input.dispatchDragEvent", {"type": "dragOver", "x": x, "y": y, "data": native})
        for _ in range(HOLD_MOVES):
            time.sleep(min(HOLD_S, max(0.0, deadline - time.monotonic() - 1.0)))
            if native is not None:
                send("Input.dispatchDragEvent", {"type": "dragOver", "x": x1, "y": y1, "data": native})
            else:
                mouse("mouseMoved", x1, y1, 1)
        if native is not None:
            send("Input.dispatchDragEvent", {"type": "drop", "x": x1, "y": y1, "data": native})
        mouse("mouseReleased", x1, y1, 0)
    finally:
        if target.alive and not session.dialog_open():
            try:
                target.call("Input.setInterceptDrags", {"enabled": False}, timeout_s=2.0)
            except BPError:
                pass
    settling.end(session, deadline)
    evidence = Evidence("drag", "native" if native is not None else "pointer")
    evidence = pipeline.caused(broker, agent, raw, session, armed, None, deadline, evidence)
    if not evidence.effects and "content_changed" in focus_script(broker, agent, session, {"mode": "effects"}).get(
            "effects", []):
        evidence.add(Effect.CONTENT_CHANGED)  # the list reordered (DOM changes since the pin)
    return evidence.by_effects()
