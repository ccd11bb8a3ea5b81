"""CDP over the launched browser's owner-only Unix socket (janitor/pipe_holder.py).

The janitor's endpoint line is either a DevTools WebSocket URL (a person's own Chrome, as
always) or `unix:<path>` for the browser `bp launch` started. This class gives the janitor the
three calls it uses on a websocket-client connection: send, recv_data, shutdown. Messages are
JSON texts each ended by a NUL byte, as on Chromium's --remote-debugging-pipe.
"""

import json
import socket
import threading

import websocket

PREFIX = "unix:"
READ_CHUNK = 1 << 20


class UnixCdp:
    def __init__(self, path, timeout_s):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        try:
            self.sock.connect(path)
        except BaseException:
            self.sock.close()
            raise
        self.sock.settimeout(None)
        self.inbox = bytearray()
        self.scanned = 0
        self.send_lock = threading.Lock()
        self.events = []  # events call() read past (tests)

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        if b"\0" in data:
            # The NUL ends a message: one inside would smuggle a second, unchecked command.
            raise ValueError("a CDP message must not contain a NUL byte")
        with self.send_lock:
            self.sock.sendall(data + b"\0")

    def recv_data(self):
        """(opcode, message) like websocket-client's; raises ConnectionError at the end."""
        while True:
            end = self.inbox.find(b"\0", self.scanned)
            if end >= 0:
                message = bytes(self.inbox[:end])
                del self.inbox[:end + 1]
                self.scanned = 0
                return websocket.ABNF.OPCODE_TEXT, message
            self.scanned = len(self.inbox)
            data = self.sock.recv(READ_CHUNK)
            if not data:
                raise ConnectionError("the launched browser's pipe closed")
            self.inbox += data

    def settimeout(self, timeout_s):
        self.sock.settimeout(timeout_s)

    def abort(self):
        """Wake a reader blocked in recv (as websocket-client's WebSocket.abort)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def shutdown(self):
        self.abort()
        self.sock.close()

    # --- for a test's own inspection of a launched browser -------------------------------------

    def call(self, method, params=None, session_id=None, call_id=1):
        """Send one command and return its reply; the events read meanwhile are kept in
        self.events (the last 1000). Blocking; for tests."""
        message = {"id": call_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        self.send(json.dumps(message))
        while True:
            _, raw = self.recv_data()
            reply = json.loads(raw)
            if reply.get("id") == call_id:
                return reply
            if "method" in reply:
                self.events = (self.events + [reply])[-1000:]
