"""The broker's side of one browser connection: the janitor child and the pipe to it.

The janitor owns the WebSocket; this object owns the janitor. One named relay thread owns the
PAIR socket (ZeroMQ sockets are not thread-safe): other threads hand it outgoing messages over
inproc PUSH sockets and wait on a per-call slot for the answer.
"""

import itertools
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, Any, cast, overload

import zmq

from bp import janitor_pipe as jp, text
from bp.errors import BPError, disconnected

log = logging.getLogger("broker.connection")

RELAY_POLL_MS = 100
_pipe_numbers = itertools.count(1)

Abort = Callable[[], object]  # asked while waiting: true once the caller stops waiting
Reply = dict[str, Any]  # a decoded CDP result (or janitor answer)


class _Slot:
    __slots__ = ("event", "reply")

    def __init__(self):
        self.event = threading.Event()
        self.reply: Reply | None = None


class CDPError(BPError):
    """A CDP command the browser answered with an error: `internal_error` to an Agent unless a
    caller knows better. The protocol's own code and message are kept, and the few cases callers
    act on are named here, so nobody else parses the browser's wording."""

    def __init__(self, method, error):
        self.method = method
        self.cdp_code = error.get("code")
        self.cdp_message = str(error.get("message") or "")
        super().__init__("internal_error", f"{method} failed: {self.cdp_message[:200]}", context={"method": method})

    @property
    def context_gone(self):
        """The execution context (the document or world a script was to run in) is gone."""
        return "Cannot find context" in self.cdp_message or "context was destroyed" in self.cdp_message.lower()

    @property
    def not_serializable(self):
        return "returned by value" in self.cdp_message or "reference chain" in self.cdp_message

    @property
    def too_large(self):
        """The reply was over the relay's bound (janitor/relay.py): the call itself ran."""
        return "reply larger than" in self.cdp_message

    @property
    def too_deep(self):
        return "stack limit exceeded" in self.cdp_message  # Chrome's own bound on a value's nesting

    @property
    def invalid_url(self):
        return "invalid URL" in self.cdp_message

    @property
    def cookie_refused(self):
        return "Sanitizing cookie failed" in self.cdp_message or "must have scheme" in self.cdp_message


Started = tuple[int, _Slot]  # a call sent, its reply not yet waited for (cdp_start)


