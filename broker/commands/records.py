"""Command recovery family: commands, command, cancel (cli/commands/commands.py).

Answered on the front loop (bp/ops.py, FRONT): they only read or flag in-memory records, and a cancel
must not queue behind the command it cancels."""

from bp import protocol
from bp.errors import BPError
from broker.registry import handler


def _record(broker, request):
    book = broker.commands.for_key(request.client, create=False)
    record = book.get(request.args["commandId"]) if book is not None else None
    if record is None:
        # Another key's command is indistinguishable from one that never existed.
        raise BPError("invalid_argument", "No such command for this Agent (records are kept for 30 minutes).",
                      context={"field": "commandId"})
    return record


def _outcome(record, out):
    """A finished command's recorded answer: `result` when it succeeded, else `error: {code,
    message, data: {code, retryable, context?, remediation?}}` (the contract's shape)."""
    reply = record.reply
    if reply is None:
        return out
    if reply.get("ok"):
        out["result"] = reply
        return out
    data = {"code": reply.get("code"), "retryable": bool(reply.get("retryable"))}
    for key in ("context", "remediation", "hint", "resultOmitted", "sizeBytes"):
        if key in reply:
            data[key] = reply[key]
    out["error"] = {"code": reply.get("code"), "message": reply.get("error") or "", "data": data}
    return out


@handler(protocol.OP_COMMANDS)
def list_commands(broker, request):
    book = broker.commands.for_key(request.client, create=False)
    statuses = set(request.args.get("status") or ()) or None
    rows = book.list(statuses, limit=request.args.get("limit", 20)) if book is not None else []
    return {"commands": [r.descriptor() for r in rows]}


@handler(protocol.OP_COMMAND)
def show_command(broker, request):
    record = _record(broker, request)
    return _outcome(record, {"command": record.descriptor()})


@handler(protocol.OP_CANCEL)
def cancel(broker, request):
    """Before dispatch a cancel is certain; after dispatch it only asks, and never claims that
    anything was rolled back."""
    record = _record(broker, request)
    before = record.status
    status = record.cancel() if before in ("accepted", "dispatched") else before
    out = {"command": record.descriptor(), "cancelled": status == "cancelled"}
    if before == "dispatched":
        out["note"] = "The command had already reached the browser; its effects may have happened."
    return _outcome(record, out)
