"""Actions: validate before dispatch, dispatch through CDP input on the tab's own session (never
activating a window), settle, then return a fresh observation with typed evidence."""

import os
import time
from typing import Any

from bp.errors import BPError
from broker.actions import pipeline, settle as settling
from broker.actions.evidence import PAGE_CHANGES, STATE_EFFECTS, Effect, Evidence
from broker.observe import snapshot, worlds

EXPECTED_TOGGLE = {"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"}


BUTTONS = {"left": 1, "right": 2}  # a button's bit in the `buttons` mask a press reports


def _mouse(session, x, y, button, count, target=None):
    """Press and release at (x, y) of `target`'s viewport (the tab's own session, or the session
    of the out-of-process frame that renders the element)."""
    target = target or session
    # A move is aligned to animation frames, which a background tab barely gets: send it without
    # waiting for its acknowledgement; the press that follows flushes it, in order.
    target.send_nowait("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    # The press is not waited for either: the release that follows is acknowledged after it, in
    # order, so one round trip covers both.
    target.send_nowait("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": button,
                                                    "clickCount": count, "buttons": BUTTONS[button]})
    # A click that opens alert()/confirm() blocks the page before it acknowledges the input.
    target.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y, "button": button,
                                             "clickCount": count, "buttons": 0}, abort=session.dialog_open)


def input_point(session, answer):
    """(target session, x, y) for input at a resolved ref."""
    if "input" in answer:
        return answer["input"]
    return session, answer["x"], answer["y"]


SETTLING_REFUSALS = ("no_layout", "obscured")  # what an element still animating into place is refused for
SETTLING_WAIT_S = 1.0
SETTLING_POLL_S = 0.05


def resolve_steady(broker, agent, raw, session, ref, deadline, **extra):
    """observe.resolve for an action, waiting (at most SETTLING_WAIT_S, within the deadline) while
    the element is refused for having no layout yet or being covered: a dialog zooming in, a
    drawer sliding over, an overlay fading out. Any other refusal, or the same one after the
    wait, is the action's refusal as before (nothing was dispatched)."""
    until = min(time.monotonic() + SETTLING_WAIT_S, deadline - 2.0)
    waited = False
    while True:
        try:
            answer = snapshot.resolve(broker, agent, raw, session, ref, **extra)
            if waited:
                answer["steadied"] = True  # it took a wait: the page moved meanwhile
            return answer
        except BPError as exc:
            if exc.code != "action_not_verified" or (exc.context or {}).get("reason") not in SETTLING_REFUSALS \
                    or time.monotonic() + SETTLING_POLL_S >= until or session.dialog_open():
                raise
        time.sleep(SETTLING_POLL_S)
        waited = True


NEXT_FRAME = ("new Promise((done) => { requestAnimationFrame(() => setTimeout(done, 0)); "
              "setTimeout(done, 100); })")  # a tab in the background draws no frames: 100 ms at most


def next_frame(session, deadline):
    """Wait until the page has run its next animation frame (its scroll and resize handlers with
    it), in Browser Pilot's world; at most 100 ms."""
    try:
        context_id, _ = session.world(worlds.WORLD_NAME)
        session.call("Runtime.evaluate", {"expression": NEXT_FRAME, "contextId": context_id, "awaitPromise": True},
                     timeout_s=max(0.2, min(2.0, deadline - time.monotonic())), abort=session.dialog_open)
    except BPError:
        pass  # the second resolve says whether the element is still there


