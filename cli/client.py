"""The thin client: one ZeroMQ REQ round trip to the broker, bounded by a timeout.

Make a socket, LINGER 0, send, poll in short slices (so SIGINT/SIGTERM are noticed), close.
No psutil and no marshmallow here: this is every Agent step's path.
"""

import fcntl
import os

import zmq

from bp import paths, protocol
from bp.envelope import check_reply
from bp.errors import BPError, disconnected, remediation
from cli import signals

SLICE_MS = 100


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
    """Send one request and return the parsed reply, or None when none came within wait_ms."""
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.MAXMSGSIZE, protocol.MAX_REPLY_BYTES)  # refused before allocation
    try:
        sock.connect("ipc://" + paths.socket_path(home_dir))
        sock.send(payload)
        remaining = wait_ms
        while remaining > 0:
            if interruptible:
                signals.check()
            if sock.poll(min(SLICE_MS, remaining)):
                return check_reply(sock.recv(copy=True))
            remaining -= SLICE_MS
        return None
    finally:
        sock.close(linger=0)


def call(settings, op, args, *, installation=None, mutating=None, long_running=False):
    """One operation against the running broker; never starts one.

    A quick operation must answer within HEALTH_WAIT_MS (bounded by --timeout); a long one is
    preceded by a ping with that bound, then waits for its own deadline plus a margin."""
    home_dir = paths.home()
    if not broker_running(home_dir):
        raise disconnected("The Browser Pilot service is not running.", context={"reason": "not_running"})
    mutating = op in protocol.MUTATING if mutating is None else mutating
    health_ms = min(protocol.HEALTH_WAIT_MS, settings.timeout_ms)
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
    except BPError:
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
