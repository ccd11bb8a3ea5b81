"""Passive browser discovery: which Chromium-family browsers exist and how to reach them.

Passive means: read files (DevToolsActivePort, SingletonLock) and the process table; never open
a TCP connection or a WebSocket, so discovery can never raise Chrome's "Allow" dialog. Only the
broker's explicit connect does that.
"""

import base64
import errno
import hashlib
import json
import os
import shutil
import socket
import sys

from bp import paths
from bp.errors import invalid_argument, remediation

ENDPOINT_FILE = "DevToolsActivePort"
ENDPOINT_MAX_BYTES = 1024
# The launched browser has no TCP port: its pipe holder (janitor/pipe_holder.py) serves CDP on
# this owner-only socket in the runtime directory; its endpoint is ("unix", path).
LAUNCHED_SOCKET_NAME = "launched-cdp.sock"

# key, product, channel, user-data root, executable names on PATH / install paths
_LINUX = (
    ("chrome-stable", "Chrome", "stable", "~/.config/google-chrome", ("google-chrome", "google-chrome-stable")),
    ("chrome-beta", "Chrome", "beta", "~/.config/google-chrome-beta", ("google-chrome-beta",)),
    ("chrome-canary", "Chrome", "canary", "~/.config/google-chrome-unstable", ("google-chrome-unstable",)),
    ("chromium-stable", "Chromium", "stable", "~/.config/chromium", ("chromium", "chromium-browser")),
    ("brave-stable", "Brave", "stable", "~/.config/BraveSoftware/Brave-Browser", ("brave-browser", "brave")),
    ("edge-stable", "Edge", "stable", "~/.config/microsoft-edge", ("microsoft-edge", "microsoft-edge-stable")),
)
_MAC_APP = "~/Library/Application Support"
_DARWIN = (
    ("chrome-stable", "Chrome", "stable", f"{_MAC_APP}/Google/Chrome", ("/Applications/Google Chrome.app",)),
    ("chrome-beta", "Chrome", "beta", f"{_MAC_APP}/Google/Chrome Beta", ("/Applications/Google Chrome Beta.app",)),
    ("chrome-canary", "Chrome", "canary", f"{_MAC_APP}/Google/Chrome Canary", ("/Applications/Google Chrome Canary.app",)),
    ("brave-stable", "Brave", "stable", f"{_MAC_APP}/BraveSoftware/Brave-Browser", ("/Applications/Brave Browser.app",)),
    ("edge-stable", "Edge", "stable", f"{_MAC_APP}/Microsoft Edge", ("/Applications/Microsoft Edge.app",)),
    ("chromium-stable", "Chromium", "stable", f"{_MAC_APP}/Chromium", ("/Applications/Chromium.app",)),
)
_WIN_LOCAL = "%LOCALAPPDATA%"
_WINDOWS = (
    ("chrome-stable", "Chrome", "stable", rf"{_WIN_LOCAL}\Google\Chrome\User Data", ()),
    ("chrome-beta", "Chrome", "beta", rf"{_WIN_LOCAL}\Google\Chrome Beta\User Data", ()),
    ("chrome-canary", "Chrome", "canary", rf"{_WIN_LOCAL}\Google\Chrome SxS\User Data", ()),
    ("brave-stable", "Brave", "stable", rf"{_WIN_LOCAL}\BraveSoftware\Brave-Browser\User Data", ()),
    ("edge-stable", "Edge", "stable", rf"{_WIN_LOCAL}\Microsoft\Edge\User Data", ()),
)


def platform_definitions(platform=None):
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return _LINUX
    if platform == "darwin":
        return _DARWIN
    if platform == "win32":
        return _WINDOWS
    return ()


def candidate_id(key, data_dir, platform=None):
    material = "\0".join((platform or sys.platform, key, data_dir)).encode()
    return f"browser:{key}:" + base64.urlsafe_b64encode(hashlib.sha256(material).digest()).decode()[:20]


