"""Files and media: screenshot, pdf, upload, download export (handlers: broker/commands/files.py).

Bytes made in the broker (a capture, a PDF) go into the Agent's private storage first (quotas,
broker/files/artifacts.py), are exported from there to the caller's path (bp/outputs.py) and the copy
is released. Replies carry metadata only, never bytes.

Annotated screenshots never touch the page's DOM: each requested ref is revalidated through the
observation's resolver (observe.on_ref: current, same node, same role and name) and measured in
Browser Pilot's isolated world; the viewport capture is then decoded, drawn on and re-encoded on
an OffscreenCanvas in that same isolated world (no element is created in the document).
"""

import base64
import json
import math
import os
import struct
import time
from collections.abc import Mapping
from typing import Any

from bp import outputs
from bp.errors import BPError, invalid_argument
from broker.observe import snapshot, worlds

MODEL_MAX_SIDE = 1568  # longest side of the model-sized dimensions reported for large captures
MAX_CAPTURE_SIDE = 16_384  # Chrome's largest texture: a full page is cut there (reported)
MAX_ANNOTATIONS = 200
ANNOTATION_WORLD = "browser-pilot.screenshot-annotation.v1"


# --- helpers -------------------------------------------------------------------------------------


def _timeout(deadline: float, floor: float = 1.0) -> float:
    return max(floor, deadline - time.monotonic())


def _in_world(session, source, opts, timeout_s, await_promise=False):
    """Run fn(opts) in Browser Pilot's isolated world of the tab's main document (returnByValue)."""
    return worlds.run_in_world(session, source, opts, timeout_s, await_promise=await_promise)


def png_size(data: bytes) -> tuple[int, int] | tuple[None, None]:
    """(width, height) from a PNG's IHDR chunk, or (None, None)."""
    if len(data) >= 24 and data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None, None


