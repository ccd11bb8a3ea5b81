"""pytest plugin for products that bundle Browser Pilot: test your integration and its crash
recovery against a real headless Chromium, the way Browser Pilot's own suite does.

Installed with the wheel (entry point group `pytest11`, name `browser_pilot`) and inert unless
a test asks for one of its fixtures: loading it defines fixtures and imports nothing heavy; no
browser, no broker and no socket exist until a test uses them. `-p no:browser_pilot` turns it off.

Fixtures (docs/pytest-plugin.md has a worked example):

- `bp_browser` (session): a private headless Chromium (Debian's /usr/bin/chromium, or
  BROWSER_PILOT_CHROME) with a temporary profile, killed by its PID and removed at the end. It
  stands for the person's own browser; `tab_ids()`, `open_person_tab()`, `evaluate()` and the
  assertions read Chromium directly over the fixture's own DevTools connection, never through bp.
- `bp_home` (function): an isolated, empty BROWSER_PILOT_HOME; the broker it started (and its
  janitor) is stopped afterwards.
- `bp_agent` (function): an Agent that runs the `bp` executable with that home and browser and
  returns the parsed JSON envelope of each command; `kill_broker()` / `kill_janitor()` signal the
  service's processes for crash-recovery tests.
- `bp_executable` (session): which `bp` runs: BROWSER_PILOT_BP, else the `bp` beside the test's
  interpreter, else the first on PATH. Override the fixture to test another installation.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

CHROMIUM_FLAGS = ("--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--remote-debugging-port=0")


class BPFailure(AssertionError):
    """A `bp` command that did not succeed: `code` is the envelope's stable error code (None when
    there was no JSON envelope at all), `envelope` the parsed reply, `rc` the exit status."""

    def __init__(self, argv, rc, envelope, stdout, stderr):
        self.argv, self.rc, self.envelope, self.stdout, self.stderr = argv, rc, envelope, stdout, stderr
        self.code = envelope.get("code") if isinstance(envelope, dict) else None
        detail = envelope.get("error") if isinstance(envelope, dict) else (stderr or stdout)[-2000:]
        super().__init__(f"bp {' '.join(argv)} failed (exit {rc}, code {self.code}): {detail}")


def wait_until(predicate, timeout=10.0, interval=0.05):
    """Poll predicate until it is truthy or the timeout passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def chromium_path():
    explicit = os.environ.get("BROWSER_PILOT_CHROME")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no Chromium found: install Debian's chromium or set BROWSER_PILOT_CHROME")


