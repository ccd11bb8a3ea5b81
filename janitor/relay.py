"""The janitor's relay loop: broker pipe <-> Chrome's browser WebSocket, plus crash cleanup.

One function you can read top to bottom (`serve`). A reader thread turns WebSocket frames into
messages on an inproc socket so the main loop can poll three things at once: the broker pipe,
the WebSocket inbox and stdin. Stdin is the broker's liveness: past the WebSocket URL's one line
it never writes to it, so all we read there afterwards is EOF, which arrives within milliseconds
of the broker's death however it died (exit, crash, SIGKILL). A stopped (SIGSTOP) broker is not
dead: the janitor keeps its tabs and waits, because the broker may be resumed and still owns its
Agents' state.
"""

import argparse
import json
import select
import os
import signal
import sys
import threading
import time

import websocket
import zmq

from bp import janitor_pipe as jp, settings
from janitor import unix_cdp
from janitor.ownership import Ownership

POLL_MS = 200
CLEANUP_BUDGET_S = 3.0
CLOSE_BATCH = 32


class Janitor:
    def __init__(self, pipe_address, ws_url, handshake_timeout_s):
        self.ctx = zmq.Context()
        self.pipe = self.ctx.socket(zmq.PAIR)
        self.pipe.setsockopt(zmq.LINGER, 1000)
        self.pipe.setsockopt(zmq.SNDHWM, 10_000)  # CDP event bursts; see send()
        # Refused before allocation; up to twice the bound a message still gets its janitor_error.
        self.pipe.setsockopt(zmq.MAXMSGSIZE, 2 * jp.MAX_BROKER_MESSAGE_BYTES)
        self.pipe.connect(pipe_address)
        self.ws_url = ws_url
        self.handshake_timeout_s = handshake_timeout_s
        self.ws = None
        self.owned = Ownership()
        self.next_id = jp.JANITOR_ID_BASE
        self.pending = {}  # our CDP id -> callback(reply dict)
        self.reader = None  # the WebSocket reader thread, once the handshake succeeded
        self.leaving = False  # the work is done and the janitor exits: nobody reads the reader's last word
        self.creating = set()  # our ids of Target.createTarget calls not answered yet
        self.cleaning = False  # EOF seen: whatever becomes ours from now on is closed at once
        self.late = set()  # targets that became ours during the cleanup, still to close

    # --- talking to the broker ---------------------------------------------------------------

    def send(self, kind, payload):
        """Never blocks: with the broker gone (or stopped and far behind) a message is dropped,
        so the loop always gets back to stdin, whose EOF starts the cleanup."""
        if not isinstance(payload, bytes):
            payload = json.dumps(payload, separators=(",", ":")).encode()
        try:
            self.pipe.send_multipart([kind, payload], flags=zmq.NOBLOCK)
        except zmq.Again:
            pass

    def log(self, level, message):
        self.send(jp.LOG, {"level": level, "message": message[:2000]})

    # --- talking to Chrome -------------------------------------------------------------------

    def connect_browser(self):
        """Open the WebSocket (or the launched browser's Unix socket); returns None or a
        failure reason for the broker."""
        if self.ws_url.startswith(unix_cdp.PREFIX):
            try:
                self.ws = unix_cdp.UnixCdp(self.ws_url[len(unix_cdp.PREFIX):], self.handshake_timeout_s)
            except (ConnectionRefusedError, FileNotFoundError) as exc:
                return {"reason": "refused", "message": f"The launched browser's pipe holder is gone: {type(exc).__name__}"}
            except TimeoutError:
                return {"reason": "timeout", "message": "The launched browser's pipe holder did not answer in time."}
            except OSError as exc:
                return {"reason": "error", "message": f"{type(exc).__name__}: {str(exc)[:300]}"}
            return None
        try:
            self.ws = websocket.create_connection(
                self.ws_url, timeout=self.handshake_timeout_s, suppress_origin=True,
                skip_utf8_validation=True, enable_multithread=True)
        except ConnectionRefusedError as exc:
            return {"reason": "refused", "message": str(exc)[:300]}
        except (websocket.WebSocketTimeoutException, TimeoutError):
            return {"reason": "timeout", "message": "The browser did not complete the WebSocket handshake in time."}
        except websocket.WebSocketBadStatusException as exc:
            return {"reason": "rejected", "message": f"The browser refused the WebSocket (HTTP {exc.status_code})."}
        except (OSError, websocket.WebSocketException) as exc:
            return {"reason": "error", "message": f"{type(exc).__name__}: {str(exc)[:300]}"}
        self.ws.settimeout(None)
        return None

    def cdp(self, method, params=None, callback=None, session_id=None):
        call_id = self.next_id
        self.next_id += 1
        message = {"id": call_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        self.pending[call_id] = callback or (lambda reply: None)
        assert self.ws is not None  # every CDP call comes after connect_browser() succeeded
        self.ws.send(json.dumps(message, separators=(",", ":")))
        return call_id

    def read_websocket(self, ctx):
        """Reader thread: every frame from Chrome goes to the main loop over inproc."""
        out = ctx.socket(zmq.PUSH)
        out.connect("inproc://websocket")
        try:
            assert self.ws is not None  # the reader starts after connect_browser() succeeded
            while True:
                opcode, data = self.ws.recv_data()
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    raise websocket.WebSocketConnectionClosedException("closed by the browser")
                if opcode in (websocket.ABNF.OPCODE_TEXT, websocket.ABNF.OPCODE_BINARY):
                    out.send_multipart([b"frame", data])
        except Exception as exc:  # any end of the socket ends the session
            out.send_multipart([b"closed", f"{type(exc).__name__}: {exc}"[:300].encode()])
        finally:
            # Its "closed" must reach the main loop while it serves; once the janitor is leaving,
            # nothing reads it, and lingering would only hold the exit up for a second.
            out.close(linger=0 if self.leaving else 1000)

    # --- frames from Chrome ------------------------------------------------------------------

    def on_frame(self, raw):
        call_id = jp.peek_id(raw)
        if len(raw) > jp.MAX_CDP_FORWARD_BYTES:
            if call_id is not None and call_id < jp.JANITOR_ID_BASE:
                raw = json.dumps({"id": call_id, "error": {"code": -32000, "message":
                                  f"reply larger than {jp.MAX_CDP_FORWARD_BYTES} bytes"}}).encode()
            else:
                self.log("warning", f"dropped a CDP frame of {len(raw)} bytes")
                return
        if call_id is not None and call_id >= jp.JANITOR_ID_BASE:
            callback = self.pending.pop(call_id, None)
            if callback:
                callback(json.loads(raw))
            return
        method = jp.peek_method(raw)
        if method in jp.DROPPED_EVENTS:
            return
        if method in ("Target.targetCreated", "Target.targetDestroyed") and b'"sessionId"' not in raw[-200:]:
            self.track(method, json.loads(raw).get("params") or {})
        self.send(jp.CDP, raw)

    def track(self, method, params):
        if method == "Target.targetCreated":
            info = params.get("targetInfo") or {}
            target_id, opener = info.get("targetId"), info.get("openerId")
            if not opener or opener not in self.owned or target_id in self.owned:
                return
            if self.cleaning:
                self.late.add(target_id)  # a popup opened while we close its opener chain
            elif self.owned.adopt_popup(target_id, opener):
                self.send(jp.OWNED, {"targetId": target_id, "openerId": opener})
            else:
                self.cdp("Target.closeTarget", {"targetId": target_id})  # at the cap: never leak it
        else:
            self.owned.forget(params.get("targetId"))

    # --- messages from the broker ------------------------------------------------------------

    def on_broker(self, frames):
        if len(frames) != 2:
            self.send(jp.RESULT, {"id": None, "error": {"code": "janitor_error", "message": "expected two frames"}})
            return
        kind, payload = frames
        if kind == jp.CDP:
            call_id = jp.peek_id(payload)
            if len(payload) > jp.MAX_BROKER_MESSAGE_BYTES or call_id is None or call_id >= jp.JANITOR_ID_BASE \
                    or (isinstance(self.ws, unix_cdp.UnixCdp) and b"\0" in payload):
                self.send(jp.RESULT, {"id": call_id, "error": {
                    "code": "janitor_error", "message": "refused a malformed or oversized CDP message"}})
                return
            assert self.ws is not None  # the broker's messages are read only once connected
            self.ws.send(payload)
        elif kind == jp.CALL:
            self.on_call(payload)
        else:
            self.send(jp.RESULT, {"id": None, "error": {"code": "janitor_error", "message": "unknown message kind"}})

    def on_call(self, payload):
        call = None
        if len(payload) <= jp.MAX_CALL_BYTES:
            try:
                call = json.loads(payload)
            except ValueError:
                pass
        if not isinstance(call, dict) or not isinstance(call.get("id"), int) \
                or call.get("method") not in jp.JANITOR_METHODS or not isinstance(call.get("params", {}), dict):
            call_id = call.get("id") if isinstance(call, dict) and isinstance(call.get("id"), int) else None
            self.send(jp.RESULT, {"id": call_id, "error": {"code": "janitor_error", "message": "malformed janitor call"}})
            return
        call_id, params = call["id"], call.get("params", {})
        if call["method"] == "status":
            self.send(jp.RESULT, {"id": call_id, "result": {"owned": len(self.owned), "pid": os.getpid()}})
        elif call["method"] == "create":
            self.create_managed(call_id, params)
        elif call["method"] == "takeover":
            self.take_over(call_id, params)

    def take_over(self, call_id, params):
        """Own the targets a dead predecessor janitor owned, then close them: from this call on,
        they are closed even if the broker dies before the close finishes."""
        ids = params.get("targetIds")
        if not isinstance(ids, list) or len(ids) > 4 * 4096 or not all(isinstance(t, str) and len(t) <= 128 for t in ids):
            self.send(jp.RESULT, {"id": call_id, "error": {"code": "janitor_error", "message": "bad targetIds"}})
            return
        taken = [t for t in ids if t not in self.owned and self.owned.add_created(t)]
        for target_id in taken:
            self.cdp("Target.closeTarget", {"targetId": target_id})
        self.send(jp.RESULT, {"id": call_id, "result": {"closing": taken}})

    def create_managed(self, call_id, params):
        url = params.get("url", "about:blank")
        if not isinstance(url, str) or len(url) > 8192:
            self.send(jp.RESULT, {"id": call_id, "error": {"code": "janitor_error", "message": "bad url"}})
            return
        # Background, never focus-stealing: no activateTarget / bringToFront. Each managed tab
        # opens in a Pilot window of its own: CDP cannot name the window of a new tab, and a tab
        # created without newWindow lands in the browser's last focused window, which is the
        # person's whenever they used it last (tests/person/). Its own window also makes the tab
        # its window's active one, which draws frames (a tab behind another draws ~1 a second).
        context = params.get("browserContextId") if isinstance(params.get("browserContextId"), str) else None
        create = {"url": url, "background": True, "newWindow": True}
        if context:
            create["browserContextId"] = context

        def done(reply):
            self.creating.discard(created)
            if self.cleaning:
                target_id = (reply.get("result") or {}).get("targetId")
                if target_id:
                    self.late.add(target_id)  # answered during the EOF cleanup: close it too
                return
            if "error" in reply:
                self.send(jp.RESULT, {"id": call_id, "error": {"code": "cdp_error",
                                                                "message": str(reply["error"].get("message"))[:300]}})
                return
            target_id = reply["result"]["targetId"]
            if not self.owned.add_created(target_id):
                self.cdp("Target.closeTarget", {"targetId": target_id})  # over capacity: never leak it
                self.send(jp.RESULT, {"id": call_id, "error": {"code": "capacity", "message": "too many managed targets"}})
                return
            self.send(jp.RESULT, {"id": call_id, "result": {"targetId": target_id}})

        created = self.cdp("Target.createTarget", create, done)
        self.creating.add(created)

    # --- cleanup -----------------------------------------------------------------------------

    def close_owned(self, inbox):
        """Close every owned target, deepest descendants first, within a bounded time. A batch
        is done when Chrome reports each target destroyed (or says it is already gone), so
        "closed" means gone, not merely requested. Tabs whose createTarget reply or popup event
        arrives during the cleanup are closed as well."""
        self.cleaning = True
        deadline = time.monotonic() + CLEANUP_BUDGET_S
        for level in self.owned.close_order():
            for start in range(0, len(level), CLOSE_BATCH):
                if not self._close_batch(inbox, set(level[start:start + CLOSE_BATCH]), deadline):
                    return
        while (self.late or self.creating) and time.monotonic() < deadline:
            batch, self.late = self.late, set()
            if not self._close_batch(inbox, batch, deadline, await_creates=True):
                return

    def _close_batch(self, inbox, open_targets, deadline, await_creates=False):
        """False when the browser is gone or the budget is spent. With await_creates, also wait
        until a createTarget still in flight is answered (its tab then joins self.late)."""
        calls = {}
        for target_id in open_targets:
            calls[self.cdp("Target.closeTarget", {"targetId": target_id})] = target_id
        while (open_targets or (await_creates and self.creating and not self.late)) and time.monotonic() < deadline:
            if not inbox.poll(20):
                continue
            kind, data = inbox.recv_multipart()
            if kind == b"closed":
                return False
            call_id = jp.peek_id(data)
            if call_id in calls:
                self.pending.pop(call_id, None)
                if b'"error"' in data:  # no such target: already gone
                    open_targets.discard(calls[call_id])
            elif call_id is not None and call_id in self.pending:
                self.pending.pop(call_id)(json.loads(data))  # e.g. a createTarget reply
            else:
                method = jp.peek_method(data)
                if method == "Target.targetDestroyed":
                    open_targets.discard((json.loads(data).get("params") or {}).get("targetId"))
                elif method == "Target.targetCreated" and b'"sessionId"' not in data[-200:]:
                    self.track(method, json.loads(data).get("params") or {})
        return time.monotonic() < deadline


def handshake(janitor):
    """connect_browser(), watching stdin meanwhile: a broker gone during the handshake (EOF) ends
    it at once ("eof"), not at the handshake timeout (a browser's Allow dialog nobody answers
    can hold a handshake for as long as it allows); nothing is owned before it completes."""
    done_r, done_w = os.pipe()
    outcome = {}

    def connect():
        try:
            outcome["failure"] = janitor.connect_browser()
        finally:
            os.write(done_w, b"x")

    threading.Thread(target=connect, name="handshake", daemon=True).start()
    stdin = sys.stdin.fileno()
    while True:
        readable, _, _ = select.select([done_r, stdin], [], [])
        if done_r in readable:
            return outcome.get("failure", {"reason": "error", "message": "The handshake failed."})
        if stdin in readable and not os.read(stdin, 4096):
            return "eof"


def serve(janitor):
    """Handshake, then relay until the broker's EOF or the browser's end."""
    failure = handshake(janitor)
    if failure == "eof":
        return 2  # the broker is gone and nothing is owned yet
    if failure:
        janitor.send(jp.FAILED, failure)
        return 2
    inbox = janitor.ctx.socket(zmq.PULL)
    inbox.bind("inproc://websocket")
    reader = janitor.reader = threading.Thread(target=janitor.read_websocket, args=(janitor.ctx,),
                                               name="websocket-reader", daemon=True)
    reader.start()

    version = {}
    janitor.cdp("Browser.getVersion", {}, lambda reply: version.update(reply.get("result") or {}))
    janitor.cdp("Target.setDiscoverTargets", {"discover": True},
                lambda reply: janitor.send(jp.READY, {"product": version.get("product"),
                                                      "protocolVersion": version.get("protocolVersion")}))
    poller = zmq.Poller()
    poller.register(janitor.pipe, zmq.POLLIN)
    poller.register(inbox, zmq.POLLIN)
    poller.register(sys.stdin.fileno(), zmq.POLLIN)
    while True:
        ready = dict(poller.poll(POLL_MS))
        if sys.stdin.fileno() in ready and not os.read(sys.stdin.fileno(), 4096):
            # The broker is gone (EOF): close what Browser Pilot opened, then leave.
            janitor.close_owned(inbox)
            return 0
        if inbox in ready:
            kind, data = inbox.recv_multipart()
            if kind == b"closed":
                janitor.send(jp.CLOSED, {"reason": data.decode("utf-8", "replace")})
                return 1
            try:
                janitor.on_frame(data)
            except (ValueError, KeyError, TypeError) as exc:
                janitor.log("warning", f"unreadable browser frame: {type(exc).__name__}")
        if janitor.pipe in ready:
            try:
                janitor.on_broker(janitor.pipe.recv_multipart())
            except (websocket.WebSocketException, OSError) as exc:
                janitor.send(jp.CLOSED, {"reason": f"send failed: {type(exc).__name__}"})
                return 1


def read_ws_url(fd, limit=4096):
    """The DevTools WebSocket URL (or `unix:<path>`, janitor/unix_cdp.py), the first line on
    stdin (never argv: `ps` shows argv to every local user). Reads byte by byte so nothing past
    the line is consumed: what follows on stdin is only the broker's EOF."""
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte or len(line) >= limit:
            return None
        line += byte
    return line[:-1].decode("utf-8", "replace")


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m janitor", description="Browser Pilot private process.")
    parser.add_argument("--pipe", required=True)
    parser.add_argument("--handshake-timeout", type=float, default=8.0)
    args = parser.parse_args(argv)
    settings.load()
    # A signal to the broker's process group (logout, closing terminal, service manager) must
    # not end us before the cleanup: the broker's death reaches us as stdin's EOF either way.
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    ws_url = read_ws_url(sys.stdin.fileno())
    if ws_url is None:
        return 2  # the broker died before it told us where the browser is: nothing is owned
    janitor = Janitor(args.pipe, ws_url, args.handshake_timeout)
    # A broker that dies during the handshake is noticed at once (handshake()): nothing is owned yet.
    code = 2
    try:
        code = serve(janitor)
    finally:
        # The work is done (tabs closed, or nothing owned): leave within a bounded time. Drop
        # the WebSocket without a close handshake (the reader thread holds its read lock), give
        # the last pipe messages (a handshake failure's reason) up to 0.5 s, then exit hard:
        # a context term must never keep a janitor alive.
        janitor.leaving = True
        if janitor.ws is not None:
            try:
                janitor.ws.abort()  # wakes the reader blocked in recv (shutdown(2); close(2) alone does not)
                janitor.ws.shutdown()
            except Exception:
                pass
        if janitor.reader is not None:
            janitor.reader.join(0.2)  # it ends once the socket is shut down (within a millisecond, measured; rarely not at all)
        if janitor.reader is None or not janitor.reader.is_alive():
            # Only this thread's sockets remain (ZeroMQ sockets must not be closed under another
            # thread's feet): flush the last pipe messages for at most 0.5 s.
            janitor.ctx.destroy(linger=500)
        os._exit(code)