def model_size(width: int | None, height: int | None) -> tuple[int, int] | None:
    """Dimensions scaled to fit MODEL_MAX_SIDE (aspect kept), or None when already small enough."""
    if not width or not height or max(width, height) <= MODEL_MAX_SIDE:
        return None
    scale = MODEL_MAX_SIDE / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def _export(store, agent, args: dict[str, Any], kind: str, data: bytes, mime: str,
            default_name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Store (quota), export to the resolved path, release the copy; the file result."""
    item = store.put_bytes(agent, kind, data, mime)
    try:
        path, size = outputs.export(args, default_name, item.chunks())
    finally:
        store.release(item)
    result = {"file": path, "mimeType": mime, "sizeBytes": size}
    result.update(extra or {})
    return result


def timestamp() -> str:
    """UTC ISO time without milliseconds, ':' -> '-' (contract §1.3 default names)."""
    return time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())


# --- screenshot ----------------------------------------------------------------------------------

ELEMENT_BOX = """function (opts) {
  const el = document.querySelector(opts.selector);
  if (!el) return {missing: true};
  const r = el.getBoundingClientRect();
  return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};
}"""

# fn(element, args) for observe.on_ref: the element's box in the top viewport, through the
# same-process frames above it; null when a frame above it is out of this world's reach.
REF_BOX = """function (el, args) {
  const r = el.getBoundingClientRect();
  let x = r.left, y = r.top;
  for (let w = el.ownerDocument.defaultView; w && w !== window.top; w = w.parent) {
    let fe = null; try { fe = w.frameElement; } catch (e) {}
    if (!fe) return null;
    const fr = fe.getBoundingClientRect(), s = fe.ownerDocument.defaultView.getComputedStyle(fe);
    x += fr.left + fe.clientLeft + parseFloat(s.paddingLeft);
    y += fr.top + fe.clientTop + parseFloat(s.paddingTop);
  }
  return {x: x, y: y, width: r.width, height: r.height};
}"""

DRAW = """async function (opts) {
  const bin = atob(opts.png);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const bitmap = await createImageBitmap(new Blob([bytes], {type: "image/png"}));
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext("2d");
  ctx.drawImage(bitmap, 0, 0);
  const sx = bitmap.width / opts.viewportWidth, sy = bitmap.height / opts.viewportHeight;
  const th = Math.round(16 * sy);
  ctx.font = "bold " + Math.round(12 * sy) + "px sans-serif";
  ctx.textBaseline = "middle";
  for (const b of opts.boxes) {
    const x = b.x * sx, y = b.y * sy, w = b.width * sx, h = b.height * sy;
    ctx.fillStyle = "rgba(255, 215, 0, 0.25)";
    ctx.fillRect(x, y, w, h);
    ctx.strokeStyle = "crimson";
    ctx.lineWidth = 2 * sx;
    ctx.strokeRect(x + sx, y + sy, Math.max(0, w - 2 * sx), Math.max(0, h - 2 * sy));
    const label = String(b.ref);
    const tw = ctx.measureText(label).width + 6 * sx;
    const ly = y - th >= 0 ? y - th : y;
    ctx.fillStyle = "crimson";
    ctx.fillRect(x, ly, tw, th);
    ctx.fillStyle = "white";
    ctx.fillText(label, x + 3 * sx, ly + th / 2);
  }
  const blob = await canvas.convertToBlob({type: "image/png"});
  const out = new Uint8Array(await blob.arrayBuffer());
  let s = "";
  for (let i = 0; i < out.length; i += 0x8000) s += String.fromCharCode.apply(null, out.subarray(i, i + 0x8000));
  return btoa(s);
}"""


def _viewport(session):
    metrics = session.call("Page.getLayoutMetrics", timeout_s=10.0)
    layout = metrics.get("cssLayoutViewport") or metrics.get("layoutViewport") or {}
    return metrics, layout.get("clientWidth") or 0, layout.get("clientHeight") or 0


def _annotation_boxes(broker, agent, raw, session, refs, width, height, deadline):
    """[{ref, x, y, width, height}] clipped to the viewport, for the refs that can be placed."""
    obs = agent.observation(raw)
    if obs is None:
        raise snapshot.stale("no_observation", "There is no snapshot of this tab for this Agent; run 'bp snapshot'.")
    explicit = refs is not None
    wanted = refs if explicit else obs.listed[:MAX_ANNOTATIONS]
    boxes = []
    for ref in wanted:
        try:
            box = snapshot.on_ref(broker, agent, raw, session, ref, REF_BOX, timeout_s=_timeout(deadline))
        except BPError as exc:
            # A listed ref must be current; among "all refs", one that went stale is just not drawn.
            if explicit or exc.code != "stale_ref" or (exc.context or {}).get("reason") not in (
                    "node_detached", "node_changed", "frame_detached", "document_replaced"):
                raise
            continue
        if not box:
            continue  # inside a frame whose position this world cannot see (cross-site): skipped
        x0, y0 = max(0.0, box["x"]), max(0.0, box["y"])
        x1, y1 = min(float(width), box["x"] + box["width"]), min(float(height), box["y"] + box["height"])
        if x1 - x0 < 1 or y1 - y0 < 1:
            continue  # not in the viewport (or no box)
        boxes.append({"ref": ref, "x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0})
    return boxes


CAPTURE_WAKE_S = 0.25


def _capture(session, params: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
    """Page.captureScreenshot waits for a new frame, and a tab that draws none (a background
    tab) may never answer it; a second capture request makes Chrome produce the frame and
    answer both. So a capture not answered after CAPTURE_WAKE_S is asked again (then every
    second), and the first answer is taken; the others' replies are dropped on arrival."""
    started = time.monotonic()
    next_wake = [CAPTURE_WAKE_S]

    def wake():
        if time.monotonic() - started >= next_wake[0]:
            session.send_nowait("Page.captureScreenshot", params)
            next_wake[0] += 1.0
        return False  # never stop waiting for the first capture: its reply is the answer

    return session.call("Page.captureScreenshot", params, timeout_s=timeout_s, abort=wake)


