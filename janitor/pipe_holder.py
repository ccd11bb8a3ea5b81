"""The launched browser's pipe holder: `bp launch`'s Chromium has no DevTools TCP port.

`bp launch` starts this small process (python -m janitor.pipe_holder), and it starts Chromium
with --remote-debugging-pipe: Chromium reads CDP commands on its fd 3 and writes replies and
events on its fd 4, each message a JSON text ended by a NUL byte. Nobody but this process holds
the other ends of those pipes, so no other local user can reach the browser: there is no port
to GET /json/list from. The holder exposes the same NUL-separated stream on a Unix socket in
Browser Pilot's private runtime directory (0600 in a 0700 directory, peer uid checked on
Linux); the janitor connects there instead of to a WebSocket (janitor/unix_cdp.py).

Why a separate process: the pipe is Chromium's one DevTools connection for its whole life. The
holder outlives any broker or janitor (SIGKILL included), so a later `bp connect` reaches the
same browser, as with the TCP port before; and it exits as soon as Chromium does.

What a WebSocket close did for free, the holder does by hand, because the pipe never closes:
  * ids: every client's command id is renumbered into the holder's own id space and its reply
    renumbered back, so a reply meant for a client that left (or a client's id that another
    client also uses) never reaches the wrong client.
  * state: when a client leaves, the sessions it attached (explicitly, or through its
    browser-level auto-attach) are detached, so a tab paused by waitForDebuggerOnStart runs
    and its Fetch interception ends; the browser contexts it created are disposed (Chromium's
    default for a closed connection); its auto-attach, the download behaviour it set and,
    once no client wants it, target discovery are turned off. What a reply creates after its
    client left is undone at once, and so is a tab that a departed client's auto-attach still
    holds for a debugger. When the last client leaves, every root session still attached is
    detached too.
Events are sent to every connected client (normally exactly one: the janitor; a second one
exists only while a retiring janitor finishes its cleanup, or for a test's own inspection).
"""

import argparse
import errno
import json
import os
import re
import select
import signal
import socket
import stat
import struct
import sys
import time

from bp import janitor_pipe as jp

READ_CHUNK = 1 << 20
MAX_CLIENT_MESSAGE = 2 * jp.MAX_BROKER_MESSAGE_BYTES
MAX_CLIENT_BACKLOG = 512 * 1024 * 1024  # a client that stops reading is dropped, never waited for
REAP_WAIT_S = 10.0  # Chromium closed its pipe: it is exiting; we never wait on it forever
MAX_ID = (1 << 31) - 1  # Chrome wants ids that fit a signed 32-bit int
_METHOD = re.compile(rb'"method"\s*:\s*"([A-Za-z.]{1,80})"')
_TRACKED_REPLIES = frozenset({"Target.attachToTarget", "Target.createBrowserContext"})
_BROWSER_STATE = frozenset({"Browser.setDownloadBehavior", "Target.setDiscoverTargets", "Target.setAutoAttach"})


class Client:
    def __init__(self, sock):
        self.sock = sock
        self.inbox = bytearray()
        self.scanned = 0  # bytes of inbox already searched for a NUL
        self.outbox = bytearray()
        self.sessions = set()  # sessions this client attached (Target.attachToTarget replies)
        self.contexts = set()  # browser contexts this client created
        self.downloads = set()  # contexts whose download behaviour this client set (None: default)
        self.gone = False


