"""Smaller page representations (read, search, find, locate), frame selection, and eval.

read/search/find/locate run scripts/page.js in Browser Pilot's isolated world of the Agent's
selected frame: page scripts cannot see the script or change what it reports. eval is the one
escape hatch into the page's own (main) world.

Frames. `bp frame` lists the tab's frames from Page.getFrameTree depth-first (index 0 = the top
document); raw CDP frame ids stay here. The selection is per Agent, per tab: Agent.frames maps
the raw target id to the selected frame's raw id and the main-frame loader it was chosen under.
A new main document (a navigation of the tab) resets it to the top; a selected frame that has
gone away fails once with stale_ref (reason frame_detached) and resets to the top.
Page.getFrameTree lists the frames rendered by the tab's own process; a cross-origin frame in
another process is not in it yet. A Frame carries the CDP session that serves it, so such a
frame can later come with its own session without changing the callers.
"""

import json
import threading
import time
import weakref

from bp.errors import BPError, invalid_argument
from broker import observe

MAX_FRAMES = 1000
MAX_EVAL_BYTES = 64 * 1024
EVAL_GROUP = "browser-pilot-eval"
STANDARD_ERRORS = frozenset({"Error", "TypeError", "ReferenceError", "SyntaxError", "RangeError", "EvalError",
                             "URIError", "AggregateError", "DOMException"})
FRAME_HINT = "Run 'bp frame' to list the frames of the tab, then 'bp frame <index>'."


class Frame:
    """One frame as Browser Pilot addresses it: a public index and the internal ids behind it."""

    __slots__ = ("index", "frame_id", "parent_index", "url", "name", "loader", "session")

    def __init__(self, index, frame_id, parent_index, url, name, loader, session):
        self.index = index
        self.frame_id = frame_id
        self.parent_index = parent_index
        self.url = url
        self.name = name
        self.loader = loader
        self.session = session  # today the tab's session; an out-of-process frame brings its own

    @property
    def top(self):
        return self.index == 0

    def public(self, selected=False):
        row = {"index": self.index, "url": self.url, "name": self.name, "selected": selected}
        if self.parent_index is not None:
            row["parentIndex"] = self.parent_index
        return row


def list_frames(session):
    """The tab's frames, depth-first in document order; (frames, truncated)."""
    tree = session.call("Page.getFrameTree")["frameTree"]
    frames, stack, truncated = [], [(tree, None)], False
    while stack:
        node, parent_index = stack.pop()
        if len(frames) >= MAX_FRAMES:
            truncated = True
            break
        frame = node.get("frame") or {}
        url = (frame.get("url") or "") + (frame.get("urlFragment") or "")
        entry = Frame(len(frames), frame.get("id"), parent_index, url[:16384], (frame.get("name") or "")[:4096],
                      frame.get("loaderId"), session)
        frames.append(entry)
        for child in reversed(node.get("childFrames") or []):
            stack.append((child, entry.index))
    return frames, truncated


def selected_frame(agent, raw, session):
    """The Agent's selected frame of this tab, or None for the top document."""
    selection = agent.frames.get(raw)
    if selection is None:
        return None
    if selection["loader"] != session.loader:
        agent.frames.pop(raw, None)  # the tab has a new main document: back to the top
        return None
    frames, _ = list_frames(session)
    for frame in frames:
        if frame.frame_id == selection["frameId"]:
            return frame
    agent.frames.pop(raw, None)
    raise BPError("stale_ref", "The selected frame is gone; the selection is back at the top document.",
                  context={"field": "frame", "reason": "frame_detached"}, hint=FRAME_HINT)


def frames_result(agent, raw, session):
    frames, truncated = list_frames(session)
    current = selected_frame(agent, raw, session)
    chosen = current.index if current is not None else 0
    # Indexes may have shifted since the selection; report the frame that is actually selected.
    if current is not None:
        chosen = next((f.index for f in frames if f.frame_id == current.frame_id), 0)
    return {"frames": [f.public(f.index == chosen) for f in frames], "truncated": truncated}


def select_frame(agent, raw, session, index):
    frames, _ = list_frames(session)
    if not isinstance(index, int) or not 0 <= index < len(frames):
        raise invalid_argument("target", f"Frame index {index} is out of range (0-{len(frames) - 1}); run 'bp frame'.",
                               index=index, count=len(frames))
    frame = frames[index]
    if frame.top:
        agent.frames.pop(raw, None)
    else:
        agent.frames[raw] = {"frameId": frame.frame_id, "loader": session.loader}
    return {"frame": index, "url": frame.url}


