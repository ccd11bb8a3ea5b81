"""Smaller page representations (read, search, find, locate), frame selection, and eval.

read/search/find/locate run scripts/page.js in Browser Pilot's isolated world of the Agent's
selected frame: page scripts cannot see the script or change what it reports. eval is the one
escape hatch into the page's own (main) world.

Frames. `bp frame` lists the tab's frames from Page.getFrameTree depth-first (index 0 = the top
document); raw CDP frame ids stay here. The selection is per Agent, per tab: Agent.frames maps
the raw target id to the selected frame's raw id and the main-frame loader it was chosen under.
A new main document (a navigation of the tab) resets it to the top; a selected frame that has
gone away fails once with stale_ref (reason frame_detached) and resets to the top.
Page.getFrameTree lists only the frames rendered by one process, so the out-of-process
(cross-site) iframes attached to the tab (broker/tabs/session.py FrameSession) are spliced in below the
frame that embeds them, each with its own subtree, and siblings are put in document order of
their frame elements. A Frame carries the CDP session that renders it: scripts run there, and
geometry is mapped to the tab's viewport through every frame element above it.
"""

import json
import threading
import time
import weakref

from bp.errors import BPError, invalid_argument
from broker.records import store as commands
from broker.observe import snapshot as observe
from broker.tabs.session import FrameSession

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


ORDER_GROUP = "browser-pilot-frames"
# Document order of frame elements, shadow trees included (a host's shadow content comes before its
# light children, as the observation walker visits them).
ORDER_OWNERS = """function (...owners) {
  const key = (node) => {
    const steps = [];
    for (let n = node; n && n.parentNode; ) {
      const parent = n.parentNode, shadow = parent.nodeType === 11 && parent.host;
      steps.push([shadow ? 0 : 1, Array.prototype.indexOf.call(parent.children || parent.childNodes, n)]);
      n = shadow ? parent.host : parent;
    }
    return steps.reverse().flat();
  };
  const keys = owners.map(key);
  const cmp = (a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  };
  return owners.map((_, i) => i).sort((i, j) => cmp(keys[i], keys[j]));
}"""


def _tree(target, depth=0):
    """One process's frame tree from `target` (the tab's session or an out-of-process frame's)
    as {frame, children, session, remote} nodes, with the out-of-process frames attached under
    it spliced in below the frame that embeds them."""
    root = None
    nodes = {}
    stack = [(target.call("Page.getFrameTree", timeout_s=10.0)["frameTree"], None)]
    while stack:
        node, parent = stack.pop()
        entry = {"frame": node.get("frame") or {}, "children": [], "session": target, "remote": False}
        nodes[entry["frame"].get("id")] = entry
        if parent is None:
            root = entry
        else:
            parent["children"].append(entry)
        for child in reversed(node.get("childFrames") or []):
            stack.append((child, entry))
    if depth < observe.MAX_FRAME_DEPTH:
        for child in target.live_children():
            try:
                sub = _tree(child, depth + 1)
            except BPError:
                continue  # it went away meanwhile
            sub["remote"] = True
            (nodes.get(child.parent_frame_id) or root)["children"].append(sub)
    return root


def _in_document_order(entry, tab):
    """Siblings that include out-of-process frames, sorted by their frame elements (Page.getFrameTree
    already lists a process's own frames in order). Left as they are if that cannot be told."""
    children = entry["children"]
    if len(children) < 2 or not any(c["remote"] for c in children):
        return
    target, frame_id = entry["session"], entry["frame"].get("id")
    parent = None if target is tab and frame_id == tab.frame_id else \
        Frame(0, frame_id, None, "", "", entry["frame"].get("loaderId"), target)
    try:
        context_id = world_for(parent, tab)
        objects = []
        for child in children:
            owner = target.call("DOM.getFrameOwner", {"frameId": child["frame"].get("id")}, timeout_s=5.0)
            node = target.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                                   "executionContextId": context_id, "objectGroup": ORDER_GROUP},
                               timeout_s=5.0)
            objects.append(node["object"]["objectId"])
        reply = target.call("Runtime.callFunctionOn", {
            "functionDeclaration": ORDER_OWNERS, "objectId": objects[0], "returnByValue": True,
            "arguments": [{"objectId": o} for o in objects]}, timeout_s=5.0)
        order = (reply.get("result") or {}).get("value")
        if sorted(order or []) == list(range(len(children))):
            entry["children"] = [children[i] for i in order]
    except (BPError, KeyError, TypeError):
        pass
    finally:
        target.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": ORDER_GROUP})