def screenshot(broker, agent, raw: str, session, args: dict[str, Any], deadline: float, *, store) -> dict[str, Any]:
    from broker.page import content

    content.check_dialog(session)
    params: dict[str, Any] = {"format": "png"}
    extra: dict[str, Any] = {}
    boxes = None
    if args.get("full"):
        metrics, _, _ = _viewport(session)
        laid_out = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
        width, height = math.ceil(laid_out.get("width") or 0), math.ceil(laid_out.get("height") or 0)
        if width < 1 or height < 1:
            raise invalid_argument("full", "The page has no content to capture.", reason="no_layout")
        if width > MAX_CAPTURE_SIDE or height > MAX_CAPTURE_SIDE:
            extra["clipped"] = True
        params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": min(width, MAX_CAPTURE_SIDE),
                                                        "height": min(height, MAX_CAPTURE_SIDE), "scale": 1})
    elif args.get("selector"):
        box = _in_world(session, ELEMENT_BOX, {"selector": args["selector"]}, _timeout(deadline))
        if box is None or box.get("missing"):
            raise invalid_argument("selector", "No element matches the selector.", reason="not_found")
        if box["width"] < 1 or box["height"] < 1:
            raise invalid_argument("selector", "The element has no visible box.", reason="no_layout")
        params.update(captureBeyondViewport=True,
                      clip={"x": box["x"], "y": box["y"], "width": min(box["width"], MAX_CAPTURE_SIDE),
                            "height": min(box["height"], MAX_CAPTURE_SIDE), "scale": 1})
    elif "annotate" in args:
        _, vw, vh = _viewport(session)
        boxes = _annotation_boxes(broker, agent, raw, session, args["annotate"], vw, vh, deadline)
    reply = _capture(session, params, _timeout(deadline, 5.0))
    data = base64.b64decode(reply.get("data") or "")
    if boxes is not None:
        if boxes:
            encoded = _draw(session, reply["data"], boxes, vw, vh, deadline)
            data = base64.b64decode(encoded)
        extra["annotationCount"] = len(boxes)
    width, height = png_size(data)
    if width:
        extra.update(width=width, height=height)
        scaled = model_size(width, height)
        if scaled:
            extra.update(modelWidth=scaled[0], modelHeight=scaled[1])
    return _export(store, agent, args, "screenshot", data, "image/png", f"screenshot-{timestamp()}.png", extra)


def _draw(session, png_b64, boxes, vw, vh, deadline):
    """Composite the boxes on the capture in an isolated world of its own (OffscreenCanvas; no
    element is created in the document), one per main-frame document."""
    opts = {"png": png_b64, "boxes": boxes, "viewportWidth": vw or 1, "viewportHeight": vh or 1}
    expression = f"({DRAW})({json.dumps(opts)})"

    def draw():
        known = session.annotation_world
        if known is None or known[0] != session.loader:
            reply = session.call("Page.createIsolatedWorld", {"frameId": session.frame_id, "worldName": ANNOTATION_WORLD},
                                 timeout_s=10.0)
            known = session.annotation_world = (session.loader, reply["executionContextId"])
        return session.call("Runtime.evaluate", {"expression": expression, "contextId": known[1],
                                                 "returnByValue": True, "awaitPromise": True},
                            timeout_s=_timeout(deadline, 5.0))

    def forget():
        session.annotation_world = None

    result = worlds.once_more_if_replaced(draw, forget)
    value = (result.get("result") or {}).get("value")
    if result.get("exceptionDetails") or not isinstance(value, str):
        raise BPError("internal_error", "The annotated screenshot could not be drawn.")
    return value


# --- pdf -----------------------------------------------------------------------------------------


def pdf(broker, agent, raw: str, session, args: dict[str, Any], deadline: float, *, store) -> dict[str, Any]:
    from broker.page import content

    content.check_dialog(session)
    try:
        reply = session.call("Page.printToPDF", {"landscape": bool(args.get("landscape")), "printBackground": True},
                             timeout_s=_timeout(deadline, 5.0))
    except BPError as exc:
        if exc.code != "internal_error":
            raise
        raise BPError("action_not_verified", "Chrome could not print this page to PDF (printing works in headless "
                      "Chrome; a headed browser may refuse it).", context={"reason": "print_failed"}) from None
    data = base64.b64decode(reply.get("data") or "")
    return _export(store, agent, args, "pdf", data, "application/pdf", f"page-{timestamp()}.pdf")


# --- downloads -----------------------------------------------------------------------------------


def download_rows(tracker, agent) -> list[dict[str, Any]]:
    return [row for _, row in tracker.rows(agent)]


