"""Batch family: bp batch (cli/commands/batch.py).

Each step is a whole request of its own op (validated by bp/schemas.py BatchArgs before the first
step runs) and goes through that op's registered handler, the path a single command takes, with
a command record of its own whose parent is the batch's record: each step keeps its own
dispatched / unknown_outcome / command_expired rule, and dispatching a step dispatches the batch.
Steps take no observation of their own, so every ref in the batch means what it meant in the
Agent's last snapshot; the batch observes the tab once at the end.
"""

import time
from typing import Any, cast

from bp import protocol, schemas
from bp.errors import BPError, failure
from broker.records import store
from broker.registry import HANDLERS, Request, Tab, handler, on_tab

# Kept for the closing observation out of the batch's deadline (at most a fifth of it).
OBSERVE_RESERVE_S = 1.0
OBSERVATION_KEYS = ("title", "url", "page", "elements", "diff", "truncated", "truncationReasons", "hints",
                    "profileContextId")


def _step_request(batch: Request, index: int, step: dict[str, Any], deadline: float) -> Request:
    remaining_ms = int((deadline - time.monotonic()) * 1000)
    timeout_ms = min(step.get("timeoutMs", remaining_ms), remaining_ms)
    args = cast("dict[str, Any]", schemas.ARGS_SCHEMAS[step["op"]].load(step["args"]))  # an args schema loads an object
    return Request(op=step["op"], client=batch.client, args=args,
                   timeout_ms=timeout_ms, command_id=f"{batch.command_id}s{index + 1:02d}", installation=batch.installation,
                   batched=True)


def _step_record(broker, batch: Request, request: Request) -> store.Record:
    parent = batch.record
    record = store.Record(request.command_id, request.op, request.op in protocol.MUTATING,
                             request.timeout_ms / 1000.0, parent.generation if parent else broker.browser.generation,
                             None, None, parent.target if parent else None, broker.browser)
    record.parent = parent
    broker.commands.for_key(batch.client).add(record)
    return record


def run_step(broker, request: Request) -> dict[str, Any]:
    """One step, as the broker runs a single command of this op: the dispatch-time checks of
    Broker.dispatch (the person's policy: capability_denied, navigation bounds), then its
    handler; the reply envelope as a single command would get it."""
    try:
        broker.check_policy(request)  # a denied step is journaled there, and never reaches the browser
    except BPError as exc:
        return exc.envelope()
    return broker.run(HANDLERS[request.op].fn, request)


def _audit(broker, request: Request, reply: dict[str, Any]) -> None:
    broker.audit(request, reply)  # one audit line per mutating step, as for a single command


def _entry(step: dict[str, Any], reply: dict[str, Any], command_id: str | None) -> dict[str, Any]:
    entry = {"cmd": step["cmd"], "ok": bool(reply.get("ok"))}
    if command_id:
        entry["commandId"] = command_id
    body = {k: v for k, v in reply.items() if k != "ok"}
    if not entry["ok"]:
        entry["error"] = body
    elif step["op"] in (protocol.OP_OPEN, protocol.OP_SNAPSHOT):
        # They observe the tab themselves: their refs are the Agent's from now on, and the batch's
        # closing observation shows the page, so the step says only where it is.
        entry["result"] = {k: body[k] for k in ("title", "url") if k in body}
        entry["result"]["count"] = len(body.get("elements") or ())
        entry.update((k, body[k]) for k in ("evidence", "dialog") if k in body)
    elif "evidence" in body:  # an action: its evidence (and a dialog it opened)
        entry.update((k, body[k]) for k in ("evidence", "dialog") if k in body)
    else:
        entry["result"] = body
    return entry


def _close(tab: Tab) -> dict[str, Any]:
    """The closing observation: the open dialog that blocks the tab, or a fresh snapshot."""
    from broker.observe import snapshot

    if tab.session.dialog_open():
        return {"dialog": tab.session.dialog_brief()}
    return snapshot.observe(tab.broker, tab.agent, tab.raw, tab.session, tab.args.get("limit", 50),
                           timeout_s=tab.remaining(floor=1.0))


@handler(protocol.OP_BATCH)
def batch(broker, request: Request) -> dict[str, Any]:
    steps = request.args["steps"]
    reserve = min(OBSERVE_RESERVE_S, request.timeout_ms / 5000.0)
    deadline = request.deadline - reserve
    out, stopped = [], None
    for index, step in enumerate(steps):
        command_id = None
        if request.cancelled():
            reply = failure("command_cancelled", "The batch was cancelled before this step.",
                            context={"commandId": request.command_id})
        elif deadline - time.monotonic() < 0.05:
            reply = failure("command_expired", "The batch ran out of time before this step; nothing of it was sent.",
                            retryable=True, context={"reason": "batch_deadline"})
        else:
            sub = _step_request(request, index, step, deadline)
            sub.record = _step_record(broker, request, sub)
            if broker.journal is not None and sub.op in protocol.MUTATING:
                sub.audit_origin = broker._target_origin(sub)  # where it aimed, before it ran
            command_id = sub.command_id
            denied = False
            reply = run_step(broker, sub)  # (its tab work runs for sub.record)
            denied = reply.get("code") == "capability_denied"
            reply = sub.record.finish(reply)
            if not denied:  # a denial is journaled by the check itself
                _audit(broker, sub, reply)
        out.append(_entry(step, reply, command_id))
        if not reply.get("ok"):
            stopped = index
            break
    result = {"steps": out, "completed": sum(1 for e in out if e["ok"])}
    if stopped is not None:
        result["stoppedAt"] = stopped
    dispatched = lambda: request.record is not None and request.record.status == "dispatched"  # noqa: E731
    if request.cancelled():  # as for a single command: certain before dispatch, unknown after
        if not dispatched():
            raise BPError("command_cancelled", "The batch was cancelled before any step reached the browser.",
                          context={"commandId": request.command_id, **result})
        raise BPError("unknown_outcome", "The batch was cancelled after a step reached the browser.",
                      context={"action": "batch", "reason": "command_cancelled", **result})
    try:
        closing = on_tab(broker, request, _close)
    except BPError as exc:
        if not dispatched():
            if stopped is not None:
                # A step failed already and that failure is the answer: it is not lost because the
                # page could not be observed after it (a busy machine, a closing tab).
                return {**result, "observationError": {"code": exc.code, "message": exc.message}}
            raise
        raise BPError("unknown_outcome", "The batch was dispatched but the page could not be observed after it.",
                      context={"action": "batch", "reason": exc.code, **result}) from None
    return {**result, **closing}