class DevTools:
    """A browser-level DevTools WebSocket of the test's own (not Browser Pilot's)."""

    def __init__(self, ws_url, timeout=10):
        import websocket  # a dependency of Browser Pilot; imported only when a test needs it

        # Chrome sends valid UTF-8; checking it again in Python is slow on large replies
        self.ws = websocket.create_connection(ws_url, suppress_origin=True, timeout=timeout, skip_utf8_validation=True)
        self.next_id = 0

    def call(self, method, params=None, session_id=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def close(self):
        self.ws.close()


class Browser:
    """A private headless Chromium standing for the person's browser: its profile is `root` (a new
    temporary directory, removed by stop(), unless one is given), its DevTools port `port`."""

    def __init__(self, root=None, extra_args=()):
        self._own_root = root is None  # a profile made here is removed by stop(); a given one stays
        self.root = root or tempfile.mkdtemp(prefix="bp-chromium-", dir="/tmp")
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        args = [chromium_path(), f"--user-data-dir={self.root}", *CHROMIUM_FLAGS, *extra_args]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        args.append("about:blank")
        # Its own session: stop() kills the whole group by the PID, renderers and all.
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.proc.pid
        self._devtools = None
        port_file = os.path.join(self.root, "DevToolsActivePort")

        def endpoint():
            try:
                with open(port_file) as fh:
                    lines = fh.read().split()
            except OSError:
                return None
            return lines if len(lines) >= 2 else None

        lines = wait_until(lambda: self.proc.poll() is None and endpoint(), timeout=30)
        if not lines:
            self.stop()
            raise RuntimeError(f"Chromium did not start ({args[0]})")
        self.port = int(lines[0])
        self.ws_url = f"ws://127.0.0.1:{self.port}{lines[1]}"

    @property
    def devtools(self):
        if self._devtools is None:
            self._devtools = DevTools(self.ws_url)
        return self._devtools

    def tabs(self):
        """Every page target of the browser: {target id: {url, title}}, read from Chromium."""
        infos = self.devtools.call("Target.getTargets")["targetInfos"]
        return {t["targetId"]: {"url": t["url"], "title": t["title"]} for t in infos if t["type"] == "page"}

    def tab_ids(self):
        return set(self.tabs())

    def open_person_tab(self, url="about:blank"):
        """A tab the person opened themselves (not Browser Pilot's): its target id."""
        return self.devtools.call("Target.createTarget", {"url": url})["targetId"]

    def close_tab(self, target_id):
        self.devtools.call("Target.closeTarget", {"targetId": target_id})

    def evaluate(self, target_id, expression):
        """The value of a JavaScript expression in that tab, over the fixture's own connection."""
        session = self.devtools.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]
        try:
            result = self.devtools.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                             "awaitPromise": True}, session_id=session)
        finally:
            self.devtools.call("Target.detachFromTarget", {"sessionId": session})
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def assert_tabs_closed(self, target_ids, timeout=10.0):
        """Every one of these tabs disappears from Chromium within the timeout."""
        target_ids = set(target_ids)
        left = wait_until(lambda: not (target_ids & self.tab_ids()), timeout=timeout)
        assert left, f"tabs still open after {timeout} s: {sorted(target_ids & self.tab_ids())}"

    def assert_tabs_open(self, target_ids):
        """Every one of these tabs (the person's) is still open."""
        missing = set(target_ids) - self.tab_ids()
        assert not missing, f"tabs closed that had to stay: {sorted(missing)}"

    def stop(self):
        if self._devtools is not None:
            try:
                self._devtools.close()
            except Exception:  # the browser may be gone already
                pass
            self._devtools = None
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)


def _exited(proc):
    """Whether the psutil process is gone, or a zombie: it has exited and holds nothing, but a
    daemon's parent is init, which may take seconds to reap it (measured: ~1.7 s in a
    firecracker VM); waiting for the reaping would only slow every test down. A zombie that is
    the caller's own child is reaped here."""
    import psutil

    try:
        if proc.status() != psutil.STATUS_ZOMBIE:
            return False
        proc.wait(0)
    except psutil.Error:
        pass
    return True


def brokers_of(home):
    """Live broker processes serving this home (their command line ends in `-m broker`, also in
    the self-contained archive; matched to the home by their environment)."""
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if (proc.info.get("cmdline") or [])[-2:] == ["-m", "broker"]:
            try:
                if proc.environ().get("BROWSER_PILOT_HOME") == str(home) and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except psutil.Error:
                pass
    return found


def stop_service(home, timeout=10.0):
    """Stop the broker of this home and wait for its janitor, whose closing of managed tabs must
    not spill into the next test. A stopped (SIGSTOP) process is continued first."""
    import psutil

    for proc in brokers_of(home):
        children = proc.children()
        for member in children + [proc]:
            try:
                member.send_signal(signal.SIGCONT)
            except psutil.Error:
                pass
        try:
            proc.terminate()
        except psutil.Error:
            pass
        if not wait_until(lambda proc=proc: _exited(proc), timeout, 0.01):
            try:
                proc.kill()
            except psutil.Error:
                pass
        wait_until(lambda children=children: all(_exited(child) for child in children), timeout, 0.01)