def download_export(tracker, store, agent, args: dict[str, Any]) -> dict[str, Any]:
    record = tracker.find(agent, args["selector"])
    if record.state == "failed" and record.reason == "quota_exceeded":
        raise BPError("quota_exceeded", "The download finished in Chrome, but Browser Pilot's copy did not fit its "
                      "storage quota; Chrome's own file is untouched.", context={"field": "selector", "limit": "storage"})
    if record.state in ("in_progress", "copying"):
        raise BPError("artifact_not_found", "The download has not finished yet; run 'bp downloads' again.",
                      retryable=True, context={"field": "selector", "state": "in_progress"})
    if record.state != "completed" or record.artifact is None:
        raise BPError("artifact_not_found", f"The download has no copy to export ({record.reason or record.state}).",
                      context={"field": "selector", "state": record.state})
    if record.artifact.expired():
        raise BPError("artifact_expired", "Browser Pilot's copy of this download expired.", context={"field": "selector"})
    item = store.get(agent, record.artifact.id)
    default = record.file_name or f"download-{int(record.created_at * 1000)}"
    path, size = outputs.export(args, default, item.chunks())
    return {"file": path, "mimeType": item.mime, "sizeBytes": size}


# --- upload --------------------------------------------------------------------------------------

# fn(element, args) for observe.on_ref: keep the ref's file input (the element itself, a label's
# control, or the one file input inside it) where the next evaluation in this world finds it.
STASH_INPUT = """function (el, args) {
  const isFile = (e) => e && e.localName === "input" && (e.type || "").toLowerCase() === "file";
  let input = isFile(el) ? el : (el.localName === "label" && isFile(el.control) ? el.control : null);
  if (!input) { const inner = el.querySelectorAll ? el.querySelectorAll("input[type=file]") : []; if (inner.length === 1) input = inner[0]; }
  if (!input) return {notFile: true};
  globalThis.__browserPilotUpload = input;
  return {ok: true, disabled: !!input.disabled};
}"""
TAKE_INPUT = "(() => { const e = globalThis.__browserPilotUpload; delete globalThis.__browserPilotUpload; return e || null; })()"
NTH_INPUT = ("((n) => { const all = document.querySelectorAll('input[type=file]'); "
             "return n <= all.length ? all[n - 1] : null; })({n})")
READ_FILES = """function (expected) {
  const files = this.files ? Array.from(this.files) : null;
  if (!files) return {readable: false};
  const out = {readable: true, count: files.length, nameMatched: files.length === 1 && files[0].name === expected};
  const seen = this.__browserPilotChange;  // what the input held when its change event was dispatched
  if (seen) out.atChange = {count: seen.length, nameMatched: seen.length === 1 && seen[0] === expected};
  return out;
}"""
# Before the files are assigned: note what the input holds when the browser dispatches its change
# event, in the capture phase (before any page listener). An uploader that takes the file and
# empties its input at once (Quasar's QUploader) then still shows that the page was given it.
# The note is an expando of Browser Pilot's world: the page cannot see or forge it.
WATCH_CHANGE = """function () {
  const el = this, win = el.ownerDocument.defaultView;
  delete el.__browserPilotChange;
  const heard = (event) => {
    if (event.target !== el) return;
    el.__browserPilotChange = Array.from(el.files || []).map((f) => f.name);
    win.removeEventListener("change", heard, true);
  };
  win.addEventListener("change", heard, true);
}"""


def _object(session, context_id, expression, timeout_s):
    reply = session.call("Runtime.evaluate", {"expression": expression, "contextId": context_id, "returnByValue": False},
                         timeout_s=timeout_s)
    result = reply.get("result") or {}
    if reply.get("exceptionDetails") or result.get("subtype") == "null" or not result.get("objectId"):
        return None
    return result["objectId"]


def _input_by_ref(broker, agent, raw, session, ref, timeout_s):
    """(session, objectId) of the file input a ref names (revalidated like any ref)."""
    found = snapshot.on_ref(broker, agent, raw, session, ref, STASH_INPUT, timeout_s=timeout_s)
    if not found or found.get("notFile"):
        raise invalid_argument("ref", "The ref is not a file input (nor a label or control holding exactly one).",
                               reason="not_file_input")
    if found.get("disabled"):
        raise BPError("action_not_verified", "The file input is disabled.", retryable=True,
                      context={"field": "ref", "reason": "disabled"})
    _, world, _ = snapshot.check_ref(broker, agent, raw, session, ref)  # the world that holds the element
    object_id = _object(world.session, world.context_id, TAKE_INPUT, timeout_s)
    if object_id is None:
        raise snapshot.stale("document_replaced")
    return world.session, object_id