def click(broker, agent, raw: str, session, args: dict[str, Any], deadline: float) -> Evidence:
    button, count = args.get("button", "left"), args.get("clickCount", 1)
    popups_before = pipeline.opener_tabs(broker, raw)
    before = role = name_before = None
    under_before = None
    press_mark = os.urandom(6).hex()
    # Armed first, in flight with the hit test that follows: the page runs both, in order, before
    # the input (input reaches the page by another road than scripts, so the arm is awaited before
    # it). The hit test changes nothing in the page unless it scrolls or waits: then it is armed again.
    armed = settling.begin(session, raw, overlap=True)
    if "xy" in args:
        (x, y), target = args["xy"], session
        kind = "coordinates"
        under_before = under_point(session, x, y)
    else:
        answer = resolve_steady(broker, agent, raw, session, args["ref"], deadline, watchPress=press_mark)
        if answer.get("scrolled"):
            # Scrolled into view: the page hears the scroll at its next frame (a popover follows or
            # closes). Let it, then hit-test again where things are now, before pressing.
            next_frame(session, deadline)
            answer = resolve_steady(broker, agent, raw, session, args["ref"], deadline, watchPress=press_mark)
            answer["steadied"] = True
        if answer.get("steadied"):
            armed = settling.begin(session, raw)  # what happened meanwhile is not the click's
        target, x, y = input_point(session, answer)
        before, role, name_before = answer["state"], answer["role"], answer["name"]
        kind = role if role in EXPECTED_TOGGLE or role == "option" else "control"
    armed.armed()
    _mouse(session, x, y, button, count, target)  # dispatched: from here on, failures are unknown_outcome
    # The control's state after the click is read with the settle's first look: when the click
    # caused nothing, that one round trip answers both (Settle.take_ahead).
    peek = None if before is None else (
        lambda: snapshot.resolve_later(broker, agent, raw, session, args["ref"], pressMark=press_mark))
    settling.end(session, deadline, peek=peek)
    evidence = pipeline.caused(broker, agent, raw, session, armed, popups_before, deadline, Evidence("click", kind))
    navigated = evidence.has(Effect.NAVIGATION)
    after = elsewhere = None
    if before is not None and not navigated and not session.dialog_open():
        try:
            ahead = armed.take_ahead()  # (one not taken is dropped by the pipeline: settle.finish)
            answer = ahead.answer() if ahead is not None else snapshot.resolve(
                broker, agent, raw, session, args["ref"], mode="state", pressMark=press_mark)
            after = answer["state"]
            if answer.get("name") != name_before:
                evidence.add(Effect.CONTENT_CHANGED)
            elsewhere = answer.get("pressed") if isinstance(answer.get("pressed"), dict) else None
        except BPError:
            evidence.add(Effect.DOCUMENT_CHANGED)
    if before and after:
        for field, effect in STATE_EFFECTS:
            if before.get(field) != after.get(field):
                evidence.add(effect)
        evidence.facts.update({k: after[k] for k in ("checked", "expanded", "focused") if k in after})
    if not navigated and armed.mutations and not any(e in PAGE_CHANGES for e in evidence.effects):
        evidence.add(Effect.CONTENT_CHANGED)  # the page changed after the input (a menu, a panel)
    if elsewhere is not None:
        # The layout moved between the hit test and the press: another element took it. Whatever
        # changed is that element's doing; the observation shows the page as it is now.
        evidence.facts["pressedInstead"] = {k: v for k, v in elsewhere.items() if v}
        return evidence.mismatch("pressed_elsewhere")
    if kind in ("menuitemcheckbox", "menuitemradio") and not evidence.has(Effect.CHECKED_CHANGED, Effect.NAVIGATION) \
            and (after is None or not _shown(broker, agent, raw, session, args["ref"])):
        # A menu item that closes its menu on activation: its own state is gone with it, so it
        # cannot say whether it took; the fresh observation shows the menu button and the page.
        return evidence.unavailable("control_closed")
    if kind in EXPECTED_TOGGLE and not navigated:
        if evidence.has(Effect.CHECKED_CHANGED) or (role == "radio" and after and after.get("checked")):
            return evidence.verified()
        return evidence.mismatch("expected_state_unchanged")
    if kind == "coordinates":
        under_after = under_point(session, x, y) if not navigated and not session.dialog_open() else None
        evidence.facts["under"] = {"before": under_before, "after": under_after}
        # Never verified on an empty target (the page itself under the point: the layout moved).
        empty = under_before is None or under_before.get("tag") in ("html", "body")
        evidence.status = "verified" if evidence.effects and not empty else "unavailable"
        evidence.reason = "coordinate_target"
        return evidence
    return evidence.by_effects()