def list_frames(session, ordered=True):
    """The tab's frames, depth-first in document order, out-of-process ones included;
    (frames, truncated). Without `ordered`, siblings may be out of document order (cheaper, for
    finding a frame by id)."""
    frames, stack, truncated = [], [(_tree(session), None)], False
    while stack:
        node, parent_index = stack.pop()
        if len(frames) >= MAX_FRAMES:
            truncated = True
            break
        frame = node["frame"]
        url = (frame.get("url") or "") + (frame.get("urlFragment") or "")
        entry = Frame(len(frames), frame.get("id"), parent_index, url[:16384], (frame.get("name") or "")[:4096],
                      frame.get("loaderId"), node["session"])
        frames.append(entry)
        if ordered:
            _in_document_order(node, session)
        for child in reversed(node["children"]):
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
    frames, _ = list_frames(session, ordered=False)
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


def _owner_box(target, frame_id):
    """The content box of the frame's element in `target`'s process, in the viewport of that
    process's local root (the tab's top document, or the out-of-process frame `target` is)."""
    owner = target.call("DOM.getFrameOwner", {"frameId": frame_id})
    return target.call("DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]})["model"]["content"]


def _embedder(frame_session, frame_id):
    """The session whose process renders the element of frame `frame_id` served by `frame_session`."""
    if isinstance(frame_session, FrameSession) and frame_id == frame_session.frame_id:
        return frame_session.parent  # an out-of-process frame's element is in its parent's process
    return frame_session


def frame_offset(frame):
    """Where the frame's viewport sits in the top-level viewport, in CSS px. DOM.getBoxModel
    reports quads in the coordinates of the frame's local root (the top document for frames of
    the tab's own process, else the out-of-process frame that process renders), scroll included,
    so the offsets add up through each out-of-process frame above it."""
    if frame is None:
        return 0.0, 0.0
    x = y = 0.0
    target, frame_id = frame.session, frame.frame_id
    for _ in range(observe.MAX_FRAME_DEPTH + 2):
        embedder = _embedder(target, frame_id)
        try:
            content = _owner_box(embedder, frame_id)
        except BPError:
            return 0.0, 0.0  # no box (e.g. a hidden iframe): nothing of it is on screen anyway
        x, y = x + float(content[0]), y + float(content[1])
        if not isinstance(embedder, FrameSession):
            return x, y
        target, frame_id = embedder, embedder.frame_id
    return x, y


REVEAL_GROUP = "browser-pilot-reveal"


def _reveal_up(frame, session, rect, deadline):
    """Centre `rect` (in the frame's viewport) in every document above the frame, innermost
    first; returns it in the top-level viewport."""
    frames, _ = list_frames(session, ordered=False)
    by_id = {f.frame_id: f for f in frames}
    current = by_id.get(frame.frame_id)
    while current is not None and current.parent_index is not None:
        parent = frames[current.parent_index]
        target = parent.session
        timeout_s = max(1.0, min(10.0, deadline - time.monotonic()))
        try:
            context_id = world_for(None if parent.top else parent, session)
            owner = target.call("DOM.getFrameOwner", {"frameId": current.frame_id}, timeout_s=timeout_s)
            node = target.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                                   "executionContextId": context_id, "objectGroup": REVEAL_GROUP},
                               timeout_s=timeout_s)
            reply = target.call("Runtime.callFunctionOn", {
                "functionDeclaration": observe.script("reveal.js"), "objectId": node["object"]["objectId"],
                "arguments": [{"value": rect}], "returnByValue": True}, timeout_s=timeout_s)
        except BPError:
            raise BPError("stale_ref", "The selected frame is gone; run 'bp frame' again.",
                          context={"field": "frame", "reason": "frame_detached"}, hint=FRAME_HINT) from None
        finally:
            target.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": REVEAL_GROUP})
        rect = (reply.get("result") or {}).get("value") or rect
        current = parent
    return rect


def check_dialog(session):
    if session.dialog_open():
        raise BPError("action_not_verified", "A JavaScript dialog is open in this tab and blocks the page.",
                      retryable=True, context=session.dialog_context())


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
    opts = {"op": "read", "selector": selector, "budget": 2 * limit + 10_000, "anchor": args.get("anchor")}
    result = run_script(frame, session, opts, deadline)
    if result and result.get("anchorMissing"):
        raise invalid_argument("anchor", "No element with that id (or name) in the text being read.",
                               anchor=args["anchor"][:200])
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