def _input_by_nth(session, nth, timeout_s):
    object_id = worlds.once_more_if_replaced(
        lambda: _object(session, session.world(worlds.WORLD_NAME)[0], NTH_INPUT.replace("{n}", str(int(nth))),
                        timeout_s),
        session.forget_world)
    if object_id is None:
        raise invalid_argument("nth", f"The page has no file input number {nth}.", reason="no_file_input")
    return session, object_id


def upload_refused(reason: str) -> BPError:
    """The failure for an unusable upload source: never names the path."""
    messages = {"not_found": "The file to upload does not exist.", "symlink": "The file to upload is a symbolic link; give the file itself.",
                "not_regular_file": "The file to upload is not a regular file.", "not_readable": "The file to upload cannot be read.",
                "changed_while_copied": "The file to upload changed while it was copied.",
                "not_absolute": "The file to upload must be given as an absolute path."}
    return invalid_argument("filepath", messages.get(reason, "The file to upload cannot be used."), reason=reason)


def upload(broker, agent, raw: str, session, args: dict[str, Any], deadline: float, *, store) -> dict[str, Any]:
    """Copy the caller's file into the Agent's storage (kept there, with its base name, until the
    key is released or the copy expires: Chrome reads the file again when the form is sent) and
    assign it to the file input. Evidence never names the path."""
    from broker.page import content

    content.check_dialog(session)
    source = args["path"]
    if not os.path.isabs(source):
        raise upload_refused("not_absolute")
    name = os.path.basename(source)
    if not name or name in (".", ".."):
        raise upload_refused("not_regular_file")
    timeout_s = _timeout(deadline)
    # Find the input first: a wrong ref or index copies nothing.
    if "ref" in args:
        target, object_id = _input_by_ref(broker, agent, raw, session, args["ref"], timeout_s)
    else:
        target, object_id = _input_by_nth(session, args.get("nth", 1), timeout_s)
    try:
        item = store.copy_file(agent, "upload", source, "application/octet-stream", name, refuse=upload_refused)
    except BaseException:
        try:
            target.send_nowait("Runtime.releaseObject", {"objectId": object_id})
        except BPError:
            pass
        raise
    try:
        target.call("Runtime.callFunctionOn", {"functionDeclaration": WATCH_CHANGE, "objectId": object_id},
                    timeout_s=timeout_s)
    except BPError:
        pass  # the evidence then reads the input only
    try:
        target.call("DOM.setFileInputFiles", {"files": [item.path], "objectId": object_id}, timeout_s=timeout_s)
    except BPError:
        store.release(item)
        raise BPError("unknown_outcome", "The file may or may not have been assigned to the input.",
                      context={"action": "upload", "reason": "assign_failed"}) from None
    evidence: dict[str, Any] = {"action": "upload", "expectedFileCount": 1}
    try:
        reply = target.call("Runtime.callFunctionOn", {"functionDeclaration": READ_FILES, "objectId": object_id,
                                                        "arguments": [{"value": name}], "returnByValue": True},
                            timeout_s=timeout_s)
        state = (reply.get("result") or {}).get("value") or {}
    except BPError:
        state = {}
    finally:
        try:
            target.send_nowait("Runtime.releaseObject", {"objectId": object_id})
        except BPError:
            pass
    if not state.get("readable"):
        evidence.update(status="unavailable", fileCount=0, nameMatched=False, reason="input_not_readable")
    else:
        evidence.update(fileCount=state["count"], nameMatched=bool(state["nameMatched"]))
        at_change = state.get("atChange") or {}
        if state["count"] == 1 and state["nameMatched"]:
            evidence["status"] = "verified"
        elif state["count"] == 0 and at_change.get("count") == 1 and at_change.get("nameMatched"):
            # The page took the file at its change event and emptied its input (an uploader that
            # lets the same file be chosen again): it was given exactly that file.
            evidence.update(status="verified", fileCount=1, nameMatched=True, effects=["input_cleared_by_page"])
        else:
            evidence.update(status="mismatch", reason="file_count_mismatch" if state["count"] != 1 else "name_mismatch")
    return evidence
