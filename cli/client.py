"""The thin client: one ZeroMQ REQ round trip to the broker, bounded by a timeout.

Connect, send, wait in short slices (so SIGINT/SIGTERM are noticed), close. The REQ side of the
wire is cli/zmtp.py (standard library): no pyzmq, psutil or marshmallow on every Agent step's path.
"""

import fcntl
import os
import sys

from bp import ops, paths, protocol
from bp.envelope import check_reply
from bp.errors import BPError, disconnected, remediation
from cli import signals, zmtp

SLICE_MS = 100


class Settings:
    """What the global options resolved to, for every command."""

    def __init__(self, client_key, request_id, timeout_ms, timeout_given=True):
        self.client_key = client_key
        self.request_id = request_id
        self.timeout_ms = timeout_ms
        self.timeout_given = timeout_given  # False: the default, which a command may choose itself (bp wait)


def broker_running(home_dir):
    """Whether a broker holds its owner lock. A flock probe: the kernel drops the lock however
    the broker died, so a SIGKILLed broker's leftover socket never looks alive. None when the
    lock file is missing but the broker's socket is not (someone deleted the lock): unknown,
    the broker's answer decides (a live broker puts its lock back within a second)."""
    try:
        fd = os.open(os.path.join(home_dir, paths.OWNER_LOCK_NAME), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None if os.path.exists(paths.socket_path(home_dir)) else False
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


def not_running_error():
    return disconnected("The Browser Pilot service is not running.", context={"reason": "not_running"})


def no_reply_error(waited_ms):
    """The broker was not given long enough to call it unresponsive (a short --timeout), or it
    answered a ping but not this request: say so, never advise stopping a healthy process."""
    return disconnected(f"No reply from the Browser Pilot service within {waited_ms} ms.",
                        remediation_code="inspect_broker_state", context={"reason": "no_reply", "waitedMs": waited_ms})


def ping(home_dir, settings, wait_ms, interruptible=True, raw=False):
    """The broker's answer to a ping, or None (no answer, or not listening)."""
    _, payload = protocol.encode_request(protocol.OP_PING, settings.client_key, {}, timeout_ms=settings.timeout_ms)
    try:
        return exchange(home_dir, payload, wait_ms, interruptible=interruptible, raw=raw)
    except zmtp.NotDelivered:
        return None


def silent_broker_error(home_dir, running, silent_ms):
    """The diagnosis for a broker that gave no answer for silent_ms: unresponsive only when it
    is proven alive (its lock, or for a deleted lock its pid and start time) and had the whole
    health wait to answer."""
    if running is None:
        from bp import identity, locator  # error path only: psutil stays off the hot path

        record, _ = locator.read_locator(home_dir)
        if not record or record.get("corrupt") or not identity.is_alive(record["pid"], record.get("startTime")):
            return not_running_error()
    if silent_ms < protocol.HEALTH_WAIT_MS:
        return no_reply_error(silent_ms)
    return unresponsive_error()


SUCCESS_PREFIX = b'{"ok":true'  # how the broker's compact JSON of a success begins (bp/fastjson.py)


def exchange(home_dir, payload, wait_ms, interruptible=True, ticker=None, raw=False):
    """Send one request and return the parsed reply, or None when none came within wait_ms.
    Raises zmtp.NotDelivered when the request never reached the broker. `ticker` (cli/progress.py)
    draws the progress line while the reply is pending; it is erased however the wait ends."""
    tick = signals.check if interruptible else None
    if ticker is not None:
        check = tick or (lambda: None)

        def ticking():
            check()
            ticker()
        tick = ticking
    try:
        return _exchange(home_dir, payload, wait_ms, tick, raw)
    finally:
        if ticker is not None:
            ticker.clear()


def _exchange(home_dir, payload, wait_ms, tick, raw=False):
    with zmtp.Req(paths.socket_path(home_dir), tick=tick, slice_s=SLICE_MS / 1000.0) as req:
        req.connect(min(wait_ms, protocol.HEALTH_WAIT_MS) / 1000.0)
        req.send(payload)
        try:
            answer = req.recv(wait_ms / 1000.0, protocol.MAX_REPLY_BYTES)
        except zmtp.TooLarge:
            raise BPError("result_too_large", f"The service's reply exceeds {protocol.MAX_REPLY_BYTES} bytes.") from None
        except OSError:
            return None  # the connection broke after the request went out: no answer
        if answer is None:
            return None
        if raw and answer.startswith(SUCCESS_PREFIX) and answer.endswith(b"}"):
            return answer  # printed as it came: the broker wrote it as the CLI would (cli/fast.py)
        return check_reply(answer)


def call(settings, op, args, *, installation=None, raw=False):
    """One operation against the running broker; never starts one.

    How it waits is the operation's own (bp/ops.py): a quick operation must answer within
    HEALTH_WAIT_MS (bounded by --timeout); a long one is preceded by a ping with that bound, then
    waits for its own deadline plus a margin (a busy tab is not a dead broker). No answer is
    "unresponsive" only after the whole health wait of silence (see silent_broker_error); a short
    --timeout or a lost reply says only that no reply came. With `raw`, a success comes back as
    the broker's bytes, unparsed (the fast path prints them)."""
    home_dir = paths.home()
    running = broker_running(home_dir)
    if running is False:
        raise not_running_error()
    declared = ops.OPS[op]
    mutating, long_running = declared.mutating, declared.long
    health_ms = min(protocol.HEALTH_WAIT_MS, settings.timeout_ms)
    silent_ms = 0
    try:
        # (raw: that it answers is all this ping needs; parsing would cost the step `import json`)
        if long_running and ping(home_dir, settings, health_ms, raw=True) is None:
            silent_ms = health_ms
            if health_ms >= protocol.HEALTH_WAIT_MS:
                raise silent_broker_error(home_dir, running, silent_ms)
            # A short --timeout cut the ping short: the request's own wait decides.
        request, payload = protocol.encode_request(op, settings.client_key, args, timeout_ms=settings.timeout_ms,
                                                   request_id=settings.request_id, installation=installation)
        wait_ms = settings.timeout_ms + protocol.REPLY_MARGIN_MS if long_running else health_ms
        # Only a command that said what it awaits has loaded cli/progress.py: the fast path never does.
        progress = sys.modules.get("cli.progress") if long_running else None
        ticker = progress.ticker() if progress is not None else None
        try:
            reply = exchange(home_dir, payload, wait_ms, ticker=ticker, raw=raw)
        except signals.Interrupted as exc:
            raise _interrupted(exc, request, mutating, home_dir, settings) from None
    except zmtp.NotDelivered:
        # Nothing reached the broker, so nothing can have happened: judged like silence.
        raise silent_broker_error(home_dir, running, health_ms) from None
    if reply is None:
        if mutating:
            raise BPError("unknown_outcome", "No reply before the timeout; the operation may or may not have happened.",
                          context={"commandId": request["commandId"], "method": op},
                          remediation=remediation("inspect_command_before_retry"))
        if silent_ms == 0 and wait_ms >= protocol.HEALTH_WAIT_MS:
            # It had the whole health wait: a ping tells a lost reply from a silent broker.
            silent_ms = wait_ms if ping(home_dir, settings, protocol.HEALTH_WAIT_MS, raw=True) is None else 0
            if silent_ms == 0:
                raise no_reply_error(wait_ms)
        else:
            silent_ms += wait_ms
        raise silent_broker_error(home_dir, running, silent_ms)
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
