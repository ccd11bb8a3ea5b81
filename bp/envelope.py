"""The CLI's cheap structural check of a broker reply (no marshmallow on the hot path)."""


from bp.errors import ERROR_CODES, BPError
from bp.protocol import MAX_REPLY_BYTES


def check_reply(raw):
    """Parse a size-bounded reply; anything malformed becomes internal_error, never a crash."""
    if len(raw) > MAX_REPLY_BYTES:
        raise BPError("result_too_large", f"The service's reply exceeds {MAX_REPLY_BYTES} bytes.")
    import json  # (the CLI's fast path prints a success as it came: cli/fast.py)

    try:
        reply = json.loads(raw)
    except ValueError:
        raise BPError("internal_error", "The service sent a malformed reply.") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise BPError("internal_error", "The service sent a reply without an 'ok' field.")
    if reply["ok"] is False and (reply.get("code") not in ERROR_CODES or not isinstance(reply.get("error"), str)):
        raise BPError("internal_error", "The service sent a failure without a known code.")
    return reply