def _shown(broker, agent, raw, session, ref):
    """Whether the element still shows where a click could reach it (a menu that closed hides it)."""
    try:
        snapshot.resolve(broker, agent, raw, session, ref)
    except BPError as exc:
        return exc.code not in ("action_not_verified", "stale_ref")
    return True


def under_point(session, x, y):
    """What a coordinate click has under its point, {tag, role?, name? (≤ 40 chars), frame?}, or
    None (nothing, or the page could not be asked). Read in Browser Pilot's world: a field's
    value is never read, only an element's label or its own short text."""
    try:
        return worlds.run_in_world(session, worlds.helper("underPoint"), {"x": float(x), "y": float(y)}, 5.0)
    except BPError:
        return None


def key_event(session, key, code, vk, modifiers=0, text=None, target=None):
    target = target or session
    down = {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk,
            "modifiers": modifiers}
    if text:
        down["text"] = text
    target.call("Input.dispatchKeyEvent", down, abort=session.dialog_open)
    if not session.dialog_open():
        target.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk,
                                               "modifiers": modifiers}, abort=session.dialog_open)


KEYS_MAX = 256  # longer text is inserted in one step (per-key events cost two round trips a character)


def typing_keys(text):
    """[(key, code, vk, modifiers, text)] to type `text` on a US keyboard, or None when a
    character cannot be typed so (non-ASCII, a control character, a newline: Enter would submit)."""
    from bp import keys

    out = []
    for ch in text:
        if ch == " ":
            out.append((" ", "Space", 32, 0, " "))
            continue
        if not (ch.isascii() and ch.isprintable()):
            return None
        try:
            key, code, vk, shift = keys._character(ch)
        except keys.KeyError_:
            return None
        out.append((ch, code, vk, 8 if shift else 0, ch))
    return out


def send_text(session, text, pin, target=None):
    """Type `text` into what has focus: real key events (keydown, keypress, input, keyup per
    character: apps that listen for keys hear them) up to KEYS_MAX characters of typeable text,
    else one Input.insertText. Returns the method used. A dialog or a new document between two
    characters stops the rest (the caller's Pin reports it)."""
    target = target or session
    strokes = typing_keys(text) if len(text) <= KEYS_MAX else None
    if strokes is None:
        target.call("Input.insertText", {"text": text}, abort=session.dialog_open)
        pin.dispatched.append("type")
        return "insertText"
    for index, (key, code, vk, modifiers, char) in enumerate(strokes):
        if index and (session.dialog_open() or session.loader != pin.loader or not session.alive):
            pin.check("type")  # raises: the page changed while typing
        key_event(session, key, code, vk, modifiers, char, target=target)
        if not index:
            pin.dispatched.append("type")
    return "keys"


def focus_script(broker, agent, session, opts: dict[str, Any], timeout_s: float = 10.0) -> dict[str, Any]:
    """Run scripts/focus.js (the focused element and DOM-change watch) in the tab's world."""
    opts = dict(opts, key=worlds.world_key(agent.key))
    answer = worlds.run_in_world(session, worlds.script("focus.js"), opts, timeout_s)
    return answer or {"lost": True}


class Pin:
    """What a composite action saw before its first step — tab session, main-frame loader, no
    dialog, the focused element — checked again before every step. A change before the first
    mutation is a retryable action_not_verified; after it, unknown_outcome: the remaining steps
    are not sent to the changed page and nothing is replayed."""

    def __init__(self, session, action, still_focused):
        self.session = session
        self.action = action
        self.loader = session.loader
        self.since = session.mark()
        self.dispatched = []  # names of the steps sent so far
        self.still_focused = still_focused  # () -> bool; raises BPError when the target is gone

    def reason(self):
        session = self.session
        if not session.alive:
            return "session_changed"
        if session.dialog_open():
            return "dialog_opened"
        if session.loader != self.loader:
            return "document_changed"
        # One round trip orders us after the events the previous step caused.
        session.call("Runtime.evaluate", {"expression": "0"}, timeout_s=5.0, abort=session.dialog_open)
        if session.dialog_open():
            return "dialog_opened"
        if session.wait_for(lambda m, p: m in settling.NAVIGATION_STARTS and (p.get("frameId") or (p.get("frame") or {}).get("id"))
                            == session.frame_id, self.since, 0):
            return "loader_changed"
        try:
            if not self.still_focused():
                return "focus_changed"
        except BPError:
            return "target_changed"
        return None

    def check(self, step):
        reason = self.reason()
        if reason is None:
            return
        context = {"action": self.action, "step": step, "reason": reason, "dispatchedSteps": len(self.dispatched),
                   "remainingStepsStopped": True}
        if not self.dispatched:
            raise BPError("action_not_verified", f"The page changed before the {self.action} started.",
                          retryable=True, context=context)
        raise BPError("unknown_outcome", f"The page changed during the {self.action}; the remaining steps were not sent.",
                      context=context)