# --- isolated worlds of subframes ------------------------------------------------------------------

_lock = threading.Lock()
_worlds = weakref.WeakKeyDictionary()  # TabSession -> {frame id: (frame loader, context id)}
_main_worlds = weakref.WeakKeyDictionary()  # TabSession -> {frame id: (frame loader, context id)}
MAX_CACHED = 256


def _cache(table, session):
    with _lock:
        cache = table.get(session)
        if cache is None:
            cache = table[session] = {}
        if len(cache) > MAX_CACHED:
            cache.clear()
        return cache


def world_for(frame, session):
    """Execution context id of Browser Pilot's isolated world in the frame's current document."""
    if frame is None:
        return session.world(observe.WORLD_NAME)[0]
    cache = _cache(_worlds, frame.session)
    known = cache.get(frame.frame_id)
    if known is not None and known[0] == frame.loader:
        return known[1]
    reply = frame.session.call("Page.createIsolatedWorld", {"frameId": frame.frame_id,
                                                            "worldName": observe.WORLD_NAME,
                                                            "grantUniveralAccess": True})
    cache[frame.frame_id] = (frame.loader, reply["executionContextId"])
    return reply["executionContextId"]


def _forget_world(frame, session):
    if frame is None:
        session.forget_world()
    else:
        _cache(_worlds, frame.session).pop(frame.frame_id, None)


def frame_offset(frame):
    """Where the frame's viewport sits in the top-level viewport, in CSS px. DOM.getBoxModel
    reports quads in the coordinates of the frame's local root (the top document for frames of
    the tab's own process), scroll included."""
    if frame is None:
        return 0.0, 0.0
    try:
        owner = frame.session.call("DOM.getFrameOwner", {"frameId": frame.frame_id})
        model = frame.session.call("DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]})["model"]
    except BPError:
        return 0.0, 0.0  # no box (e.g. a hidden iframe): nothing of it is on screen anyway
    return float(model["content"][0]), float(model["content"][1])


def check_dialog(session):
    if session.dialog_open():
        raise BPError("action_not_verified", "A JavaScript dialog is open in this tab and blocks the page.",
                      retryable=True, context={"reason": "dialog_open", "dialogType": session.dialog.get("type")})


def _call_script(session, context_id, opts, timeout_s):
    expression = f"({observe.script('page.js')})({json.dumps(opts)})"
    reply = session.call("Runtime.evaluate", {"expression": expression, "contextId": context_id,
                                              "returnByValue": True, "awaitPromise": False}, timeout_s=timeout_s)
    if reply.get("exceptionDetails"):
        details = reply["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text") or "script failed"
        raise BPError("internal_error", "The page script of Browser Pilot failed in the page.",
                      context={"detail": text.splitlines()[0][:200]})
    return (reply.get("result") or {}).get("value")


def run_script(frame, session, opts, deadline):
    """Run page.js with opts in the frame's isolated world (once more if its document changed)."""
    check_dialog(session)
    target = frame.session if frame is not None else session
    for attempt in (1, 2):
        context_id = world_for(frame, session)
        try:
            return _call_script(target, context_id, opts, max(1.0, deadline - time.monotonic()))
        except BPError as exc:
            if attempt == 2 or not observe.context_gone(exc):
                raise
            _forget_world(frame, session)


def _selector_errors(result, selector):
    if result is None:
        raise BPError("internal_error", "The page script returned nothing.")
    if result.get("badSelector"):
        raise invalid_argument("selector", "The selector is not valid CSS.", selector=selector[:200])
    if result.get("miss"):
        raise BPError("invalid_argument", f"Selector {selector[:200]!r} did not match.",
                      context={"field": "selector", "selector": selector[:200]},
                      hint=f'Selector "{selector[:200]}" did not match.')


def read(agent, raw, session, args, deadline):
    frame = selected_frame(agent, raw, session)
    limit = args.get("limit", 3000)
    selector = args.get("selector")
    opts = {"op": "read", "selector": selector, "budget": 2 * limit + 10_000}
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, selector or "")
    text = result["text"]
    truncated = bool(result.get("more")) or len(text) > limit
    text = text[:limit]
    return {"title": result["title"], "url": result["url"], "text": text, "length": len(text), "truncated": truncated}


