"""A ZeroMQ REQ peer in the standard library: ZMTP 3.0, NULL mechanism, one UNIX socket.

The broker's ROUTER (pyzmq) is unchanged; only the CLI speaks the wire itself, because
`import zmq` alone costs about a third of an Agent step's process start. What a REQ does on the
wire, and nothing more (23/ZMTP):
  greeting   signature %xFF 8*%x00 %x7F, version 3.0, mechanism "NULL", as-server 0, filler
  handshake  a READY command carrying Socket-Type "REQ"; the peer answers with its own READY
  request    an empty delimiter frame (MORE), then the payload frame
  reply      the delimiter, then the payload; command frames (e.g. PING) are skipped
Frames larger than the caller's bound are refused from their size header, before any buffer
is allocated for them.
"""

import _socket as socket  # (not `socket`: its enum wrappers cost a step's import time)
import struct

GREETING = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
SIGNATURE_END = 10  # the peer's signature is bytes 0 and 9: %xFF ... %x7F
MORE, LONG, COMMAND = 0x01, 0x02, 0x04
MAX_COMMAND_BYTES = 4096  # READY and friends are tiny; a peer that says otherwise is not a broker


class NotDelivered(Exception):
    """Nothing was handed to the broker (no socket, refused, broken handshake): safe to report as
    'not answered' even for a mutating command."""


class TooLarge(Exception):
    """A reply frame announced more bytes than the caller accepts."""


def _frame(body, flags=0):
    if len(body) > 255:
        return bytes([flags | LONG]) + struct.pack(">Q", len(body)) + body
    return bytes([flags, len(body)]) + body


def _ready_command():
    name, value = b"Socket-Type", b"REQ"
    body = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", len(value)) + value
    return _frame(body, COMMAND)


class Req:
    """One request/reply exchange on a fresh connection. `tick` is called between slices of
    waiting (the CLI checks for SIGINT/SIGTERM there); it may raise."""

    def __init__(self, path, tick=None, slice_s=0.1):
        self.path = path
        self.tick = tick or (lambda: None)
        self.slice_s = slice_s
        self.sock: socket.socket | None = None  # connected by connect()
        self._buffer = bytearray()

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- reading with a deadline in slices --------------------------------------------------------

    def _read(self, count, budget):
        """Exactly `count` bytes, or None when `budget` (a one-item list of seconds left) runs out."""
        sock = self.sock
        assert sock is not None, "connect() first"
        while len(self._buffer) < count:
            if budget[0] <= 0:
                return None
            self.tick()
            wait = min(self.slice_s, budget[0])
            sock.settimeout(wait)
            try:
                chunk = sock.recv(max(65536, count - len(self._buffer)))
            except TimeoutError:
                budget[0] -= wait
                continue
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            self._buffer += chunk
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    def _read_frame(self, budget, max_bytes):
        head = self._read(1, budget)
        if head is None:
            return None
        flags = head[0]
        size_bytes = self._read(8 if flags & LONG else 1, budget)
        if size_bytes is None:
            return None
        size = struct.unpack(">Q", size_bytes)[0] if flags & LONG else size_bytes[0]
        if size > (MAX_COMMAND_BYTES if flags & COMMAND else max_bytes):
            raise TooLarge(size)
        body = self._read(size, budget)
        return None if body is None else (flags, body)

    # --- the exchange -----------------------------------------------------------------------------

    def connect(self, timeout_s):
        """Connect and complete the handshake, or raise NotDelivered."""
        try:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout_s)
            self.sock.connect(self.path)
            self.sock.sendall(GREETING + _ready_command())
            budget = [timeout_s]
            greeting = self._read(64, budget)
            if greeting is None or greeting[0] != 0xFF or greeting[9] != 0x7F or greeting[10] < 3:
                raise NotDelivered("no ZMTP 3 greeting")
            ready = self._read_frame(budget, 0)
            if ready is None or not ready[0] & COMMAND or not ready[1].startswith(b"\x05READY"):
                raise NotDelivered("no READY from the broker")
        except (OSError, TooLarge) as exc:
            raise NotDelivered(str(exc)) from None

    def send(self, payload):
        sock = self.sock
        assert sock is not None, "connect() first"
        sock.settimeout(None)
        sock.sendall(_frame(b"", MORE) + _frame(payload))

    def recv(self, timeout_s, max_bytes):
        """The reply's payload, or None when it did not come within timeout_s."""
        budget = [timeout_s]
        frames = []
        while True:
            frame = self._read_frame(budget, max_bytes)
            if frame is None:
                return None
            flags, body = frame
            if flags & COMMAND:
                continue
            frames.append(body)
            if not flags & MORE:
                if len(frames) >= 2 and frames[0] == b"":
                    return frames[-1]
                frames = []  # not a REQ envelope: a REQ drops it and keeps waiting
