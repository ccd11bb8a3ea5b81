"""Smaller page representations (read, search, find, locate) and eval.

read/search/find/locate run scripts/page.js in Browser Pilot's isolated world of the Agent's
selected frame (broker/page/frames.py): page scripts cannot see the script or change what it
reports. eval is the one escape hatch into the page's own (main) world.
"""

import json
import time

from bp.errors import BPError, invalid_argument
from broker.browser.connection import CDPError
from broker.records import store as commands
from broker.observe import snapshot as observe, worlds
from broker.page import frames
from broker.tabs.session import FrameSession

MAX_EVAL_BYTES = 64 * 1024
EVAL_GROUP = "browser-pilot-eval"
STANDARD_ERRORS = frozenset({"Error", "TypeError", "ReferenceError", "SyntaxError", "RangeError", "EvalError",
                             "URIError", "AggregateError", "DOMException"})


def check_dialog(session):
    if session.dialog_open():
        raise BPError("action_not_verified", "A JavaScript dialog is open in this tab and blocks the page.",
                      retryable=True, context=session.dialog_context())


def run_script(frame, session, opts, deadline):
    """Run page.js with opts in the frame's isolated world (once more if its document changed)."""
    check_dialog(session)
    target = frame.session if frame is not None else session
    return worlds.once_more_if_replaced(
        lambda: worlds.call_in_world(target, frames.world_for(frame, session), worlds.script("page.js"), opts,
                                     max(1.0, deadline - time.monotonic())),
        lambda: frames.forget_world(frame, session))


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
    frame = frames.selected_frame(agent, raw, session)
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
    frame = frames.selected_frame(agent, raw, session)
    query = " ".join(args["query"].split())
    if not query:
        raise invalid_argument("query", "The query is empty.")
    selector = args.get("selector")
    opts = {"op": "search", "query": query, "selector": selector, "limit": args.get("limit", 20),
            "caseSensitive": bool(args.get("caseSensitive")), "wholeWord": bool(args.get("wholeWord")),
            "offset": list(frames.frame_offset(frame)), "visibleOnly": bool(args.get("visibleOnly"))}
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, selector or "")
    return {"url": result["url"], "title": result["title"], "totalMatches": result["totalMatches"],
            "matches": result["matches"], "truncated": result["truncated"]}


def find(agent, raw, session, args, deadline, broker=None):
    frame = frames.selected_frame(agent, raw, session)
    opts = {"op": "find", "selector": args["selector"], "limit": args.get("limit", 20),
            "attributes": args.get("attributes") or [], "shadow": not args.get("noShadow"),
            "offset": list(frames.frame_offset(frame)), "visibleOnly": bool(args.get("visibleOnly"))}
    if frame is None and broker is not None:
        # Each element a snapshot would list gets (or keeps) its ref number first, so a match
        # carries the same `ref` a snapshot shows. The ref table lives in the tab's own world.
        check_dialog(session)
        try:
            table = observe.register(broker, agent, raw, session,
                                     timeout_s=max(1.0, deadline - time.monotonic()))
            opts["refs"] = {"key": worlds.world_key(agent.key), "table": table.id}
        except BPError as exc:
            if exc.code == "action_not_verified":  # a dialog opened meanwhile
                raise
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, args["selector"])
    return {"url": result["url"], "title": result["title"], "totalMatches": result["totalMatches"],
            "elements": result["elements"], "truncated": result["truncated"]}


def locate(agent, raw, session, args, deadline):
    frame = frames.selected_frame(agent, raw, session)
    # In a frame of another process, scroll each document on its own (see scripts/reveal.js).
    remote = frame is not None and isinstance(frame.session, FrameSession)
    result = run_script(frame, session, {"op": "locate", "selector": args["selector"], "local": remote}, deadline)
    _selector_errors(result, args["selector"])
    if result.get("noLayout"):
        raise invalid_argument("selector", "The selector matched an element without a layout box (it is hidden).",
                               selector=args["selector"][:200], reason="no_layout")
    if remote:
        box = frames.reveal_up(frame, session, result["exact"], deadline)
        return {"x": round(box["left"] + box["width"] / 2), "y": round(box["top"] + box["height"] / 2),
                "top": round(box["top"]), "left": round(box["left"]), "width": result["width"],
                "height": result["height"]}
    # Measured after the script scrolled: the frame itself may have moved.
    ox, oy = frames.frame_offset(frame)
    return {"x": round(result["x"] + ox), "y": round(result["y"] + oy), "top": round(result["top"] + oy),
            "left": round(result["left"] + ox), "width": result["width"], "height": result["height"]}


# --- eval -------------------------------------------------------------------------------------------

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
    except CDPError as exc:
        if exc.context_gone:
            raise BPError("unknown_outcome", "The frame's document went away while the expression ran.",
                          context={"reason": "document_replaced"}) from None
        if exc.not_serializable:
            raise invalid_argument("expression", "The result cannot be returned as JSON (e.g. a window or a "
                                   "cyclic object); return plain data instead.", reason="not_serializable") from None
        if exc.too_deep:
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
    frame = frames.selected_frame(agent, raw, session)
    target = session if frame is None else frame.session
    params = {"expression": args["expression"], "awaitPromise": True, "returnByValue": False,
              "objectGroup": EVAL_GROUP, "userGesture": False, "replMode": True}
    try:
        # An out-of-process frame's own document is its session's default context.
        own_root = frame is not None and isinstance(target, FrameSession) and frame.frame_id == target.frame_id
        for attempt in (1, 2):
            if frame is not None and not own_root:
                params["contextId"] = frames.main_world(frame, deadline)
            try:
                commands.dispatching()  # the expression may change the page: from here on, unknown
                result = _runtime(target, "Runtime.evaluate", params, deadline, session)
                break
            except BPError as exc:
                if frame is None or attempt == 2 or not worlds.context_gone(exc):
                    raise
                # The frame has a new document since its context id was cached: find it again.
                frames.forget_frames.main_world(frame)
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