def search(agent, raw, session, args, deadline):
    frame = selected_frame(agent, raw, session)
    query = " ".join(args["query"].split())
    if not query:
        raise invalid_argument("query", "The query is empty.")
    selector = args.get("selector")
    opts = {"op": "search", "query": query, "selector": selector, "limit": args.get("limit", 20),
            "caseSensitive": bool(args.get("caseSensitive")), "wholeWord": bool(args.get("wholeWord")),
            "offset": list(frame_offset(frame))}
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, selector or "")
    return {"url": result["url"], "title": result["title"], "totalMatches": result["totalMatches"],
            "matches": result["matches"], "truncated": result["truncated"]}


def find(agent, raw, session, args, deadline):
    frame = selected_frame(agent, raw, session)
    opts = {"op": "find", "selector": args["selector"], "limit": args.get("limit", 20),
            "attributes": args.get("attributes") or [], "shadow": not args.get("noShadow"),
            "offset": list(frame_offset(frame))}
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, args["selector"])
    return {"url": result["url"], "title": result["title"], "totalMatches": result["totalMatches"],
            "elements": result["elements"], "truncated": result["truncated"]}


def locate(agent, raw, session, args, deadline):
    frame = selected_frame(agent, raw, session)
    result = run_script(frame, session, {"op": "locate", "selector": args["selector"]}, deadline)
    _selector_errors(result, args["selector"])
    if result.get("noLayout"):
        raise invalid_argument("selector", "The selector matched an element without a layout box (it is hidden).",
                               selector=args["selector"][:200], reason="no_layout")
    # Measured after the script scrolled: the frame itself may have moved.
    ox, oy = frame_offset(frame)
    return {"x": round(result["x"] + ox), "y": round(result["y"] + oy), "top": round(result["top"] + oy),
            "left": round(result["left"] + ox), "width": result["width"], "height": result["height"]}


# --- eval -------------------------------------------------------------------------------------------

class _ContextCollector:
    """Stands in for a TabSession in Targets.sessions on a short-lived helper session: keeps
    the default (main-world) execution contexts that Runtime.enable announces, drops the rest."""

    def __init__(self):
        self.contexts = {}

    def deliver(self, method, params):
        if method == "Runtime.executionContextCreated":
            context = params.get("context") or {}
            aux = context.get("auxData") or {}
            if aux.get("isDefault") and aux.get("frameId"):
                self.contexts[aux["frameId"]] = context.get("id")

    def detached(self):
        pass


def main_world(frame, deadline):
    """The execution context id of the page's own (main) world in a subframe.

    Runtime.evaluate without a context id reaches the top document's main world, but a
    subframe's main-world context id is only announced by Runtime.enable. Enabling Runtime on
    the tab's own session would stream every console call and context event into it for good
    (and is detectable by the page while on), and the alternatives are wrong: an isolated world
    is not the main world, and the parent's `iframe.contentWindow.eval` obeys the frame's CSP
    (which DevTools evaluation does not) and fails for cross-origin frames. So: attach a helper
    session to the tab, enable Runtime there only, keep the announced ids, detach. Context ids
    belong to the renderer, not the session, so the tab's session can use them; they are cached
    per frame document, so this happens once per document of a frame."""
    cache = _cache(_main_worlds, frame.session)
    known = cache.get(frame.frame_id)
    if known is not None and known[0] == frame.loader:
        return known[1]
    session = frame.session
    conn, targets = session.conn, session.targets
    timeout_s = max(1.0, min(10.0, deadline - time.monotonic()))
    target_id = getattr(session, "raw_id", None) or session.frame_id  # an OOPIF's target id is its frame id
    helper = conn.cdp("Target.attachToTarget", {"targetId": target_id, "flatten": True},
                      timeout_s=timeout_s)["sessionId"]
    collector = _ContextCollector()
    targets.sessions[helper] = collector  # its events come here (on the relay thread), in order
    try:
        conn.cdp("Runtime.enable", session_id=helper, timeout_s=timeout_s)
    finally:
        targets.sessions.pop(helper, None)
        conn.send_nowait("Target.detachFromTarget", {"sessionId": helper})
    context_id = collector.contexts.get(frame.frame_id)
    if context_id is None:
        raise BPError("action_not_verified", "The selected frame has no script context now (still loading?).",
                      retryable=True, context={"reason": "no_context"})
    cache[frame.frame_id] = (frame.loader, context_id)
    return context_id


