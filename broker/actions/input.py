"""Actions: validate before dispatch, dispatch through CDP input on the tab's own session (never
activating a window), settle, then return a fresh observation with typed evidence."""

import os
import time

from bp.errors import BPError
from broker.observe import snapshot as observe, worlds

NAVIGATION_WAIT_S = 10.0
EXPECTED_TOGGLE = {"checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"}
NAVIGATION_STARTS = ("Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameNavigated")
# A load that ends with one of these and no new main-frame loader started no new document.
SAME_DOCUMENT_ENDS = ("Page.frameStoppedLoading", "Page.navigatedWithinDocument", "Page.downloadWillBegin",
                      "Browser.downloadWillBegin")


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


def settle(session, since, deadline, loader_before=None):
    """After input: if it started a main-frame navigation, wait until the new document is
    interactive. Returns "navigation" when the main document changed, None otherwise.
    `loader_before` is the main-frame loader before the input (a fast navigation may already
    have replaced it by the time this runs).

    One round trip through the tab's renderer orders us after every event the input caused, so
    no fixed sleep is needed to notice a navigation."""
    loader_before = session.loader if loader_before is None else loader_before
    if not session.dialog_open():
        session.call("Runtime.evaluate", {"expression": "0", "returnByValue": True},
                     timeout_s=max(0.1, deadline - time.monotonic()), abort=session.dialog_open)

    def main_frame_navigation(method, params):
        frame = params.get("frame") or {}
        frame_id = params.get("frameId") or frame.get("id")
        return method in NAVIGATION_STARTS and frame_id == session.frame_id and not frame.get("parentId")

    if session.dialog_open() or session.wait_for(main_frame_navigation, since, 0) is None:
        return None

    def outcome(method, params):
        """What the started load turned out to be: a new document (interactive), or a load that
        ended without one — a download, a fragment or history change, a 204, a cancelled one."""
        if params.get("frameId") != session.frame_id:
            return False
        if method == "Page.lifecycleEvent":
            return params.get("name") == "DOMContentLoaded" and params.get("loaderId") != loader_before
        if method in SAME_DOCUMENT_ENDS:
            return session.loader == loader_before  # else the new document's DOMContentLoaded decides
        return False

    cursor = since
    while True:
        found = session.next_event(outcome, cursor, max(0.0, min(NAVIGATION_WAIT_S, deadline - time.monotonic())))
        if found is None or found[1] == "Page.lifecycleEvent":
            break
        if session.loader == loader_before and not session.wait_for(main_frame_navigation, found[0], 0):
            return None  # no new document, and nothing started since
        cursor = found[0]
    if found is None and session.loader == loader_before:
        return None  # a started load that did not replace the document
    if found is None:
        raise BPError("unknown_outcome", "The input started a navigation that did not become interactive in time.",
                      context={"reason": "navigation_stalled"})
    return "navigation"


def download_started(broker, agent, session, since):
    """{index, fileName} of the download the input began in this tab (as `bp downloads` lists
    it), {} when one began that is not listed for this Agent, None when none began."""
    event = session.wait_for(lambda m, p: m in ("Page.downloadWillBegin", "Browser.downloadWillBegin")
                             and p.get("frameId") == session.frame_id, since, 0)
    if event is None:
        return None
    return broker.download_tracker.started(agent, event[1].get("guid")) or {}


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
    watch = Watch(broker, agent, session)
    loader_before = session.loader
    since = session.mark()
    _mouse(session, x, y, button, count, target)  # dispatched: from here on, failures are unknown_outcome
    navigated = settle(session, since, deadline, loader_before)
    changes = None if navigated else watch.quiet(deadline)
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
    download = download_started(broker, agent, session, since)
    if download is not None:
        effects.append("download_started")
        evidence["download"] = download
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
    if changes and not {"content_changed", "document_changed", "navigation", "download_started"} & set(effects):
        effects.append("content_changed")  # the page changed after the input (a menu, a panel)
    evidence["effects"] = effects
    if kind in EXPECTED_TOGGLE and "navigation" not in effects:
        if "checked_changed" in effects or (role == "radio" and after and after.get("checked")):
            evidence["status"] = "verified"
        else:
            evidence["status"], evidence["reason"] = "mismatch", "expected_state_unchanged"
    elif kind == "coordinates":
        evidence["status"], evidence["reason"] = ("verified" if effects else "unavailable"), "coordinate_target"
    else:
        with_effects(evidence, effects)
    return evidence


