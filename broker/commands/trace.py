"""Trace family: trace.start, trace.stop, trace.export (cli/commands/trace.py).

Recording: broker/trace/book.py (called by the broker for every answered command); the page a
person opens: broker/trace/report.py. The export goes where every export goes (bp/outputs.py),
but never replaces an existing file unless asked (`file_exists`)."""

import os

from bp import outputs, protocol
from bp.errors import BPError
from broker.registry import handler
from broker.tabs import routing


@handler(protocol.OP_TRACE_START)
def start(broker, request):
    agent = routing.agent_for(broker, request, require_browser=False)
    trace, discarded = broker.traces.start(agent, bool(request.args.get("screenshots")))
    out = {"trace": trace.summary()}
    if discarded:
        out["discardedSteps"] = discarded  # the previous trace of this key, replaced
    return out


@handler(protocol.OP_TRACE_STOP)
def stop(broker, request):
    agent = routing.agent_for(broker, request, require_browser=False)
    trace = broker.traces.get(request.client, agent)
    if trace is None:
        return {"trace": None}
    trace.recording = False
    trace.stopped_at = trace.stopped_at or _now_ms()
    return {"trace": trace.summary()}


def _now_ms():
    import time

    return int(time.time() * 1000)


def _no_trace():
    return BPError("invalid_argument", "This Agent has no trace: run 'bp trace start' first.",
                   context={"field": "trace", "reason": "no_trace"})


@handler(protocol.OP_TRACE_EXPORT)
def export(broker, request):
    from broker.trace import report

    agent = routing.agent_for(broker, request, require_browser=False)
    trace = broker.traces.get(request.client, agent)
    if trace is None:
        raise _no_trace()
    args = request.args
    path, base = outputs.destination(args["outputDir"], args["file"])
    with trace.lock:
        steps = [{k: v for k, v in step.items() if k != "_size"} for step in trace.steps]
        items = dict(trace.images)
        meta = {"key": trace.key, "startedAt": trace.started_at, "recording": trace.recording,
                "screenshots": trace.screenshots, "dropped": trace.dropped, "imagesDropped": trace.images_dropped}
    images = {}
    for step in steps:
        images[step["seq"]] = _image(broker, agent, step, items.get(step["seq"]))
    data = report.render(meta, steps, images)
    create = bool(args.get("createOutputDir")) and base == os.path.normpath(args["outputDir"])
    # Written like every exported file: an existing file is file_exists unless --overwrite.
    path, size = outputs.write(path, base, [data], create_base=create, overwrite=bool(args.get("overwrite")))
    shown = sum(1 for v in images.values() if isinstance(v, bytes))
    return {"file": path, "mimeType": "text/html", "sizeBytes": size, "steps": len(steps), "images": shown,
            "trace": trace.summary()}


def _image(broker, agent, step, item):
    """The thumbnail's bytes, or a note why there is none (None: the step has no picture)."""
    if "image" not in step:
        return None
    if step["image"] is None:
        return step.get("imageNote") or "not_captured"
    if step["image"] == "pending":
        return "pending"
    if item is None:
        return "evicted"  # the trace's bound on images, or the key's storage needed the room
    try:
        broker.artifact_store.get(agent, item.id)
        return b"".join(item.chunks())
    except BPError:
        return "expired"  # the storage's lifetime or the Agent's release took it