def _exception(details):
    exception = details.get("exception") or {}
    kind = exception.get("className") or ""
    if kind not in STANDARD_ERRORS:
        kind = ""  # a page-defined class name is page (or expression) text
    context = {"field": "expression", "reason": "syntax_error" if kind == "SyntaxError" else "exception"}
    if kind:
        context["exceptionType"] = kind
    for key in ("lineNumber", "columnNumber"):
        if isinstance(details.get(key), int):
            context[key] = details[key]
    # The page's error text can carry page data or the expression itself: never echoed.
    return BPError("invalid_argument",
                   f"The expression threw {kind or 'an exception'} in the page. Its message is not shown "
                   "(it may hold page data); catch it and return String(error) to see it.",
                   context=context)


def _bounded(value):
    """(value, truncated) with the value's JSON at most MAX_EVAL_BYTES."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode()) <= MAX_EVAL_BYTES:
        return value, False
    source = value if isinstance(value, str) else text
    return source.encode()[:MAX_EVAL_BYTES].decode("utf-8", "ignore"), True


def _runtime(target, method, params, deadline):
    """One Runtime call of eval, stopped by a JavaScript dialog or the command's deadline."""
    stop_at = deadline - 0.5
    try:
        reply = target.call(method, params, timeout_s=max(1.0, deadline - time.monotonic()) + 5.0,
                            abort=lambda: target.dialog_open() or time.monotonic() > stop_at)
    except BPError as exc:
        if "context was destroyed" in exc.message.lower():
            raise BPError("unknown_outcome", "The frame's document went away while the expression ran.",
                          context={"reason": "document_replaced"}) from None
        if "returned by value" in exc.message or "reference chain" in exc.message:
            raise invalid_argument("expression", "The result cannot be returned as JSON (e.g. a window or a "
                                   "cyclic object); return plain data instead.", reason="not_serializable") from None
        raise
    if reply is None:
        if target.dialog_open():
            raise BPError("unknown_outcome", "A JavaScript dialog opened during the evaluation and blocks the page.",
                          context={"reason": "dialog_open", "dialogType": (target.dialog or {}).get("type")})
        # A script that never ends would hold the renderer (and this tab) for good.
        target.send_nowait("Runtime.terminateExecution")
        raise BPError("unknown_outcome", "The expression did not finish before the command's deadline; it was stopped.",
                      context={"reason": "deadline"})
    if reply.get("exceptionDetails"):
        raise _exception(reply["exceptionDetails"])
    return reply.get("result") or {}


def evaluate(agent, raw, session, args, deadline):
    """Run the expression in the page's main world of the selected frame; awaits promises.

    replMode allows top-level await (and a `let` declared again by a later eval), but its
    completion value is not awaited: a promise the expression returns comes back as an object,
    awaited here with Runtime.awaitPromise. Objects come back by reference first, then by value,
    so a promise is never flattened to {} before it settles."""
    check_dialog(session)
    frame = selected_frame(agent, raw, session)
    target = session if frame is None else frame.session
    params = {"expression": args["expression"], "awaitPromise": True, "returnByValue": False,
              "objectGroup": EVAL_GROUP, "userGesture": False, "replMode": True}
    try:
        for attempt in (1, 2):
            if frame is not None:
                params["contextId"] = main_world(frame, deadline)
            try:
                result = _runtime(target, "Runtime.evaluate", params, deadline)
                break
            except BPError as exc:
                if frame is None or attempt == 2 or not observe.context_gone(exc):
                    raise
                # The frame has a new document since its context id was cached: find it again.
                _cache(_main_worlds, frame.session).pop(frame.frame_id, None)
        if result.get("subtype") == "promise" and result.get("objectId"):
            result = _runtime(target, "Runtime.awaitPromise", {"promiseObjectId": result["objectId"],
                                                               "returnByValue": True}, deadline)
        elif result.get("objectId"):
            result = _runtime(target, "Runtime.callFunctionOn", {
                "objectId": result["objectId"], "functionDeclaration": "function () { return this; }",
                "returnByValue": True, "objectGroup": EVAL_GROUP}, deadline)
    finally:
        try:
            target.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": EVAL_GROUP})
        except BPError:
            pass
    if "value" in result:
        value = result["value"]
    elif "unserializableValue" in result:
        value = result["unserializableValue"]  # NaN, Infinity, -0, 12n: as their source text
    else:
        value = None  # undefined
    value, truncated = _bounded(value)
    return {"value": value, "truncated": truncated}