class Holder:
    def __init__(self, to_chrome: int, from_chrome: int, listener: "Listener | None", chrome_pid: int) -> None:
        self.chrome_wfd = to_chrome
        self.chrome_rfd = from_chrome
        self.listener = listener
        self.chrome_pid = chrome_pid
        self.chrome_out = bytearray()
        self.chrome_in = bytearray()
        self.chrome_scanned = 0
        self.clients = {}  # fd -> Client
        self.calls = {}  # holder id -> (client or None, client id, method)
        self.next_id = 1
        self.own = {}  # holder id -> callback(reply dict) for the holder's own commands
        self.sessions = set()  # every root session attached now (Target.attachedToTarget events)
        self.auto_attacher = None  # the client whose browser-level auto-attach is in force
        self.discoverers = set()  # clients that turned target discovery on
        self.chrome_gone = False

    # --- ids ---------------------------------------------------------------------------------

    def _new_id(self):
        while True:
            call_id = self.next_id
            self.next_id = 1 if self.next_id >= MAX_ID else self.next_id + 1
            if call_id not in self.calls:
                return call_id

    def command(self, method, params, callback=None):
        """The holder's own CDP command (its reply never reaches a client)."""
        call_id = self._new_id()
        self.calls[call_id] = (None, None, method)
        if callback:
            self.own[call_id] = callback
        message = json.dumps({"id": call_id, "method": method, "params": params}, separators=(",", ":"))
        self.chrome_out += message.encode() + b"\0"

    # --- from a client -----------------------------------------------------------------------

    def from_client(self, client, message):
        head = jp._HEAD_ID.match(message[:64])
        if head is None:
            self.drop(client)  # not a CDP command with an id: a protocol violation
            return
        method = _METHOD.search(message[:256])
        method = method.group(1).decode() if method else None
        call_id = self._new_id()
        self.calls[call_id] = (client, int(head.group(1)), method)
        if method in _BROWSER_STATE:
            self.note_browser_state(client, method, message)
        self.chrome_out += b'{"id":%d,' % call_id
        self.chrome_out += memoryview(message)[head.end():]
        self.chrome_out += b"\0"

    def note_browser_state(self, client, method, message):
        """Remember which client changed which browser-level state, to undo it when it leaves."""
        try:
            command = json.loads(message)
            params = command.get("params") or {}
        except (ValueError, AttributeError):
            return
        if "sessionId" in command:
            return  # a tab session's setting leaves with its session
        if method == "Browser.setDownloadBehavior":
            client.downloads.add(params.get("browserContextId"))
        elif method == "Target.setDiscoverTargets":
            (self.discoverers.add if params.get("discover") else self.discoverers.discard)(client)
        elif method == "Target.setAutoAttach":
            self.auto_attacher = client if params.get("autoAttach") else None

    # --- from Chromium -----------------------------------------------------------------------

    def from_chrome(self, message):
        call_id = jp.peek_id(message)
        if call_id is not None:
            client, client_id, method = self.calls.pop(call_id, (None, None, None))
            if client is None:
                callback = self.own.pop(call_id, None)
                if callback:
                    callback(json.loads(message))
                return
            if method in _TRACKED_REPLIES and client.gone:
                self.undo_late(json.loads(message).get("result") or {})
            elif method in _TRACKED_REPLIES:
                result = json.loads(message).get("result") or {}
                if result.get("sessionId"):
                    for other in self.clients.values():
                        other.sessions.discard(result["sessionId"])  # an auto-attacher's guess
                    client.sessions.add(result["sessionId"])
                if result.get("browserContextId"):
                    client.contexts.add(result["browserContextId"])
            if not client.gone:
                head = jp._HEAD_ID.match(message[:64])
                assert head is not None  # peek_id found the id through this very match
                self.queue(client, b'{"id":%d,' % client_id, memoryview(message)[head.end():])
            return
        method = jp.peek_method(message)
        if method in ("Target.attachedToTarget", "Target.detachedFromTarget"):
            event = json.loads(message)
            if "sessionId" not in event:  # a root session (its children go with it)
                session = (event.get("params") or {}).get("sessionId")
                if method == "Target.attachedToTarget":
                    self.sessions.add(session)
                    if self.auto_attacher is not None:
                        # Auto-attached, or an explicit attach whose reply (right behind this
                        # event) moves it to the client that asked.
                        self.auto_attacher.sessions.add(session)
                    elif (event.get("params") or {}).get("waitingForDebugger"):
                        # The auto-attach of a client that has left, still in flight: nobody
                        # would ever let this tab run.
                        self.command("Target.detachFromTarget", {"sessionId": session})
                else:
                    self.sessions.discard(session)
                    for client in self.clients.values():
                        client.sessions.discard(session)
        for client in list(self.clients.values()):
            self.queue(client, message)

    def undo_late(self, result):
        """A reply that came after its client left: what it created goes at once."""
        if result.get("sessionId"):
            self.command("Target.detachFromTarget", {"sessionId": result["sessionId"]})
        if result.get("browserContextId"):
            self.command("Target.disposeBrowserContext", {"browserContextId": result["browserContextId"]})

    def queue(self, client, *parts):
        for part in parts:
            client.outbox += part
        client.outbox += b"\0"
        if len(client.outbox) > MAX_CLIENT_BACKLOG:
            self.drop(client)

    # --- a client leaves ---------------------------------------------------------------------

    def drop(self, client):
        """What a closed WebSocket connection would have undone in Chromium, undone by hand."""
        if client.gone:
            return
        client.gone = True
        self.clients.pop(client.sock.fileno(), None)
        client.sock.close()
        for session in client.sessions & self.sessions:
            self.command("Target.detachFromTarget", {"sessionId": session})
        for context in client.contexts:
            self.command("Target.disposeBrowserContext", {"browserContextId": context})
        for context in client.downloads:
            params = {"behavior": "default", "eventsEnabled": False}
            if context:
                params["browserContextId"] = context
            self.command("Browser.setDownloadBehavior", params)
        if self.auto_attacher is client or (not self.clients and self.auto_attacher is not None):
            self.auto_attacher = None
            self.command("Target.setAutoAttach", {"autoAttach": False, "waitForDebuggerOnStart": False, "flatten": True})
        if client in self.discoverers:
            self.discoverers.discard(client)
            if not self.discoverers:
                self.command("Target.setDiscoverTargets", {"discover": False})
        if not self.clients:  # the last one: nothing stays attached
            for session in self.sessions - client.sessions:
                self.command("Target.detachFromTarget", {"sessionId": session})

    # --- the loop ------------------------------------------------------------------------------

    def accept(self):
        assert self.listener is not None  # polled (and so accepted on) only once bound
        try:
            sock, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        if not peer_is_owner(sock):
            sock.close()
            return
        sock.setblocking(False)
        self.clients[sock.fileno()] = Client(sock)

    def read_client(self, client):
        try:
            data = client.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.drop(client)
            return
        client.inbox += data
        while not client.gone:
            end = client.inbox.find(b"\0", client.scanned)
            if end < 0:
                client.scanned = len(client.inbox)
                if client.scanned > MAX_CLIENT_MESSAGE:
                    self.drop(client)
                return
            message = bytes(client.inbox[:end])
            del client.inbox[:end + 1]
            client.scanned = 0
            try:
                self.from_client(client, message)
            except Exception as exc:  # never let one message end the holder (and the browser)
                log(f"dropped a client after an unreadable message: {type(exc).__name__}")
                self.drop(client)

    def write_client(self, client):
        try:
            sent = client.sock.send(client.outbox)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.drop(client)
            return
        del client.outbox[:sent]

    def read_chrome(self):
        try:
            data = os.read(self.chrome_rfd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.chrome_gone = True
            return
        self.chrome_in += data
        while True:
            end = self.chrome_in.find(b"\0", self.chrome_scanned)
            if end < 0:
                self.chrome_scanned = len(self.chrome_in)
                return
            message = bytes(self.chrome_in[:end])
            del self.chrome_in[:end + 1]
            self.chrome_scanned = 0
            try:
                self.from_chrome(message)
            except Exception as exc:  # never let one message end the holder (and the browser)
                log(f"could not route a browser message: {type(exc).__name__}")

    def write_chrome(self):
        try:
            sent = os.write(self.chrome_wfd, self.chrome_out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.chrome_gone = True
            return
        del self.chrome_out[:sent]

    def step(self, timeout_ms):
        poller = select.poll()
        poller.register(self.chrome_rfd, select.POLLIN)
        if self.chrome_out:
            poller.register(self.chrome_wfd, select.POLLOUT)
        if self.listener is not None:
            poller.register(self.listener, select.POLLIN)
        for fd, client in self.clients.items():
            poller.register(fd, select.POLLIN | (select.POLLOUT if client.outbox else 0))
        for fd, events in poller.poll(timeout_ms):
            if fd == self.chrome_rfd:
                self.read_chrome()
            elif fd == self.chrome_wfd:
                if events & (select.POLLERR | select.POLLHUP):
                    self.chrome_gone = True
                else:
                    self.write_chrome()
            elif self.listener is not None and fd == self.listener.fileno():
                self.accept()
            elif fd in self.clients:
                client = self.clients[fd]
                if events & select.POLLOUT:
                    self.write_client(client)
                if events & (select.POLLIN | select.POLLHUP | select.POLLERR) and not client.gone:
                    self.read_client(client)


def peer_is_owner(sock):
    """Defence in depth behind the 0600 socket in a 0700 directory: on Linux, refuse a peer
    that is not our own user (SO_PEERCRED)."""
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True
    try:
        _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.geteuid()


class Listener(socket.socket):
    identity: "tuple[int, int] | None" = None  # (st_dev, st_ino) of the socket file it bound


def bind_private_socket(path):
    """Bind the owner-only socket; a leftover from a dead holder is replaced, anything else refused."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
            raise OSError(errno.EEXIST, f"{path} exists and is not our socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except OSError:
            os.unlink(path)  # nobody listens: a dead holder's
        else:
            raise OSError(errno.EADDRINUSE, f"another holder serves {path}")
        finally:
            probe.close()
    listener = Listener(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: never a moment when others could connect
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    st = os.lstat(path)
    listener.identity = (st.st_dev, st.st_ino)  # what _finish may unlink, and nothing else
    listener.listen(16)
    listener.setblocking(False)
    return listener


def spawn_chrome(argv):
    """Chromium with our pipes on its fds 3 (commands in) and 4 (messages out); its own output
    goes to our stderr (the launch log)."""
    cmd_read, cmd_write = os.pipe()
    msg_read, msg_write = os.pipe()
    devnull = os.open(os.devnull, os.O_RDONLY)
    # posix_spawn's dup2 onto 3 and 4 must not clobber a source: move the sources above 4.
    sources = [fcntl_dupfd(fd) for fd in (cmd_read, msg_write, devnull)]
    for fd in (cmd_read, msg_write, devnull):
        os.close(fd)
    cmd_read, msg_write, devnull = sources
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, 2, 1),
               (os.POSIX_SPAWN_DUP2, cmd_read, 3), (os.POSIX_SPAWN_DUP2, msg_write, 4)]
    try:
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    finally:
        for fd in (cmd_read, msg_write, devnull):
            os.close(fd)
    os.set_blocking(cmd_write, False)
    os.set_blocking(msg_read, False)
    return pid, cmd_write, msg_read


def fcntl_dupfd(fd, lowest=10):
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)


def log(message):
    """One line to our stderr: the launch log (logs/launched-browser.log)."""
    try:
        os.write(2, f"pipe holder: {message}\n".encode())
    except OSError:
        pass


def report(line):
    """A status line to `bp launch` on our stdout (closed once we are ready or have failed)."""
    try:
        os.write(1, line.encode() + b"\n")
    except OSError:
        pass


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m janitor.pipe_holder",
                                     description="Holds the launched browser's DevTools pipe.")
    parser.add_argument("--socket", required=True)
    parser.add_argument("chrome", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    chrome = args.chrome[1:] if args.chrome[:1] == ["--"] else args.chrome
    for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_IGN)
    pid, to_chrome, from_chrome = spawn_chrome(chrome)
    # A SIGTERM to us stops the browser (and then us, once its pipe closes).
    signal.signal(signal.SIGTERM, lambda *_: _kill(pid, signal.SIGTERM))
    report(f"pid {pid}")
    holder = Holder(to_chrome, from_chrome, None, pid)
    ready = []
    holder.command("Browser.getVersion", {}, ready.append)
    while not ready and not holder.chrome_gone:
        holder.step(200)
    if holder.chrome_gone:
        report("exited")
        return _finish(pid, None, args.socket)
    try:
        holder.listener = bind_private_socket(args.socket)
    except OSError as exc:
        report(f"failed {exc}")
        _kill(pid, signal.SIGTERM)
        return _finish(pid, None, args.socket)
    report("ready")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # `bp launch` reads until EOF: our stdout closes here
    os.close(devnull)
    while not holder.chrome_gone:
        holder.step(1000)
    return _finish(pid, holder.listener, args.socket)


def _kill(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _finish(pid, listener, path):
    """Chromium closed its pipe: it is exiting. Remove our socket, reap it, leave."""
    if listener is not None:
        try:
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) == listener.identity:
                os.unlink(path)
        except OSError:
            pass
        listener.close()
    deadline = time.monotonic() + REAP_WAIT_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
        except ChildProcessError:
            break
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
