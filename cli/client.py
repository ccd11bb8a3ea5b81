"""The thin client: one ZeroMQ REQ round trip to the broker, bounded by a timeout.

Connect, send, wait in short slices (so SIGINT/SIGTERM are noticed), close. The REQ side of the
wire is cli/zmtp.py (standard library): no pyzmq, psutil or marshmallow on every Agent step's path.
"""

import fcntl
import os

from bp import ops, paths, protocol
from bp.envelope import check_reply
from bp.errors import BPError, disconnected, remediation
from cli import signals, zmtp

SLICE_MS = 100


class Settings:
    """What the global options resolved to, for every command."""

    def __init__(self, client_key, request_id, timeout_ms):
        self.client_key = client_key
        self.request_id = request_id
        self.timeout_ms = timeout_ms


def broker_running(home_dir):
    """Whether a broker holds its owner lock. A flock probe: the kernel drops the lock however
    the broker died, so a SIGKILLed broker's leftover socket never looks alive."""
    try:
        fd = os.open(os.path.join(home_dir, paths.OWNER_LOCK_NAME), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our shared lock if we got it
    return False


def unresponsive_error():
    return disconnected("The Browser Pilot service is running but did not answer.",
                        remediation_code="restart_unresponsive_broker", context={"reason": "unresponsive"})


def exchange(home_dir, payload, wait_ms, interruptible=True):
    """Send one request and return the parsed reply, or None when none came within wait_ms.
    Raises zmtp.NotDelivered when the request never reached the broker."""
    tick = signals.check if interruptible else None
    with zmtp.Req(paths.socket_path(home_dir), tick=tick, slice_s=SLICE_MS / 1000.0) as req:
        req.connect(min(wait_ms, protocol.HEALTH_WAIT_MS) / 1000.0)
        req.send(payload)
        try:
            raw = req.recv(wait_ms / 1000.0, protocol.MAX_REPLY_BYTES)
        except zmtp.TooLarge:
            raise BPError("result_too_large", f"The service's reply exceeds {protocol.MAX_REPLY_BYTES} bytes.") from None
        except OSError:
            return None  # the connection broke after the request went out: no answer
        return None if raw is None else check_reply(raw)


def call(settings, op, args, *, installation=None):
    """One operation against the running broker; never starts one.

    How it waits is the operation's own (bp/ops.py): a quick operation must answer within
    HEALTH_WAIT_MS (bounded by --timeout); a long one is preceded by a ping with that bound, then
    waits for its own deadline plus a margin (a busy tab is not a dead broker)."""
    home_dir = paths.home()
    if not broker_running(home_dir):
        raise disconnected("The Browser Pilot service is not running.", context={"reason": "not_running"})
    declared = ops.OPS[op]
    mutating, long_running = declared.mutating, declared.long
    health_ms = min(protocol.HEALTH_WAIT_MS, settings.timeout_ms)
    try:
        if long_running:
            _, ping = protocol.encode_request(protocol.OP_PING, settings.client_key, {}, timeout_ms=settings.timeout_ms)
            if exchange(home_dir, ping, health_ms) is None:
                raise unresponsive_error()
        request, payload = protocol.encode_request(op, settings.client_key, args, timeout_ms=settings.timeout_ms,
                                                   request_id=settings.request_id, installation=installation)
        wait_ms = settings.timeout_ms + protocol.REPLY_MARGIN_MS if long_running else health_ms
        try:
            reply = exchange(home_dir, payload, wait_ms)
        except signals.Interrupted as exc:
            raise _interrupted(exc, request, mutating, home_dir, settings) from None
    except zmtp.NotDelivered:
        raise unresponsive_error() from None  # nothing reached the broker: nothing can have happened
    if reply is None:
        if mutating:
            raise BPError("unknown_outcome", "No reply before the timeout; the operation may or may not have happened.",
                          context={"commandId": request["commandId"], "method": op},
                          remediation=remediation("inspect_command_before_retry"))
        raise unresponsive_error()
    return reply


CANCEL_WAIT_MS = 1500


class SettledWhileInterrupted(BPError):
    """The interrupted command had already finished: its recorded reply is the answer."""

    def __init__(self, reply, exit_code):
        super().__init__("command_cancelled", "Interrupted after the command finished.")
        self.reply = reply
        self.exit_code = exit_code

    def envelope(self):
        return self.reply


def _interrupted(interrupt, request, mutating, home_dir, settings):
    """Ask the broker to cancel the interrupted command, then report what it says: cancelled
    before dispatch (nothing happened), dispatched (unknown outcome), or finished (its result)."""
    context = {"commandId": request["commandId"], "method": request["op"], "signal": int(interrupt.signum)}
    _, payload = protocol.encode_request(protocol.OP_CANCEL, settings.client_key,
                                         {"commandId": request["commandId"]}, timeout_ms=CANCEL_WAIT_MS)
    try:
        answer = exchange(home_dir, payload, CANCEL_WAIT_MS, interruptible=False)
    except (BPError, zmtp.NotDelivered):
        answer = None
    command = (answer or {}).get("command") or {}
    status = command.get("status")
    if answer and answer.get("ok") and answer.get("result") is not None and status not in ("accepted", "dispatched"):
        return SettledWhileInterrupted(answer["result"], interrupt.exit_code)
    if status == "cancelled":
        error = BPError("command_cancelled", "Interrupted; the command was cancelled before it reached the browser.",
                        context=dict(context, status=status))
    elif status == "dispatched" or (status is None and mutating):
        error = BPError("unknown_outcome", "Interrupted after the command reached the browser; it may or may not have happened.",
                        context=dict(context, status=status or "unknown"),
                        remediation=remediation("inspect_command_before_retry"))
    else:
        error = BPError("command_cancelled", "Interrupted.", context=context)
    error.exit_code = interrupt.exit_code
    return error