def read_endpoint(data_dir):
    """(port, ws_path) from DevToolsActivePort, None when absent, "stale" when unreadable/garbled."""
    path = os.path.join(data_dir, ENDPOINT_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError:
        return "stale"
    try:
        raw = os.read(fd, ENDPOINT_MAX_BYTES + 1)
    finally:
        os.close(fd)
    lines = raw[:ENDPOINT_MAX_BYTES].decode("utf-8", "replace").splitlines()
    try:
        port = int(lines[0].strip())
        ws_path = lines[1].strip()
    except (IndexError, ValueError):
        return "stale"
    if not (1 <= port <= 65535) or not ws_path.startswith("/devtools/browser/") or len(ws_path) > 256:
        return "stale"
    return port, ws_path


def launched_socket(home_dir):
    return os.path.join(paths.runtime_dir(home_dir), LAUNCHED_SOCKET_NAME)


def read_launched_endpoint(home_dir):
    """("unix", socket path) of the launched browser's pipe holder, None when absent, "stale"
    when the path is not our own owner-only socket."""
    import stat

    path = launched_socket(home_dir)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return "stale"
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        return "stale"
    return "unix", path


def endpoint_url(endpoint):
    """What the janitor connects to: the browser WebSocket, or `unix:<path>` (janitor/unix_cdp.py)."""
    if endpoint[0] == "unix":
        return f"unix:{endpoint[1]}"
    port, ws_path = endpoint
    return f"ws://127.0.0.1:{port}{ws_path}"


def _singleton_lock_pid(data_dir):
    """pid from Chrome's SingletonLock symlink ("host-pid"), None when absent/unknown host."""
    try:
        target = os.readlink(os.path.join(data_dir, "SingletonLock"))
    except OSError as exc:
        return None if exc.errno in (errno.ENOENT, errno.EINVAL) else "unknown"
    host, _, pid = target.rpartition("-")
    if host != socket.gethostname() or not pid.isdigit():
        return "unknown"
    return int(pid)


def _cmdline_data_dir(cmdline):
    for arg in cmdline or ():
        if arg.startswith("--user-data-dir="):
            return os.path.normpath(os.path.expanduser(arg.split("=", 1)[1]))
    return None


def process_state(data_dir, exe_names, process_table):
    """running / not_running / unknown, bound to this user-data dir.

    process_table: a callable returning [(name, cmdline)] or None; called only when the
    SingletonLock does not settle the question."""
    import psutil

    lock_pid = _singleton_lock_pid(data_dir)
    if isinstance(lock_pid, int):
        try:
            proc = psutil.Process(lock_pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                return "running"
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass  # the lock outlived its browser; fall through to the process table
        except psutil.AccessDenied:
            return "unknown"
    table = process_table()
    if table is None:
        return "unknown"
    names = {os.path.basename(n).lower() for n in exe_names}
    for name, cmdline in table:
        explicit = _cmdline_data_dir(cmdline)
        if explicit is not None:
            if explicit == os.path.normpath(data_dir):
                return "running"
        elif name and name.lower() in names:
            return "running"  # a default-profile process of this product
    return "not_running"


def _process_table():
    import psutil

    if _process_table.cache is not None:
        return _process_table.cache
    table = []
    try:
        for proc in psutil.process_iter(["name", "cmdline"]):
            info = proc.info
            table.append((info.get("name"), info.get("cmdline")))
    except psutil.Error:
        return None
    _process_table.cache = table
    return table


_process_table.cache = None


def _derive(processState, endpoint):
    """(remoteDebuggingState, authorizationState, state, remediation code) per contract §4.3."""
    if endpoint is None:
        if processState == "running":
            return "disabled", "not_applicable", "remote_debugging_disabled", "enable_remote_debugging"
        return "disabled", "not_applicable", "not_running", "start_browser"
    if endpoint == "stale" or processState == "not_running":
        return "stale", "unknown", "disconnected", "restart_remote_debugging"
    return "enabled", "unknown", "disconnected", "connect_browser"


def _extra_roots():
    value = os.environ.get("BROWSER_PILOT_BROWSER_DATA_DIRS")
    if not value:
        return []
    roots = []
    for entry in value.split(os.pathsep):
        if not entry:
            continue
        if not os.path.isabs(entry):
            raise invalid_argument("BROWSER_PILOT_BROWSER_DATA_DIRS",
                                   "BROWSER_PILOT_BROWSER_DATA_DIRS entries must be absolute paths.", value=entry[:256])
        roots.append(os.path.normpath(entry))
    return roots[:32]


def _guess_product(path):
    low = path.lower()
    for word, product in (("edge", "Edge"), ("brave", "Brave"), ("chromium", "Chromium"), ("chrome", "Chrome")):
        if word in low:
            return product
    return "Chromium"


def launched_record(home_dir):
    """The browser `bp launch` started, as recorded under the home, or None."""
    raw = paths.read_private_file(os.path.join(home_dir, paths.LAUNCHED_NAME))
    if raw is None:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("userDataDir"), str):
        return None
    return record


def _expand(path):
    if path.startswith(_WIN_LOCAL):
        return path.replace(_WIN_LOCAL, os.environ.get("LOCALAPPDATA", ""), 1)
    return os.path.expanduser(path)


def _exists(path):
    try:
        os.lstat(path)
        return True
    except OSError:
        return False


def definitions(home_dir):
    """(key, product, channel, root, exe_names) for every candidate worth listing."""
    found = []
    for key, product, channel, root, exes in platform_definitions():
        root = _expand(root)
        installed = any(shutil.which(e) if not os.path.isabs(e) else _exists(e) for e in exes)
        if _exists(root) or installed:
            found.append((key, product, channel, root, exes))
    for root in _extra_roots():
        found.append(("custom", _guess_product(root), "custom", root, ()))
    record = launched_record(home_dir) if home_dir else None
    if record:
        found.append(("launched", record.get("product") or "Chromium", "launched", record["userDataDir"], ()))
    return found


def discover(home_dir, browser_filter=None, *, overlay=None):
    """Candidates as public dicts, plus the private endpoint of each (for the broker).

    overlay: {candidate id: (state, authorizationState)} from the broker's connect attempts.
    Returns a list of (public candidate, endpoint-or-None)."""
    _process_table.cache = None  # one process scan per discovery, not per candidate
    out = []
    needle = browser_filter.lower() if browser_filter else None
    for key, product, channel, root, exes in definitions(home_dir):
        cid = candidate_id(key, root)
        if needle and not any(needle in s.lower() for s in (cid, product, channel, key)):
            continue
        if key == "launched":
            state = _launched_process_state(home_dir)
        else:
            state = process_state(root, exes, _process_table)
        if key == "launched" and (launched_record(home_dir) or {}).get("transport") == "pipe":
            endpoint = read_launched_endpoint(home_dir)
        else:
            endpoint = read_endpoint(root)
        remote, auth, overall, fix = _derive(state, endpoint)
        if overlay and cid in overlay and isinstance(endpoint, tuple):
            overall, auth = overlay[cid]
            fix = {"ready": None, "authorization_required": "allow_remote_debugging"}.get(overall, fix)
        candidate = {
            "id": cid, "product": product, "channel": channel, "userDataRoot": root,
            "processState": state, "remoteDebuggingState": remote, "authorizationState": auth, "state": overall,
        }
        if fix:
            candidate["remediation"] = remediation(fix)
        out.append((candidate, endpoint if isinstance(endpoint, tuple) else None))
    return out


def _launched_process_state(home_dir):
    from bp import identity

    record = launched_record(home_dir)
    if not record:
        return "not_running"
    return "running" if identity.is_alive(record.get("pid"), record.get("startTime")) else "not_running"


def viable(candidates):
    """Candidates an explicit connect may try: an endpoint and a browser that may be running."""
    return [(c, ep) for c, ep in candidates if ep is not None and c["processState"] != "not_running"]


def recovery(candidates):
    """What an Agent should do next when no browser is connected (shared by the broker's and
    the CLI's passive status)."""
    viable_ids = [c["id"] for c, ep in viable(candidates)]
    if len(viable_ids) == 1:
        return {"required": True, "code": "browser_disconnected", "action": "bp connect"}
    if len(viable_ids) > 1:
        return {"required": True, "code": "browser_disconnected", "action": f"bp connect --browser {viable_ids[0]}",
                "candidates": viable_ids[:16]}
    if candidates:
        fix = candidates[0][0].get("remediation") or remediation("start_browser")
        action = "bp launch && bp connect --browser launched" if fix["code"] == "start_browser" else fix["message"]
        return {"required": True, "code": "browser_disconnected", "action": action, "remediation": fix}
    return {"required": True, "code": "browser_not_found", "action": "bp launch && bp connect --browser launched",
            "remediation": remediation("select_supported_browser")}