# Runs in the page's own world: an editor's model (its text as the editor holds it, not as it
# draws it) is reachable only there. Answers lengths and a verdict, never the text; with no text,
# only the model's length (before typing). Rich-text blocks count one a line, as typed.
EDITOR_MODEL = """(function (mark, text, clear, beforeLength) {
  const el = document.querySelector('[data-browser-pilot-readback="' + mark + '"]');
  if (!el) return null;
  el.removeAttribute("data-browser-pilot-readback");
  let value = null;
  try {
    const cm6 = (el.cmTile && el.cmTile.root && el.cmTile.root.view) || (el.cmView && el.cmView.rootView && el.cmView.rootView.view);
    if (el.CodeMirror && el.CodeMirror.getValue) value = el.CodeMirror.getValue();
    else if (el.env && el.env.editor && el.env.editor.getValue) value = el.env.editor.getValue();
    else if (cm6 && cm6.state && cm6.state.doc) value = cm6.state.doc.toString();
    else if (el.pmViewDesc && el.pmViewDesc.node && el.pmViewDesc.node.textBetween) {
      const doc = el.pmViewDesc.node;  // ProseMirror (TipTap…): the view's document node
      value = doc.textBetween(0, doc.content.size, "\\n", (leaf) => /break/i.test(leaf.type.name) ? "\\n" : "");
    } else if (el.__lexicalEditor && el.__lexicalEditor.getEditorState) {
      const state = el.__lexicalEditor.getEditorState();
      value = state.read(() => state._nodeMap.get("root").getChildren().map((block) => block.getTextContent()).join("\\n"));
    }
    else if (window.monaco && monaco.editor && monaco.editor.getEditors) {
      const ed = monaco.editor.getEditors().find((e) => { const n = e.getContainerDomNode(); return n === el || n.contains(el) || el.contains(n); });
      if (ed) value = ed.getValue();
    }
  } catch (e) { value = null; }
  if (typeof value !== "string") return null;
  if (text === null) return {beforeLength: value.length};
  const matches = clear ? value === text : value.length === beforeLength + text.length && value.endsWith(text);
  return {afterLength: value.length, expectedLength: (clear ? 0 : beforeLength) + text.length, matches: matches,
    readFrom: "editor_model"};
})"""


def editor_model(session, mark, text, clear, before_length):
    """The readback of an editor from its own model (see EDITOR_MODEL), or None; with text None,
    {"beforeLength": …} of the model."""
    import json

    expression = f"{EDITOR_MODEL}({json.dumps(mark)}, {json.dumps(text)}, {json.dumps(bool(clear))}, {int(before_length)})"
    try:
        reply = session.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, timeout_s=5.0,
                             abort=session.dialog_open)
    except BPError:
        return None
    return ((reply or {}).get("result") or {}).get("value")


