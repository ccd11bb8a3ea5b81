"""Smaller page representations (read, search, find, locate) and eval.

read/search/find/locate run scripts/page.js in Browser Pilot's isolated world of the Agent's
selected frame (broker/observe/frames.py): page scripts cannot see the script or change what it
reports. eval is the one escape hatch into the page's own (main) world.
"""

import json
import time

from bp.errors import BPError, invalid_argument
from broker.browser.connection import CDPError
from broker.observe import snapshot, worlds
from broker.observe import frames
from broker.tabs.session import FrameSession

MAX_EVAL_BYTES = 64 * 1024
EVAL_GROUP = "browser-pilot-eval"
# V8 keeps the completion value of an evaluation made in the "console" object group as the
# console's `$_`: a string too large to cross CDP whole is read back from there, cut in the page.
LAST_RESULT_GROUP = "console"
# Called on the result (awaited first if it is a promise): the value as it is when its JSON fits
# in `max` characters, else [null, the JSON's first `max` characters, its full UTF-8 size], so an
# over-large value never crosses CDP whole (a reply over the relay's bound was internal_error).
BOUNDED_FN = """async function (max, ...given) {
  const cut = (v) => {
    if (typeof v === "bigint") return {unserializable: v + "n"};
    if (typeof v === "number" && (!isFinite(v) || Object.is(v, -0))) return {unserializable: Object.is(v, -0) ? "-0" : String(v)};
    let text;
    try { text = typeof v === "string" ? v : JSON.stringify(v); } catch (e) { return [v]; }
    if (typeof text !== "string" || text.length <= max) return [v];
    let bytes = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c < 0xdc00) ? (i++, 4) : 3;
    }
    return [null, text.slice(0, max), bytes];
  };
  return cut(given.length ? given[0] : await this);  // given: a primitive, which `this` would box
}"""
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
            table = snapshot.register(broker, agent, raw, session,
                                     timeout_s=max(1.0, deadline - time.monotonic()))
            opts["refs"] = {"key": worlds.world_key(agent.key), "table": table.id}
        except BPError as exc:
            if exc.code == "action_not_verified":  # a dialog opened meanwhile
                raise
    result = run_script(frame, session, opts, deadline)
    _selector_errors(result, args["selector"])
    return {"url": result["url"], "title": result["title"], "totalMatches": result["totalMatches"],
            "elements": result["elements"], "truncated": result["truncated"]}


def locate(agent, raw, session, args, deadline, scroll=True):
    """`scroll=False` (the person's policy denies scrolling): the match is measured where it is,
    nothing scrolls, and `scrolled: false` says the box may lie outside the viewport."""
    frame = frames.selected_frame(agent, raw, session)
    # In a frame of another process, scroll each document on its own (see scripts/reveal.js).
    remote = frame is not None and isinstance(frame.session, FrameSession)
    result = run_script(frame, session, {"op": "locate", "selector": args["selector"], "local": remote,
                                         "noScroll": not scroll}, deadline)
    extra = {} if scroll else {"scrolled": False}
    _selector_errors(result, args["selector"])
    if result.get("noLayout"):
        raise invalid_argument("selector", "The selector matched an element without a layout box (it is hidden).",
                               selector=args["selector"][:200], reason="no_layout")
    if remote:
        box = frames.reveal_up(frame, session, result["exact"], deadline, scroll=scroll)
        return {"x": round(box["left"] + box["width"] / 2), "y": round(box["top"] + box["height"] / 2),
                "top": round(box["top"]), "left": round(box["left"]), "width": result["width"],
                "height": result["height"], **extra}
    # Measured after the script scrolled: the frame itself may have moved.
    ox, oy = frames.frame_offset(frame)
    return {"x": round(result["x"] + ox), "y": round(result["y"] + oy), "top": round(result["top"] + oy),
            "left": round(result["left"] + ox), "width": result["width"], "height": result["height"], **extra}


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
    record = tab.command()
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


def _retry_or_raise(exc, frame, attempt):
    if frame is None or attempt == 2 or not worlds.context_gone(exc):
        raise exc
    # The frame has a new document since its context id was cached: find it again.
    frames.forget_main_world(frame)


def _read_back_last_result(target, params, deadline, session):
    """The expression ran but its value (a primitive: a long string) was too large for one CDP
    reply: read it back from the console's `$_`, cut in the page (BOUNDED_FN)."""
    again = {k: v for k, v in params.items() if k not in ("replMode", "objectGroup")}
    again.update(expression=f"({BOUNDED_FN})({MAX_EVAL_BYTES}, $_)", includeCommandLineAPI=True,
                 returnByValue=True, objectGroup=EVAL_GROUP)
    try:
        boxed = _runtime(target, "Runtime.evaluate", again, deadline, session).get("value")
    except CDPError:
        boxed = None
    if not (isinstance(boxed, list) and len(boxed) == 3):
        raise BPError("result_too_large", "The expression's value is too large to return; return a part of it "
                      "(a slice, a count).", context={"field": "expression", "reason": "value_too_large"})
    return {"boxed": boxed}


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
              "objectGroup": LAST_RESULT_GROUP, "userGesture": False, "replMode": True}
    cut = None
    try:
        # An out-of-process frame's own document is its session's default context.
        own_root = frame is not None and isinstance(target, FrameSession) and frame.frame_id == target.frame_id
        for attempt in (1, 2):
            if frame is not None and not own_root:
                params["contextId"] = frames.main_world(frame, deadline)
            try:
                session.dispatching()  # the expression may change the page: from here on, unknown
                result = _runtime(target, "Runtime.evaluate", params, deadline, session)
                break
            except CDPError as exc:
                if not exc.too_large:
                    _retry_or_raise(exc, frame, attempt)
                    continue
                result = _read_back_last_result(target, params, deadline, session)
                break
            except BPError as exc:
                _retry_or_raise(exc, frame, attempt)
        if "boxed" in result:
            cut = result["boxed"]
        elif result.get("objectId"):
            # Objects (and promises, awaited there) come back by value, cut in the page if large.
            boxed = _runtime(target, "Runtime.callFunctionOn", {
                "objectId": result["objectId"], "functionDeclaration": BOUNDED_FN, "awaitPromise": True,
                "arguments": [{"value": MAX_EVAL_BYTES}], "returnByValue": True, "objectGroup": EVAL_GROUP},
                deadline, session).get("value")
            if isinstance(boxed, list) and len(boxed) == 3:
                cut = boxed
                result = {}
            elif isinstance(boxed, dict) and "unserializable" in boxed:
                result = {"unserializableValue": boxed["unserializable"]}
            elif isinstance(boxed, list) and len(boxed) == 1:
                result = {"value": boxed[0]} if boxed[0] is not None else {"value": None}
    finally:
        for group in (EVAL_GROUP, LAST_RESULT_GROUP):
            try:
                target.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": group})
            except BPError:
                pass
    if cut is not None:
        text = cut[1].encode("utf-8", "replace")[:MAX_EVAL_BYTES].decode("utf-8", "ignore")
        return {"value": text, "truncated": True, "bytes": cut[2]}
    if "value" in result:
        value = result["value"]
    elif "unserializableValue" in result:
        value = result["unserializableValue"]  # NaN, Infinity, -0, 12n: as their source text
    else:
        value = None  # undefined
    full, (value, truncated) = value, _bounded(value)
    if truncated:
        size = len(json.dumps(full, ensure_ascii=False, separators=(",", ":")).encode()) if not isinstance(full, str) \
            else len(full.encode("utf-8", "surrogatepass"))
        return {"value": value, "truncated": True, "bytes": size}
    return {"value": value, "truncated": truncated}