class Agent:
    """An Agent running `bp` against one home and one browser, reading its JSON envelopes."""

    def __init__(self, executable, home, browser=None, client_key=None, env=None, timeout=90):
        self.executable, self.home, self.browser, self.client_key = executable, str(home), browser, client_key
        self.timeout = timeout
        base = {k: v for k, v in os.environ.items() if not k.startswith("BROWSER_PILOT_")}
        base["BROWSER_PILOT_HOME"] = self.home
        base.setdefault("BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS", "8000")
        if browser is not None:
            base["BROWSER_PILOT_BROWSER_DATA_DIRS"] = browser.root  # this browser and no other
        if client_key:
            base["BROWSER_PILOT_CLIENT_KEY"] = client_key
        base.update(env or {})
        self.env = base

    def agent(self, client_key):
        """Another Agent (its own client key) on the same home and browser."""
        return Agent(self.executable, self.home, self.browser, client_key,
                     {k: v for k, v in self.env.items() if k != "BROWSER_PILOT_CLIENT_KEY"}, self.timeout)

    def call(self, *args, stdin=None, timeout=None):
        """Run `bp ARGS`; returns (exit status, parsed envelope or None, stdout, stderr)."""
        argv = [str(a) for a in args]
        proc = subprocess.run([self.executable, *argv], env=self.env, capture_output=True, text=True,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                              timeout=timeout or self.timeout)
        try:
            envelope = json.loads(proc.stdout) if proc.stdout.strip() else None
        except ValueError:
            envelope = None
        return proc.returncode, envelope, proc.stdout, proc.stderr

    def run(self, *args, check=True, stdin=None, timeout=None):
        """`bp ARGS` → its JSON envelope. A failure (exit status not 0, `ok` not true, or no JSON)
        raises BPFailure with the error `code`; with check=False the envelope is returned as it
        is (`{"ok": false, "code": ...}`), and BPFailure is raised only when there is none."""
        rc, envelope, stdout, stderr = self.call(*args, stdin=stdin, timeout=timeout)
        if not isinstance(envelope, dict):
            raise BPFailure([str(a) for a in args], rc, None, stdout, stderr)
        if check and (rc != 0 or envelope.get("ok") is not True):
            raise BPFailure([str(a) for a in args], rc, envelope, stdout, stderr)
        return envelope

    def processes(self):
        """The service's processes as `bp status` reports them: {role: pid}."""
        status = self.run("status")
        return {p["role"]: p["pid"] for p in status.get("processes") or () if p.get("role") in ("broker", "janitor")}

    def _kill(self, role, signum, wait):
        pid = self.processes().get(role)
        if pid is None:
            raise AssertionError(f"no {role} is running for {self.home}")
        import psutil

        proc = psutil.Process(pid)  # before the signal: the pid cannot be mistaken for a later process's
        os.kill(pid, signum)
        if wait and signum in (signal.SIGKILL, signal.SIGTERM):
            assert wait_until(lambda: _exited(proc), timeout=10), f"{role} {pid} survived signal {signum}"
        return pid

    def kill_broker(self, signum=signal.SIGKILL, wait=True):
        """Signal the broker (default SIGKILL, a crash); its janitor then closes the managed tabs.
        Returns the pid; with wait, returns once a killed process is gone."""
        return self._kill("broker", signum, wait)

    def kill_janitor(self, signum=signal.SIGKILL, wait=True):
        """Signal the janitor (the process holding the browser connection). The broker reports the
        browser disconnected; the next `connect` starts a janitor that closes the dead one's tabs."""
        return self._kill("janitor", signum, wait)


@pytest.fixture(scope="session")
def bp_executable():
    explicit = os.environ.get("BROWSER_PILOT_BP")
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(sys.executable), "bp")
    if os.access(beside, os.X_OK):
        return beside
    found = shutil.which("bp")
    if not found:
        raise RuntimeError("no bp executable: install browser-pilot in this environment or set BROWSER_PILOT_BP")
    return found


@pytest.fixture(scope="session")
def bp_browser():
    browser = Browser()
    yield browser
    browser.stop()


@pytest.fixture
def bp_home():
    # Short and under /tmp: the broker's Unix socket path lives in it (108-byte limit).
    path = tempfile.mkdtemp(prefix="bp-home-", dir="/tmp")
    yield path
    stop_service(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def bp_agent(bp_executable, bp_home, bp_browser):
    return Agent(bp_executable, bp_home, bp_browser)