def type_text(broker, agent, raw: str, session, args: dict[str, Any], deadline: float):
    """Focus the ref, optionally clear it, insert the text, optionally press Enter. Every step
    re-checks that the page is the one the first step saw; after the first mutation a change
    ends as unknown_outcome and no remaining step reaches the changed page."""
    text, clear, submit = args["text"], args.get("clear", False), args.get("submit", False)
    from broker.actions import slider as sliders  # a slider takes a number as its value (issue 26)

    slider = sliders.slider_of(broker, agent, raw, session, args["ref"])
    if slider:
        return sliders.set_slider(broker, agent, raw, session, args["ref"], text, deadline, slider, "type")
    mark = os.urandom(6).hex()
    answer = resolve_steady(broker, agent, raw, session, args["ref"], deadline, focus=True, clear=clear, mark=mark)
    editable = answer["editable"]
    if editable["kind"] == "date":
        return fill_value(broker, agent, raw, session, args, deadline, editable, input_point(session, answer)[0])
    if editable.get("model"):
        # What the editor draws may be part of its text (lines out of view): count its model.
        before = editor_model(session, mark, None, clear, 0)
        if before is not None:
            editable = dict(editable, beforeLength=before["beforeLength"])
    target = input_point(session, answer)[0]
    settling.begin(session, raw)  # after the resolve's marks: those are Browser Pilot's own
    pin = Pin(session, "type", lambda: snapshot.resolve(broker, agent, raw, session, args["ref"],
                                                       mode="state")["state"].get("focused"))
    dispatched, check = pin.dispatched, pin.check
    check("focus")
    if clear:
        # Select-all + delete reaches rich editors and code editors that keep their own model.
        key_event(session, "a", "KeyA", 65, modifiers=4 if editable["mac"] else 2, target=target)
        key_event(session, "Backspace", "Backspace", 8, target=target)
        dispatched.append("clear")
        check("type")
    def read_back():
        try:
            answer = snapshot.resolve(broker, agent, raw, session, args["ref"], mode="readback", text=text,
                                     clear=clear, mark=os.urandom(6).hex())
        except BPError:
            return None
        readback = answer["readback"]
        if readback is not None and answer.get("model"):
            model = editor_model(session, answer["model"]["mark"], text, clear, editable["beforeLength"])
            if model is not None:
                readback = dict(readback, **model)
        return readback

    if editable.get("editor") and not clear:
        # A code editor keeps its own cursor: type at the end of its text, as for a field.
        key_event(session, "End", "End", 35, modifiers=4 if editable["mac"] else 2, target=target)
    method = send_text(session, text, pin, target) if text else None
    typed = None
    if submit:
        check("submit")
        # What the field holds before Enter is what was typed; after it, the app may clear it
        # (a todo added, a message sent): that is its answer, not a mismatch.
        typed = read_back()
        key_event(session, "Enter", "Enter", 13, text="\r", target=target)
        dispatched.append("submit")
    settling.end(session, deadline, debounce=bool(text) and not submit)
    evidence = Evidence("type", editable["kind"], facts={"sensitive": editable["sensitive"],
                                                         "beforeLength": editable["beforeLength"]}, listed=False)
    if method:
        evidence.facts["method"] = method
    return typed_verdict(session, evidence, pin, typed, read_back, submit, deadline, Effect.CONTENT_CHANGED)


def interrupted(session, evidence):
    """The input's own page is gone or blocked: a new document, or a dialog (nothing to read back)."""
    armed = getattr(session, "settling", None)
    if armed is not None and armed.navigated():
        return evidence.unavailable("navigation")
    if session.dialog_open():
        return evidence.unavailable("dialog_opened")
    return None


def typed_verdict(session, evidence, pin, typed, read_back, submit, deadline, replaced_effect):
    """The verdict of typed text (`bp type`, `bp keyboard`) from the field's readback: `typed` is
    the readback before Enter (with --submit), read_back() the one after the settle. An app that
    clears the field after Enter (a todo added) or replaces it (`replaced_effect`) answered it."""
    if interrupted(session, evidence):
        return evidence
    readback = read_back()
    if typed is not None and readback is not None and typed["matches"] and not readback["matches"]:
        evidence.facts.update(expectedLength=typed["expectedLength"], afterLength=readback["afterLength"])
        evidence.add(Effect.VALUE_CLEARED if readback["afterLength"] == 0 else Effect.VALUE_CHANGED)
        return evidence.verified()
    if readback is None and (submit or session.loader != pin.loader):
        # A form submitted by Enter navigates a task later than the round trip settle() used.
        if session.loader != pin.loader or settling.navigation(session, pin.since, deadline, pin.loader):
            return evidence.unavailable("navigation")
    if readback is None and typed is not None and typed["matches"]:
        # Typed as expected, then Enter made the app replace the field, or moved focus on.
        evidence.facts.update(expectedLength=typed["expectedLength"], afterLength=typed["afterLength"])
        evidence.add(replaced_effect)
        return evidence.verified()
    if readback is None:
        return evidence.unavailable("active_element_not_readable")
    evidence.facts.update(expectedLength=readback["expectedLength"], afterLength=readback["afterLength"])
    if readback.get("readFrom"):
        evidence.facts["readFrom"] = readback["readFrom"]
    return evidence.verified() if readback["matches"] else evidence.mismatch("value_mismatch")