def with_effects(evidence, effects):
    """An input's evidence by what it was seen to change: verified by its effects, or unavailable
    when nothing changed that Browser Pilot can attribute (a menu shown by CSS :hover): the
    fresh observation then shows what appeared."""
    evidence["effects"] = effects
    if effects:
        evidence["status"] = "verified"
    else:
        evidence.update({"status": "unavailable", "reason": "no_observable_effect"})
    return evidence


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


def focus_script(broker, agent, session, opts, timeout_s=10.0):
    """Run scripts/focus.js (the focused element and DOM-change watch) in the tab's world."""
    opts = dict(opts, key=worlds.world_key(agent.key))
    answer = worlds.run_in_world(session, worlds.script("focus.js"), opts, timeout_s)
    return answer or {"lost": True}


QUIET_S = 0.12  # no DOM change for this long after an input: the page has answered it
QUIET_MAX_S = 1.0  # a page that never stops changing (a clock, a spinner) is observed anyway
QUIET_POLL_S = 0.03


class Watch:
    """DOM changes of the tab's top document from just before an input until the page is quiet.
    Counted in Browser Pilot's world and polled from here: a background tab's timers and frames
    are throttled, so the page's own clock is not a signal."""

    def __init__(self, broker, agent, session):
        self.broker, self.agent, self.session = broker, agent, session
        self.loader = session.loader
        try:
            focus_script(broker, agent, session, {"mode": "watch"}, timeout_s=5.0)
            self.on = True
        except BPError:
            self.on = False

    def _count(self, stop=False):
        """The changes counted so far: a few bytes of script per poll (the watch is focus.js's)."""
        import json

        slot = json.dumps("watch:" + worlds.world_key(self.agent.key))
        expression = (f"(() => {{ const s = globalThis.__browserPilot || {{}}, w = s[{slot}]; if (!w) return null;"
                      f" w.count += w.observer.takeRecords().length;"
                      f"{' w.observer.disconnect(); delete s[' + slot + '];' if stop else ''} return w.count; }})()")
        try:
            context_id, _ = self.session.world(worlds.WORLD_NAME)
            reply = self.session.call("Runtime.evaluate", {"expression": expression, "contextId": context_id,
                                                           "returnByValue": True}, timeout_s=5.0,
                                      abort=self.session.dialog_open)
        except BPError:
            return None
        return ((reply or {}).get("result") or {}).get("value")

    def quiet(self, deadline, only_if_changed=False):
        """Wait (bounded) until the page made no DOM change for QUIET_S; returns the number of
        changes since the watch began (None when unknown: a new document, a dialog). With
        only_if_changed, a page that has not changed at all by now is taken as settled (typing
        into a field changes no DOM)."""
        session = self.session
        if not self.on or session.dialog_open() or session.loader != self.loader:
            return None
        start = time.monotonic()
        end = min(start + QUIET_MAX_S, deadline - 1.0)
        count = self._count()
        changed_at = start
        if only_if_changed and count == 0:
            end = start
        while count is not None and time.monotonic() < end and time.monotonic() - changed_at < QUIET_S:
            time.sleep(QUIET_POLL_S)
            if session.dialog_open() or session.loader != self.loader:
                return None
            now = self._count()
            if now != count:
                count, changed_at = now, time.monotonic()
        self._count(stop=True)
        return count


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
        if session.wait_for(lambda m, p: m in NAVIGATION_STARTS and (p.get("frameId") or (p.get("frame") or {}).get("id"))
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


def type_text(broker, agent, raw, session, args, deadline):
    """Focus the ref, optionally clear it, insert the text, optionally press Enter. Every step
    re-checks that the page is the one the first step saw; after the first mutation a change
    ends as unknown_outcome and no remaining step reaches the changed page."""
    text, clear, submit = args["text"], args.get("clear", False), args.get("submit", False)
    from broker.forms import slider as sliders  # a slider takes a number as its value (issue 26)

    slider = sliders.slider_of(broker, agent, raw, session, args["ref"])
    if slider:
        return sliders.set_slider(broker, agent, raw, session, args["ref"], text, deadline, slider, "type")
    mark = os.urandom(6).hex()
    answer = observe.resolve(broker, agent, raw, session, args["ref"], focus=True, clear=clear, mark=mark)
    editable = answer["editable"]
    if editable.get("model"):
        # What the editor draws may be part of its text (lines out of view): count its model.
        before = editor_model(session, mark, None, clear, 0)
        if before is not None:
            editable = dict(editable, beforeLength=before["beforeLength"])
    target = input_point(session, answer)[0]
    pin = Pin(session, "type", lambda: observe.resolve(broker, agent, raw, session, args["ref"],
                                                       mode="state")["state"].get("focused"))
    since, dispatched, check = pin.since, pin.dispatched, pin.check
    check("focus")
    if clear:
        # Select-all + delete reaches rich editors and code editors that keep their own model.
        key_event(session, "a", "KeyA", 65, modifiers=4 if editable["mac"] else 2, target=target)
        key_event(session, "Backspace", "Backspace", 8, target=target)
        dispatched.append("clear")
        check("type")
    def read_back():
        try:
            answer = observe.resolve(broker, agent, raw, session, args["ref"], mode="readback", text=text,
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
    watch = Watch(broker, agent, session)
    method = send_text(session, text, pin, target) if text else None
    typed = None
    if submit:
        check("submit")
        # What the field holds before Enter is what was typed; after it, the app may clear it
        # (a todo added, a message sent): that is its answer, not a mismatch.
        typed = read_back()
        key_event(session, "Enter", "Enter", 13, text="\r", target=target)
        dispatched.append("submit")
    navigated = settle(session, since, deadline, pin.loader)
    evidence = {"action": "type", "kind": editable["kind"], "sensitive": editable["sensitive"],
                "beforeLength": editable["beforeLength"]}
    if method:
        evidence["method"] = method
    if navigated or session.dialog_open():
        evidence.update({"status": "unavailable", "reason": "navigation" if navigated else "dialog_opened"})
        return evidence
    watch.quiet(deadline, only_if_changed=not submit)
    readback = read_back()
    if typed is not None and readback is not None and typed["matches"] and not readback["matches"]:
        evidence.update({"expectedLength": typed["expectedLength"], "afterLength": readback["afterLength"],
                         "status": "verified", "effects": ["value_cleared" if readback["afterLength"] == 0
                                                           else "value_changed"]})
        return evidence
    if readback is None and (submit or session.loader != pin.loader):
        # A form submitted by Enter navigates a task later than the round trip settle() used.
        if session.loader != pin.loader or settle(session, since, deadline, pin.loader):
            evidence.update({"status": "unavailable", "reason": "navigation"})
            return evidence
    if readback is None and typed is not None and typed["matches"]:
        # Typed as expected, then Enter made the app replace the field itself.
        evidence.update({"expectedLength": typed["expectedLength"], "afterLength": typed["afterLength"],
                         "status": "verified", "effects": ["content_changed"]})
        return evidence
    if readback is None:
        evidence.update({"status": "unavailable", "reason": "active_element_not_readable"})
        return evidence
    evidence.update({"expectedLength": readback["expectedLength"], "afterLength": readback["afterLength"]})
    if readback.get("readFrom"):
        evidence["readFrom"] = readback["readFrom"]
    if readback["matches"]:
        evidence["status"] = "verified"
    else:
        evidence.update({"status": "mismatch", "reason": "value_mismatch"})
    return evidence


HOVER_ACK_S = 5.0


def hover(broker, agent, raw, session, args, deadline):
    """Move the pointer over a ref (menus that open on hover). A move is aligned to animation
    frames; its acknowledgement is awaited (bounded) so that the fresh observation sees the
    page's response to it."""
    answer = observe.resolve(broker, agent, raw, session, args["ref"])
    target, x, y = input_point(session, answer)
    before = answer["state"]
    focus_script(broker, agent, session, {"mode": "pin"})  # starts counting DOM changes
    loader, since = session.loader, session.mark()
    target.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y},
                timeout_s=max(0.1, min(HOVER_ACK_S, deadline - time.monotonic())), abort=session.dialog_open)
    navigated = settle(session, since, deadline, loader)
    effects = []
    if navigated or session.loader != loader:
        effects.append("navigation")
    if session.dialog_open():
        effects.append("dialog_opened")
    evidence = {"action": "hover", "kind": answer["role"]}
    if not effects:
        try:
            after = observe.resolve(broker, agent, raw, session, args["ref"], mode="state")
            if after["state"].get("expanded") != before.get("expanded"):
                effects.append("expanded_changed")
            effects += [e for e in focus_script(broker, agent, session, {"mode": "effects"}).get("effects", [])
                        if e == "content_changed"]
            if after.get("name") != answer["name"] and "content_changed" not in effects:
                effects.append("content_changed")
        except BPError:
            effects.append("document_changed")
    return with_effects(evidence, effects)