class BrowserConnection:
    """States: connecting -> ready | failed; ready -> lost (janitor or WebSocket gone) | closed."""

    def __init__(self, ctx, run_dir, candidate, ws_url, generation, handshake_timeout_s, on_event=None):
        self.ctx = ctx
        self.candidate = candidate
        self.ws_url = ws_url
        self.generation = generation
        self.handshake_timeout_s = handshake_timeout_s
        self.on_event = on_event or (lambda method, raw: None)
        self.state = "connecting"
        self.failure: dict[str, Any] | None = None  # {"reason", "message"} when failed or lost
        self.product: str | None = None
        self.settled = threading.Event()  # set once ready or failed
        self.pipe_address = f"ipc://{os.path.join(run_dir, f'janitor-{os.getpid()}-{next(_pipe_numbers)}.sock')}"
        self._ids = itertools.count(1)
        self._slots: dict[int, _Slot] = {}
        self._slots_lock = threading.Lock()
        self._outbox_address = f"inproc://janitor-outbox-{id(self)}"
        self._local = threading.local()
        self._stop = threading.Event()
        self.owned_popups: dict[str, str | None] = {}  # targetId -> openerId, as the janitor reported them
        self.created: set[str] = set()  # managed tabs the janitor created (what a successor must take over)
        self.orphans: set[str] = set()  # the previous connection's tabs, taken over once this one is ready
        self.reconciled = False  # Target.getTargets loaded into the table after ready
        self.process: subprocess.Popen[bytes] | None = None
        self._relay: threading.Thread | None = None
        # callback(connection) just before the state becomes ready
        self.on_ready: Callable[[BrowserConnection], object] | None = None
        self.popups_guarded = False  # new tabs wait for the navigation bounds' judgement (broker/network/journal.py)

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self):
        pipe = self.ctx.socket(zmq.PAIR)
        pipe.setsockopt(zmq.LINGER, 0)
        pipe.setsockopt(zmq.SNDHWM, 10_000)
        pipe.bind(self.pipe_address)
        os.chmod(self.pipe_address[len("ipc://"):], 0o600)
        outbox = self.ctx.socket(zmq.PULL)
        outbox.bind(self._outbox_address)
        # stdin is the janitor's liveness pipe: after the WebSocket URL's one line (kept off
        # argv, which `ps` shows to everyone) we never write to it; our death closes it.
        process = self.process = subprocess.Popen(
            [sys.executable, "-m", "janitor", "--pipe", self.pipe_address,
             "--handshake-timeout", str(self.handshake_timeout_s)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
        stdin = cast(IO[bytes], process.stdin)  # stdin=PIPE: never None
        try:
            stdin.write(self.ws_url.encode() + b"\n")
            stdin.flush()
        except OSError:
            pass  # it died at once; the relay loop reports janitor_exited
        self._relay = threading.Thread(target=self._relay_loop, args=(pipe, outbox, process), name="janitor-relay",
                                       daemon=True)
        self._relay.start()

    def wait_settled(self, timeout_s):
        return self.settled.wait(timeout_s)

    @property
    def alive(self):
        return self.state == "ready"

    def close(self, wait_s=5.0):
        """Graceful end: closing stdin is the same EOF a crash gives, so the janitor closes the
        managed targets exactly as it would after a crash."""
        if self.process and self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        if self.process:
            try:
                self.process.wait(wait_s)
            except subprocess.TimeoutExpired:
                log.warning("janitor did not exit after EOF; terminating it")
                self.process.terminate()
        self._stop.set()
        if self._relay:
            self._relay.join(2.0)
        if self.state in ("ready", "connecting"):
            self._set_state("closed")

    def _set_state(self, state, failure=None):
        if state == "ready" and self.on_ready is not None:
            self.on_ready(self)  # before anyone can see it ready (broker/browser/binding.py: the generation)
        self.state = state
        if failure:
            self.failure = failure
        self.settled.set()
        if state in ("lost", "failed", "closed"):
            with self._slots_lock:
                for slot in self._slots.values():
                    slot.event.set()  # waiters see reply None -> connection gone

    # --- calls -----------------------------------------------------------------------------------

    def _send(self, kind, payload):
        push = getattr(self._local, "push", None)
        if push is None:
            push = self.ctx.socket(zmq.PUSH)
            push.setsockopt(zmq.LINGER, 0)
            push.connect(self._outbox_address)
            self._local.push = push
        push.send_multipart([kind, payload])

    def _start(self, kind: bytes, message: Mapping[str, Any]) -> Started:
        """Send a call; (call id, slot) its reply will land in."""
        if not self.alive:
            raise disconnected("The browser connection is not available.")
        call_id = next(self._ids)
        message = {"id": call_id, **message}  # the janitor peeks at a leading "id"
        slot = _Slot()
        with self._slots_lock:
            self._slots[call_id] = slot
        try:
            self._send(kind, json.dumps(message, separators=(",", ":")).encode())
        except BaseException:
            self.forget((call_id, slot))
            raise
        return call_id, slot

    def forget(self, started: Started) -> None:
        """Stop expecting the reply of a call started with cdp_start (its reply is dropped)."""
        with self._slots_lock:
            self._slots.pop(started[0], None)

    # Without `abort` a reply always comes (or an error is raised): never None.
    @overload
    def _call(self, kind: bytes, message: Mapping[str, Any], timeout_s: float, abort: None = None,
              started: Started | None = None) -> Reply: ...
    @overload
    def _call(self, kind: bytes, message: Mapping[str, Any], timeout_s: float, abort: Abort | None = None,
              started: Started | None = None) -> Reply | None: ...
    def _call(self, kind: bytes, message: Mapping[str, Any], timeout_s: float, abort: Abort | None = None,
              started: Started | None = None) -> Reply | None:
        call_id, slot = started or self._start(kind, message)
        try:
            deadline = time.monotonic() + timeout_s
            while not slot.event.wait(min(0.02, max(0.0, deadline - time.monotonic())) if abort else timeout_s):
                if abort is not None and abort():
                    return None  # the caller stopped waiting (e.g. a dialog now blocks the page)
                if abort is None or time.monotonic() >= deadline:
                    raise BPError("unknown_outcome", "The browser did not answer in time.",
                                  context={"method": message.get("method")})
        finally:
            self.forget((call_id, slot))
        if slot.reply is None:
            raise disconnected("The browser connection was lost.", remediation_code="connect_browser")
        return slot.reply

    @overload
    def cdp(self, method: str, params: Mapping[str, Any] | None = None, session_id: str | None = None,
            timeout_s: float = 30.0, abort: None = None, started: Started | None = None) -> Reply: ...
    @overload
    def cdp(self, method: str, params: Mapping[str, Any] | None = None, session_id: str | None = None,
            timeout_s: float = 30.0, abort: Abort | None = None, started: Started | None = None) -> Reply | None: ...
    def cdp(self, method: str, params: Mapping[str, Any] | None = None, session_id: str | None = None,
            timeout_s: float = 30.0, abort: Abort | None = None, started: Started | None = None) -> Reply | None:
        """Send a CDP command and wait for its reply. With `abort`, stop waiting (returning None)
        as soon as abort() is true. With `started` (from cdp_start), the command was sent
        already: only its reply is waited for."""
        if started is None:
            started = self.cdp_start(method, params, session_id)
        reply = self._call(jp.CDP, {"method": method}, timeout_s, abort, started=started)
        if reply is None:
            return None
        if "error" in reply:
            raise CDPError(method, reply["error"])
        return reply.get("result") or {}

    def cdp_start(self, method: str, params: Mapping[str, Any] | None = None, session_id: str | None = None) -> Started:
        """Send a CDP command now and wait for its reply later (cdp(..., started=)), so that the
        round trip overlaps what the caller sends next; forget() it if it is never waited for."""
        message = {"method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        return self._start(jp.CDP, message)

    def send_nowait(self, method: str, params: Mapping[str, Any] | None = None, session_id: str | None = None) -> None:
        """Send a CDP command whose reply nobody waits for (it is dropped on arrival)."""
        if not self.alive:
            raise disconnected("The browser connection is not available.")
        message = {"id": next(self._ids), "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        self._send(jp.CDP, json.dumps(message, separators=(",", ":")).encode())

    def janitor_call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0) -> Reply:
        reply = self._call(jp.CALL, {"method": method, "params": params or {}}, timeout_s)
        if "error" in reply:
            raise BPError("internal_error", f"janitor {method} failed: {reply['error'].get('message')}")
        if method == "create":
            self.created.add(reply["result"]["targetId"])
        return reply["result"]

    def owned(self):
        """Every target this connection's janitor owns (or owned, once it is gone)."""
        return self.created | set(self.owned_popups)

    # --- the relay loop --------------------------------------------------------------------------

    def _relay_loop(self, pipe: zmq.Socket, outbox: zmq.Socket, process: subprocess.Popen[bytes]) -> None:
        poller = zmq.Poller()
        poller.register(pipe, zmq.POLLIN)
        poller.register(outbox, zmq.POLLIN)
        deadline = time.monotonic() + self.handshake_timeout_s + 10.0
        try:
            while not self._stop.is_set():
                ready = dict(poller.poll(RELAY_POLL_MS))
                if outbox in ready:
                    try:
                        # PAIR blocks when its peer is gone: never let a dead janitor hang us.
                        pipe.send_multipart(outbox.recv_multipart(), flags=zmq.NOBLOCK)
                    except zmq.Again:
                        self._set_state("lost", {"reason": "janitor_unreachable",
                                                 "message": "The janitor does not take messages."})
                if pipe in ready:
                    kind, payload = pipe.recv_multipart()
                    self._on_janitor(kind, payload)
                if process.poll() is not None and self.state in ("connecting", "ready"):
                    # Drain what the janitor said before it went, then record why it ended.
                    while pipe.poll(0):
                        kind, payload = pipe.recv_multipart()
                        self._on_janitor(kind, payload)
                    if self.state in ("connecting", "ready"):
                        failed = self.state == "connecting"
                        self._set_state("failed" if failed else "lost",
                                        {"reason": "janitor_exited", "message": f"janitor exited ({process.returncode})"})
                if self.state == "connecting" and time.monotonic() > deadline:
                    self._set_state("failed", {"reason": "timeout", "message": "The janitor did not report in time."})
                    process.kill()
                if self.state in ("failed", "lost", "closed") and process.poll() is not None:
                    break
        finally:
            pipe.close(linger=0)
            outbox.close(linger=0)
            try:
                os.unlink(self.pipe_address[len("ipc://"):])
            except FileNotFoundError:
                pass

    def _on_janitor(self, kind, payload):
        if kind == jp.CDP:
            call_id = jp.peek_id(payload)
            if call_id is not None:
                self._resolve(call_id, payload)
            else:
                self.on_event(jp.peek_method(payload), payload)
        elif kind == jp.RESULT:
            message = json.loads(payload)
            if message.get("id") is not None:
                self._resolve(message["id"], message)
            else:
                log.warning("janitor refused a message: %s", message.get("error"))
        elif kind == jp.READY:
            info = json.loads(payload)
            self.product = info.get("product")
            self._set_state("ready")
        elif kind == jp.FAILED:
            self._set_state("failed", json.loads(payload))
        elif kind == jp.CLOSED:
            self._set_state("lost", {"reason": "websocket_closed", **json.loads(payload)})
        elif kind == jp.OWNED:
            info = json.loads(payload)
            self.owned_popups[info["targetId"]] = info.get("openerId")
        elif kind == jp.LOG:
            info = json.loads(payload)
            log.log(logging.WARNING if info.get("level") == "warning" else logging.INFO, "janitor: %s", info.get("message"))

    def _resolve(self, call_id, payload):
        with self._slots_lock:
            slot = self._slots.get(call_id)
        if slot is None:
            return  # the caller gave up; the late answer is dropped
        # Page text may hold lone surrogates: replaced here, where page data enters the broker.
        slot.reply = cast(Reply, text.loads(payload)) if isinstance(payload, bytes) else payload
        slot.event.set()
