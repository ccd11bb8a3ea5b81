"""Test helpers: run the real `bp`, start real Chromium, talk CDP from the test's side."""

import contextlib
import json
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import zmq

from bp import pytest_plugin as plugin
from bp.pytest_plugin import DevTools, brokers_of, chromium_path  # noqa: F401 (brokers_of: the tests use it from here)

BIN_DIR = os.path.dirname(sys.executable)
BP = os.path.join(BIN_DIR, "bp")


class Result:
    def __init__(self, proc_result):
        self.rc = proc_result.returncode
        self.stdout = proc_result.stdout
        self.stderr = proc_result.stderr
        try:
            self.json = json.loads(self.stdout) if self.stdout.strip() else None
        except ValueError:
            self.json = None

    @property
    def code(self):
        return (self.json or {}).get("code")

    def __repr__(self):
        return f"Result(rc={self.rc}, stdout={self.stdout[:2000]!r}, stderr={self.stderr[:2000]!r})"


def bp_env(home, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSER_PILOT_")}
    env["BROWSER_PILOT_HOME"] = str(home)
    env.setdefault("BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS", "8000")
    env.update({k: str(v) for k, v in extra.items() if v is not None})
    return env


def bp(home, *args, env=None, timeout=60, **extra):
    run_env = env or bp_env(home, **extra)
    return Result(subprocess.run([BP, *map(str, args)], env=run_env, capture_output=True, text=True, timeout=timeout,
                                 stdin=subprocess.DEVNULL))


def ok(home, env, *args, **extra):
    """Run bp, assert it succeeded, and return its JSON reply."""
    result = bp(home, *args, env=env, **extra)
    assert result.rc == 0, result
    assert result.json["ok"] is True, result
    return result.json


def names(observation):
    """The names of an observation's elements, in order."""
    return [e.get("name") for e in observation.get("elements") or ()]


def ref_of(observation, role, name):
    """The ref of the one element of `observation` with this role and name."""
    found = [e["ref"] for e in observation["elements"] if (e["role"], e["name"]) == (role, name)]
    assert len(found) == 1, (role, name, observation["elements"])
    return found[0]


def bp_popen(home, *args, **extra):
    return subprocess.Popen([BP, *args], env=bp_env(home, **extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)


def locator(home):
    with open(os.path.join(home, "broker-locator.json")) as fh:
        return json.load(fh)


@contextlib.contextmanager
def broker_socket(home, kind=zmq.REQ, path=None):
    """A raw zmq socket connected to the broker's ROUTER, at the locator's endpoint (or at `path`
    where the locator is not to be read), closed with its context afterwards."""
    ctx = zmq.Context()
    sock = ctx.socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect("ipc://" + (path or locator(home)["endpoint"]))
    try:
        yield sock
    finally:
        sock.close(linger=0)
        ctx.destroy(linger=0)


def broker_pid(home):
    return locator(home)["pid"]


def stop_brokers(home):
    """Stop this home's broker and wait for its janitor too, whose cleanup (closing managed
    tabs) must not spill into the next test (the pytest plugin's stop_service)."""
    plugin.stop_service(home)


def wait_until(predicate, timeout=10.0, interval=0.02):
    """The pytest plugin's poll, polling faster (these tests wait on a local broker)."""
    return plugin.wait_until(predicate, timeout, interval)


class Chromium:
    """A real headless Chromium with its own profile, as a test's 'user browser'."""

    def __init__(self, root, display=None, extra_args=()):
        """Headless, or headful on the X display `display` (the person tier, tests/person/)."""
        self.root = str(root)
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        args = [chromium_path(), f"--user-data-dir={self.root}", "--remote-debugging-port=0",
                *(["--headless"] if display is None else []), *extra_args,
                "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                # Named sites for cross-site (out-of-process) iframes, all served by 127.0.0.1.
                "--host-resolver-rules=MAP *.test 127.0.0.1"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")
        args.append("about:blank")
        env = None if display is None else dict(os.environ, DISPLAY=display)
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True, env=env)
        port_file = os.path.join(self.root, "DevToolsActivePort")
        if not wait_until(lambda: os.path.exists(port_file) and len(open(port_file).read().splitlines()) >= 2, 30):
            self.stop()
            raise RuntimeError("Chromium did not start")
        self.port = int(open(port_file).read().splitlines()[0])

    def http(self, path, method="GET"):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def pages(self):
        return {t["id"]: t for t in self.http("/json/list") if t["type"] == "page"}

    def close_tab(self, target_id):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/close/{target_id}")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()
        except OSError:
            pass  # already gone

    def new_user_tab(self, url="about:blank"):
        return self.http(f"/json/new?{url}", method="PUT")["id"]

    def evaluate(self, target_id, expression):
        """Run JS in a page through the test's own DevTools connection (not Browser Pilot's)."""
        import websocket

        ws = websocket.create_connection(f"ws://127.0.0.1:{self.port}/devtools/page/{target_id}",
                                         suppress_origin=True, timeout=10)
        try:
            ws.send(json.dumps({"id": 1, "method": "Runtime.evaluate",
                                "params": {"expression": expression, "userGesture": True, "returnByValue": True}}))
            while True:
                msg = json.loads(ws.recv())
                if msg.get("id") == 1:
                    return msg
        finally:
            ws.close()

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)


class LocalServer:
    """An HTTP server of the tests' own on 127.0.0.1, each request on a daemon thread: every GET
    and POST goes to the subclass's `handle(request)`. `with Server() as server:` stops it after."""

    http11 = False  # HTTP/1.1 keep-alive, as a real site's server

    def serve(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if server.http11 else "HTTP/1.0"

            def log_message(self, *args):
                pass

            def do_GET(self):
                server.handle(self)

            def do_POST(self):
                server.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def handle(self, request):
        raise NotImplementedError

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()


def short_tmpdir(prefix="bpt-"):
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


@contextlib.contextmanager
def scratch_dir(prefix="bpt-"):
    """A fresh short_tmpdir (a socket path in it fits), removed with all it holds afterwards."""
    path = short_tmpdir(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def listening_socket():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    return sock


def accepted_connections(sock):
    count = 0
    while True:
        try:
            conn, _ = sock.accept()
            conn.close()
            count += 1
        except BlockingIOError:
            return count


def write_endpoint(root, port, ws_path="/devtools/browser/00000000-0000-0000-0000-000000000000"):
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "DevToolsActivePort"), "w") as fh:
        fh.write(f"{port}\n{ws_path}\n")


class BrowserSocket(DevTools):
    """The test's own browser-level DevTools connection (for what a user or another tool does)."""

    def __init__(self, chromium):
        port, path = open(os.path.join(chromium.root, "DevToolsActivePort")).read().split()
        super().__init__(f"ws://127.0.0.1:{port}{path}")


def process_with_data_dir(root):
    """A live process whose command line names this user-data dir, as a running browser's does."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", f"--user-data-dir={root}"])


def stalling_endpoint():
    """A TCP endpoint that accepts and then never answers the WebSocket handshake, like Chrome
    while its 'Allow remote debugging?' dialog is pending. Returns (listener, held connections)."""
    import threading

    listener = listening_socket()
    listener.setblocking(True)
    held = []

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return listener, held


def logs_of(home):
    """Everything the home's broker and janitor logged (to check that no secret reached a log)."""
    text = ""
    for path in glob.glob(os.path.join(home, "logs", "*")):
        with open(path, errors="replace") as fh:
            text += fh.read()
    return text


def without_settle(evidence):
    """An action's evidence less its `settle` record (issue 25), which must be there and well formed:
    for the tests that compare the rest of the evidence as a whole."""
    settle = evidence["settle"]
    assert settle["status"] in ("settled", "quiet", "capped", "navigated") and settle["waitedMs"] >= 0, settle
    return {k: v for k, v in evidence.items() if k != "settle"}
