"""`bp launch`: a private Chromium/Chrome with a Browser Pilot-owned profile under the home.

The browser has no DevTools TCP port, which any local user could reach: it is started with
--remote-debugging-pipe by a detached pipe holder (janitor/pipe_holder.py), which serves the
CDP stream on an owner-only Unix socket in the runtime directory (discovery.launched_socket)
once the browser answers. The browser's and the holder's pid + start time are recorded so that
`bp launch --stop` can stop exactly this browser and nothing else.
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

from bp import discovery, identity, paths
from bp.errors import BPError, invalid_argument

EXECUTABLE_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
START_WAIT_S = 30.0
STOP_WAIT_S = 10.0


def find_executable():
    explicit = os.environ.get("BROWSER_PILOT_CHROME")
    if explicit:
        if not os.path.isabs(explicit):
            raise invalid_argument("BROWSER_PILOT_CHROME", "BROWSER_PILOT_CHROME must be an absolute path.")
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise BPError("browser_not_found", f"BROWSER_PILOT_CHROME is not an executable file: {explicit}",
                          context={"executable": explicit})
        return explicit
    for name in EXECUTABLE_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise BPError("browser_not_found", "No Chromium or Chrome executable was found on PATH.",
                  context={"searched": list(EXECUTABLE_NAMES)},
                  remediation={"code": "select_supported_browser", "actionRequired": True,
                               "message": "Install Chromium (Debian: apt-get install chromium) or set BROWSER_PILOT_CHROME."})


def _product(executable):
    return "Chrome" if "chrome" in os.path.basename(executable).lower() and "chromium" not in executable.lower() else "Chromium"


def has_display():
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _record_path(home_dir):
    return os.path.join(home_dir, paths.LAUNCHED_NAME)


def _public(record, *, already_running):
    cid = discovery.candidate_id("launched", record["userDataDir"])
    return {"browser": {"id": cid, "product": record["product"], "executable": record["executable"],
                        "userDataRoot": record["userDataDir"], "pid": record["pid"], "headless": record["headless"]},
            "alreadyRunning": already_running}


CRASH_DUMPS = "Crash Reports"
WINDOW_SIZE = "1280,800"  # bp launch's window, in CSS px (docs/commands.md)


def launch(home_dir, headless, extra_args=()):
    record = discovery.launched_record(home_dir)
    if record and identity.is_alive(record.get("pid"), record.get("startTime")):
        return _public(record, already_running=True)
    executable = find_executable()
    profile = os.path.join(home_dir, "launched-profile")
    paths.ensure_private_dir(profile)
    endpoint_file = os.path.join(profile, discovery.ENDPOINT_FILE)
    try:
        os.unlink(endpoint_file)  # a TCP-port launch's (older versions): never read as this one's
    except FileNotFoundError:
        pass
    args = [executable, f"--user-data-dir={profile}", "--remote-debugging-pipe",
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-default-apps",
            # A renderer crash's dump stays with this private profile, not in ~/.config/chromium.
            f"--crash-dumps-dir={os.path.join(profile, CRASH_DUMPS)}",
            # A window a desktop app fits in (Chromium's default headless one is 780x437 in
            # this setup); an extra --window-size given after it wins.
            f"--window-size={WINDOW_SIZE}",
            # After an input event Chromium holds the page's tasks (timers, messages) until its
            # next frame, up to ~50 ms; a tab behind another in its window draws ~1 frame a second,
            # so every step on it would wait those 50 ms (docs/step-budget.md). Our own browser only.
            "--disable-features=DeferRendererTasksAfterInput"]
    if headless:
        args += ["--headless", "--disable-gpu"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    args += list(extra_args)
    args.append("about:blank")
    log_path = os.path.join(home_dir, "logs", "launched-browser.log")
    paths.ensure_private_dir(os.path.dirname(log_path))
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        # Chromium's crash reporter takes its dump location from this variable (the flag above
        # alone still leaves them in ~/.config/chromium/Crash Reports).
        env = dict(os.environ, BREAKPAD_DUMP_LOCATION=os.path.join(profile, CRASH_DUMPS))
        holder = [sys.executable, "-m", "janitor.pipe_holder", "--socket", discovery.launched_socket(home_dir), "--"]
        # cwd "/": `python -m` puts the working directory first on sys.path, and a `janitor`
        # package there must never stand in for ours (the broker starts the same way).
        proc = subprocess.Popen(holder + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log_fd,
                                start_new_session=True, close_fds=True, env=env, cwd="/")
    finally:
        os.close(log_fd)
    holder_out = proc.stdout
    assert holder_out is not None  # stdout=PIPE: Popen always made it
    record = None
    try:
        for line in _holder_lines(holder_out, time.monotonic() + START_WAIT_S):
            if line.startswith("pid ") and line[4:].isdigit() and record is None:
                pid = int(line[4:])
                record = {"schemaVersion": 1, "pid": pid, "startTime": identity.process_start_time(pid),
                          "executable": executable, "product": _product(executable), "userDataDir": profile,
                          "headless": bool(headless), "launchedAt": int(time.time() * 1000), "transport": "pipe",
                          "holderPid": proc.pid, "holderStartTime": identity.process_start_time(proc.pid)}
                paths.replace_private_file(_record_path(home_dir), json.dumps(record, indent=1).encode())
            elif line == "ready" and record is not None:
                return _public(record, already_running=False)
    finally:
        holder_out.close()
    if record is not None:
        _stop_pid(record["pid"], record["startTime"])
    code = proc.poll()
    if code is None:
        _stop_pid(proc.pid, identity.process_start_time(proc.pid))
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:
        pass
    code = proc.poll()
    paths.unlink_if_same(_record_path(home_dir), paths.file_identity(_record_path(home_dir)))
    raise BPError("browser_not_found", "The browser did not start with remote debugging.",
                  context={"executable": executable, "exitCode": code, "log": log_path},
                  remediation={"code": "start_browser", "actionRequired": True,
                               "message": f"See {log_path} for the browser's own output."})


def _holder_lines(stream, deadline):
    """The pipe holder's status lines ("pid N", then "ready", or "exited" / "failed ...")
    until it closes its stdout or the deadline passes."""
    buffer = b""
    fd = stream.fileno()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return
        chunk = os.read(fd, 4096)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode("utf-8", "replace")


def stop(home_dir):
    path = _record_path(home_dir)
    ident = paths.file_identity(path)
    record = discovery.launched_record(home_dir)
    if not record:
        return {"stopped": False, "reason": "not_launched"}
    stopped = False
    if identity.is_alive(record.get("pid"), record.get("startTime")):
        stopped = _stop_pid(record["pid"], record.get("startTime"))
    if record.get("holderPid"):
        # The holder leaves once the browser's pipe closes; this only ends one left behind.
        _stop_pid(record["holderPid"], record.get("holderStartTime"))
    paths.unlink_if_same(path, ident)
    return {"stopped": stopped, "pid": record.get("pid")}


def _stop_pid(pid, start_time):
    """SIGTERM, then SIGKILL after a grace period; only while pid + start time still match."""
    for sig, wait in ((signal.SIGTERM, STOP_WAIT_S), (signal.SIGKILL, 5.0)):
        if not identity.is_alive(pid, start_time):
            return True
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.waitpid(pid, os.WNOHANG)  # reap if it is our child
            except ChildProcessError:
                pass
            if not identity.is_alive(pid, start_time):
                return True
            time.sleep(0.02)
    return not identity.is_alive(pid, start_time)