def find(agent, raw, session, args, deadline, broker=None):
    frame = selected_frame(agent, raw, session)
    opts = {"op": "find", "selector": args["selector"], "limit": args.get("limit", 20),
            "attributes": args.get("attributes") or [], "shadow": not args.get("noShadow"),
            "offset": list(frame_offset(frame))}
    if frame is None and broker is not None:
        # Each element a snapshot would list gets (or keeps) its ref number first, so a match
        # carries the same `ref` a snapshot shows. The ref table lives in the tab's own world.
        check_dialog(session)
        try:
            table = observe.register(broker, agent, raw, session,
                                     timeout_s=max(1.0, deadline - time.monotonic()))
            opts["refs"] = {"key": observe.world_key(agent.key), "table": table.id}
        except BPError as exc:
            if exc.code == "action_not_verified":  # a dialog opened meanwhile
                raise
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, args["selector"])
    return {"url": result["url"], "title": result["title"], "totalMatches": result["totalMatches"],
            "elements": result["elements"], "truncated": result["truncated"]}


def locate(agent, raw, session, args, deadline):
    frame = selected_frame(agent, raw, session)
    # In a frame of another process, scroll each document on its own (see scripts/reveal.js).
    remote = frame is not None and isinstance(frame.session, FrameSession)
    result = run_script(frame, session, {"op": "locate", "selector": args["selector"], "local": remote}, deadline)
    _selector_errors(result, args["selector"])
    if result.get("noLayout"):
        raise invalid_argument("selector", "The selector matched an element without a layout box (it is hidden).",
                               selector=args["selector"][:200], reason="no_layout")
    if remote:
        box = _reveal_up(frame, session, result["exact"], deadline)
        return {"x": round(box["left"] + box["width"] / 2), "y": round(box["top"] + box["height"] / 2),
                "top": round(box["top"]), "left": round(box["left"]), "width": result["width"],
                "height": result["height"]}
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


def _runtime(target, method, params, deadline, tab=None):
    """One Runtime call of eval, stopped by a JavaScript dialog (the tab's: dialogs of every frame
    are announced on the tab's session) or the command's deadline."""
    tab = tab or target
    stop_at = deadline - 0.5
    record = commands.current()
    cancelled = (lambda: record.cancel_requested) if record is not None else (lambda: False)
    try:
        reply = target.call(method, params, timeout_s=max(1.0, deadline - time.monotonic()) + 5.0,
                            abort=lambda: tab.dialog_open() or time.monotonic() > stop_at or cancelled())
    except BPError as exc:
        if "context was destroyed" in exc.message.lower():
            raise BPError("unknown_outcome", "The frame's document went away while the expression ran.",
                          context={"reason": "document_replaced"}) from None
        if "returned by value" in exc.message or "reference chain" in exc.message:
            raise invalid_argument("expression", "The result cannot be returned as JSON (e.g. a window or a "
                                   "cyclic object); return plain data instead.", reason="not_serializable") from None
        if "stack limit exceeded" in exc.message:  # Chrome's own bound on a value's nesting
            raise invalid_argument("expression", "The result nests too deeply to be returned as JSON; return "
                                   "flatter data instead.", reason="too_deep") from None
        raise
    if reply is None:
        if tab.dialog_open():
            raise BPError("unknown_outcome", "A JavaScript dialog opened during the evaluation and blocks the page.",
                          context=tab.dialog_context())
        # A script that never ends would hold the renderer (and this tab) for good.
        target.send_nowait("Runtime.terminateExecution")
        if cancelled():
            raise BPError("unknown_outcome", "The evaluation was cancelled while it ran; it may have changed the page.",
                          context={"reason": "cancelled"})
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
        # An out-of-process frame's own document is its session's default context.
        own_root = frame is not None and isinstance(target, FrameSession) and frame.frame_id == target.frame_id
        for attempt in (1, 2):
            if frame is not None and not own_root:
                params["contextId"] = main_world(frame, deadline)
            try:
                commands.dispatching()  # the expression may change the page: from here on, unknown
                result = _runtime(target, "Runtime.evaluate", params, deadline, session)
                break
            except BPError as exc:
                if frame is None or attempt == 2 or not observe.context_gone(exc):
                    raise
                # The frame has a new document since its context id was cached: find it again.
                _cache(_main_worlds, frame.session).pop(frame.frame_id, None)
        if result.get("subtype") == "promise" and result.get("objectId"):
            result = _runtime(target, "Runtime.awaitPromise", {"promiseObjectId": result["objectId"],
                                                               "returnByValue": True}, deadline, session)
        elif result.get("objectId"):
            result = _runtime(target, "Runtime.callFunctionOn", {
                "objectId": result["objectId"], "functionDeclaration": "function () { return this; }",
                "returnByValue": True, "objectGroup": EVAL_GROUP}, deadline, session)
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