DATE_FORMATS = {"date": "YYYY-MM-DD", "time": "HH:MM or HH:MM:SS", "datetime-local": "YYYY-MM-DDTHH:MM",
                "month": "YYYY-MM", "week": "YYYY-Www"}


def fill_value(broker, agent, raw, session, args, deadline, editable, target):
    """`bp type` into a native date, time, datetime-local, month or week field: its value is set
    whole, in the form the field's value takes (what `bp read` shows, e.g. 2026-03-14), with the
    input and change events a picker fires; the readback compares the field's value. Typed
    characters would go to one segment of the field at a time, in the browser's locale order."""
    text, ref = args["text"], args["ref"]
    # Set whole in Browser Pilot's world (scripts/helpers.js fill: the browser's own value setter,
    # then the events a picker fires); a value the field does not take is put back.
    settling.begin(session, raw)  # (a refusal below abandons it: broker/actions/pipeline.py)
    done = snapshot.on_ref(broker, agent, raw, session, ref, worlds.helper("fill"), {"text": text}) or {}
    if done.get("malformed"):
        kind = done.get("inputType") or ""
        raise BPError("invalid_argument", f"A {kind} field takes its value as {DATE_FORMATS.get(kind, 'its own form')} "
                      "(the field's own value form, whatever the browser's language).",
                      context={"field": "text", "inputType": kind})
    if args.get("submit"):
        key_event(session, "Enter", "Enter", 13, text="\r", target=target)
    settling.end(session, deadline)
    evidence = Evidence("type", "date", facts={"sensitive": False, "beforeLength": editable["beforeLength"],
                                               "method": "value", "expectedLength": len(text)}, listed=False)
    if interrupted(session, evidence):
        return evidence
    try:
        readback = snapshot.on_ref(broker, agent, raw, session, ref, worlds.helper("readValue"), {"text": text}) or {}
    except BPError:
        return evidence.unavailable("active_element_not_readable")
    evidence.facts["afterLength"] = readback.get("afterLength", 0)
    # Not matching: the app changed it back (a min/max it enforces, a value it refuses).
    return evidence.verified() if readback.get("matches") else evidence.mismatch("value_mismatch")


HOVER_ACK_S = 5.0


def hover(broker, agent, raw: str, session, args: dict[str, Any], deadline: float) -> Evidence:
    """Move the pointer over a ref (menus that open on hover). A move is aligned to animation
    frames; its acknowledgement is awaited (bounded) so that the fresh observation sees the
    page's response to it."""
    answer = snapshot.resolve(broker, agent, raw, session, args["ref"])
    target, x, y = input_point(session, answer)
    before = answer["state"]
    focus_script(broker, agent, session, {"mode": "pin"})  # starts counting DOM changes
    armed = settling.begin(session, raw)
    target.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y},
                timeout_s=max(0.1, min(HOVER_ACK_S, deadline - time.monotonic())), abort=session.dialog_open)
    settling.end(session, deadline)
    evidence = pipeline.caused(broker, agent, raw, session, armed, None, deadline, Evidence("hover", answer["role"]))
    if not evidence.effects:
        try:
            after = snapshot.resolve(broker, agent, raw, session, args["ref"], mode="state")
            if after["state"].get("expanded") != before.get("expanded"):
                evidence.add(Effect.EXPANDED_CHANGED)
            if "content_changed" in focus_script(broker, agent, session, {"mode": "effects"}).get("effects", []) \
                    or after.get("name") != answer["name"]:
                evidence.add(Effect.CONTENT_CHANGED)
        except BPError:
            evidence.add(Effect.DOCUMENT_CHANGED)
    return evidence.by_effects()
