"""`bp doctor`: a passive diagnosis for operators (our addition to the contract).

Reads files, the process table and one ping of a running service; never starts the service,
never creates or tightens the home, never asks a browser for authorization. Every fact is in
the JSON result; the terminal view is the same facts, readable. psutil and discovery load here
only: doctor is not an Agent's hot path.
"""

import os
import shutil
import stat
import sys
import time
from typing import Any

import click

from bp import protocol
from bp.errors import BPError, remediation
from cli.build import given
from cli.output import escape, finish

CHROME_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _problem(problems, area, message, *, code=None, fix=None, path=None):
    problems.append(given({"area": area, "message": message}, code=code, path=path, remediation=fix))


def _from_error(problems, area, exc):
    _problem(problems, area, exc.message, code=exc.code, fix=exc.remediation,
             path=(exc.context or {}).get("path"))


def _mode(st):
    return format(stat.S_IMODE(st.st_mode), "04o")


# --- the facts ---------------------------------------------------------------------------------

def _installation():
    import bp
    from bp import identity

    ident = identity.installation_identity()
    return {"version": bp.__version__, "path": ident["path"], "identity": ident["identity"],
            "executable": sys.argv[0] and os.path.abspath(sys.argv[0]), "python": sys.executable,
            "pythonVersion": ".".join(str(n) for n in sys.version_info[:3]), "protocol": protocol.PROTOCOL_RANGE}


def _home(problems):
    """The home as it is on disk; None when BROWSER_PILOT_HOME itself is unusable."""
    from bp import paths

    try:
        home_dir = paths.home()
    except BPError as exc:
        _from_error(problems, "home", exc)
        return None, {"path": os.environ.get("BROWSER_PILOT_HOME"), "source": "BROWSER_PILOT_HOME", "state": "invalid"}
    info = {"path": home_dir, "source": "BROWSER_PILOT_HOME" if "BROWSER_PILOT_HOME" in os.environ else "default"}
    try:
        st = os.lstat(home_dir)
    except FileNotFoundError:
        info["state"] = "absent"  # created by 'bp connect' or 'bp launch'; nothing to diagnose yet
        return home_dir, info
    info["mode"] = _mode(st)
    try:
        paths.check_private_dir(home_dir, fix_mode=False)  # passive: report, never chmod
    except BPError as exc:
        info["state"] = "unsafe"
        _from_error(problems, "home", exc)
        return home_dir, info
    info["state"] = "private" if not st.st_mode & 0o077 else "readable_by_others"
    if info["state"] == "readable_by_others":
        info["note"] = "readable by group/others; the next 'bp connect' tightens it to 0700"
    run_dir = paths.runtime_dir(home_dir)
    info["runtimeDir"] = run_dir
    if run_dir != home_dir and os.path.lexists(run_dir):
        try:
            paths.check_private_dir(run_dir, fix_mode=False)
        except BPError as exc:
            info["state"] = "unsafe"
            _from_error(problems, "runtime", exc)
    return home_dir, info


def _locator(home_dir, problems, running):
    from bp import identity, locator

    path = locator.locator_path(home_dir)
    info: dict[str, Any] = {"path": path}
    try:
        record, _ = locator.read_locator(home_dir)
    except BPError as exc:
        info["state"] = "unsafe"
        _from_error(problems, "locator", exc)
        return info, None
    except OSError as exc:
        info["state"] = "unreadable"
        _problem(problems, "locator", f"Cannot read {path}: {exc.strerror}.", path=path,
                 fix=remediation("fix_private_state"))
        return info, None
    if record is None:
        info["state"] = "absent"
        if running:
            _problem(problems, "locator", "A service holds the owner lock but published no locator.",
                     fix=remediation("restart_unresponsive_broker"))
        return info, None
    if record.get("corrupt"):
        info["state"] = "corrupt"
        _problem(problems, "locator", "The locator is not Browser Pilot's JSON; the next 'bp connect' replaces it "
                 "when no service runs.", path=path)
        return info, None
    info.update({k: record.get(k) for k in ("pid", "startTime", "serviceVersion", "protocol") if k in record})
    mine = identity.installation_identity()["identity"]
    theirs = (record.get("installation") or {}).get("identity")
    info["sameInstallation"] = theirs == mine
    if running:
        info["state"] = "current"
    elif identity.is_alive(record["pid"], record.get("startTime")):
        info["state"] = "owner_alive_without_lock"
        _problem(problems, "locator", f"Process {record['pid']} named by the locator is alive but holds no owner "
                 "lock.", fix=remediation("restart_unresponsive_broker"))
    else:
        info["state"] = "stale"
        _problem(problems, "locator", f"Left by a service that is gone (pid {record['pid']}); harmless, the next "
                 "'bp connect' reclaims it.", path=path)
    return info, record


def _service(home_dir, settings, running, problems):
    from cli import client

    if not running:
        return {"state": "stopped"}
    _, ping = protocol.encode_request(protocol.OP_PING, settings.client_key, {}, timeout_ms=settings.timeout_ms)
    started = time.monotonic()
    try:
        reply = client.exchange(home_dir, ping, min(protocol.HEALTH_WAIT_MS, settings.timeout_ms))
    except client.zmtp.NotDelivered:
        reply = None
    except BPError as exc:
        _from_error(problems, "service", exc)
        return {"state": "unresponsive"}
    if reply is None:
        fix = remediation("restart_unresponsive_broker")
        _problem(problems, "service", "The service holds its lock but did not answer a ping.",
                 code="browser_disconnected", fix=fix)
        return {"state": "unresponsive"}
    if not reply.get("ok"):
        _problem(problems, "service", reply.get("error", "The service refused the ping."), code=reply.get("code"),
                 fix=reply.get("remediation"))
        return {"state": "incompatible", "code": reply.get("code")}
    service = dict(reply.get("service") or {})
    service["pingMs"] = round((time.monotonic() - started) * 1000, 1)
    import bp

    if service.get("version") != bp.__version__:
        _problem(problems, "service", f"The running service is version {service.get('version')}, this CLI "
                 f"{bp.__version__}.", fix=remediation("stop_incompatible_broker_or_isolate", action_required=False))
    return service


def _role(cmdline):
    if cmdline[-2:] == ["-m", "broker"]:
        return "broker"
    if cmdline[1:3] == ["-m", "janitor"]:
        return "janitor"
    return "child"


def _processes(pid):
    """The service's process tree: broker, janitor(s), anything else it started."""
    if not isinstance(pid, int):
        return []
    import psutil

    rows = []
    try:
        root = psutil.Process(pid)
        tree = [root] + root.children(recursive=True)
    except psutil.Error:
        return [{"role": "broker", "pid": pid, "state": "gone"}]
    for proc in tree:
        try:
            with proc.oneshot():
                cmdline = proc.cmdline()
                rows.append({"role": "broker" if proc.pid == pid else _role(cmdline), "pid": proc.pid,
                             "parentPid": proc.ppid(), "status": proc.status(),
                             "uptimeMs": int((time.time() - proc.create_time()) * 1000),
                             "rssBytes": proc.memory_info().rss})
        except psutil.Error:
            rows.append({"role": "unknown", "pid": proc.pid, "state": "gone"})
    return rows


def _browsers(home_dir, settings, service, problems):
    """The running service's view when it answers (it knows which browser is connected), else
    passive discovery."""
    from bp import discovery

    if service.get("state") == "running":
        from cli import client

        try:
            reply = client.call(settings, protocol.OP_BROWSERS, {})
            status = client.call(settings, protocol.OP_STATUS, {}) if reply.get("ok") else {}
        except BPError as exc:
            _problem(problems, "browsers", f"The service did not list its browsers ({exc.code}); passive discovery "
                     "is shown instead.", code=exc.code, fix=exc.remediation)
        else:
            if reply.get("ok") and status.get("ok"):
                return reply["browsers"], status.get("recovery")
            failed = reply if not reply.get("ok") else status
            _problem(problems, "browsers", failed.get("error", "The service refused to list its browsers."),
                     code=failed.get("code"), fix=failed.get("remediation"))
    try:
        found = discovery.discover(home_dir)
    except BPError as exc:
        _from_error(problems, "browsers", exc)
        return [], None
    candidates = [c for c, _ in found]
    rec = discovery.recovery(found)
    if not candidates:
        _problem(problems, "browsers", "No supported browser was found.", code="browser_not_found",
                 fix=remediation("select_supported_browser"))
    return candidates, rec


def _chromium(problems):
    from bp import launch

    info = {"searched": list(CHROME_NAMES), "found": {}}
    for name in CHROME_NAMES:
        path = shutil.which(name)
        if path:
            info["found"][name] = path
    try:
        info["executable"] = launch.find_executable()
        info["source"] = "BROWSER_PILOT_CHROME" if os.environ.get("BROWSER_PILOT_CHROME") else "PATH"
    except BPError as exc:
        info["executable"] = None
        _from_error(problems, "chromium", exc)
    return info


def _logs(home_dir):
    log_dir = os.path.join(home_dir, "logs")
    info = {"dir": log_dir, "files": []}
    try:
        names = sorted(os.listdir(log_dir))
    except FileNotFoundError:
        info["state"] = "absent"
        return info
    except OSError as exc:
        info["state"] = f"unreadable ({exc.strerror})"
        return info
    info["state"] = "present"
    for name in names:
        try:
            st = os.lstat(os.path.join(log_dir, name))
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            info["files"].append({"name": name, "bytes": st.st_size, "mode": _mode(st),
                                  "modifiedAt": int(st.st_mtime * 1000)})
    return info


def _policy(home_dir, problems):
    """The policy file the next service start reads (bp/policy.py): passive, and an unusable
    one is a problem, since the service refuses to start on it."""
    from bp import policy

    try:
        rules = policy.load(home_dir)
    except BPError as exc:
        _from_error(problems, "policy", exc)
        return {"state": "unusable", "code": exc.code, "path": (exc.context or {}).get("path"),
                "field": (exc.context or {}).get("field")}
    except OSError as exc:
        _problem(problems, "policy", f"The policy file cannot be read ({type(exc).__name__}).")
        return {"state": "unreadable"}
    return dict(rules.describe(), state="in_force" if rules.in_force else "absent")


def diagnose(settings):
    from cli import client

    problems = []
    result = {"ok": True, "installation": _installation()}
    home_dir, result["home"] = _home(problems)
    usable = home_dir is not None and result["home"]["state"] not in ("absent", "unsafe", "invalid")
    running = usable and client.broker_running(home_dir)
    if usable:
        result["locator"], record = _locator(home_dir, problems, running)
    else:
        result["locator"], record = {"state": "absent" if result["home"]["state"] == "absent" else "unchecked"}, None
    result["service"] = _service(home_dir, settings, running, problems) if running else {"state": "stopped"}
    if running:
        result["processes"] = _processes(result["service"].get("pid") or (record or {}).get("pid"))
    else:
        result["processes"] = []
    if home_dir is not None and result["home"]["state"] != "unsafe":
        result["browsers"], result["recovery"] = _browsers(home_dir, settings, result["service"], problems)
    else:
        result["browsers"], result["recovery"] = [], None
    result["policy"] = _policy(home_dir, problems) if home_dir else {"state": "unchecked"}
    result["chromium"] = _chromium(problems)
    result["logs"] = _logs(home_dir) if home_dir else {"state": "unchecked"}
    result["problems"] = problems
    result["healthy"] = not problems
    return result


# --- the view ----------------------------------------------------------------------------------

def _render(r):
    inst = r["installation"]
    lines = [f"bp {inst['version']} at {escape(inst['path'])} (python {inst['pythonVersion']})"]
    home = r["home"]
    lines.append(f"home: {escape(home.get('path'))} [{home['state']}"
                 + (f", mode {home['mode']}" if home.get("mode") else "") + f", {home['source']}]")
    loc = r["locator"]
    lines.append(f"locator: {loc['state']}" + (f" (pid {loc['pid']}, version {loc.get('serviceVersion')})"
                                                  if loc.get("pid") else ""))
    svc = r["service"]
    if svc["state"] == "running":
        lines.append(f"service: running, pid {svc.get('pid')}, version {svc.get('version')}, ping {svc['pingMs']} ms")
    else:
        lines.append(f"service: {svc['state']}")
    for proc in r["processes"]:
        if "rssBytes" in proc:
            lines.append(f"  {proc['role']}: pid {proc['pid']} ({proc['status']}), up {proc['uptimeMs'] / 1000:.1f}s, "
                         f"rss {proc['rssBytes'] / 1048576:.1f} MiB")
        else:
            lines.append(f"  {proc['role']}: pid {proc['pid']} ({proc.get('state')})")
    lines.append(f"browsers: {len(r['browsers'])}")
    for c in r["browsers"]:
        lines.append(f"  {c['id']}: {c['state']}" + (f" -> {c['remediation']['message']}" if c.get("remediation") else ""))
    pol = r.get("policy") or {}
    lines.append(f"policy: {escape(pol.get('path'))} [{pol.get('state')}"
                 + (f", {pol['digest']}" if pol.get("digest") else "") + "]")
    chrome = r["chromium"]
    lines.append(f"chromium executable: {escape(chrome['executable']) if chrome.get('executable') else 'not found'}")
    logs = r["logs"]
    if logs.get("dir"):
        lines.append(f"logs: {escape(logs['dir'])} [{logs['state']}]"
                     + "".join(f"\n  {f['name']} ({f['bytes']} bytes)" for f in logs["files"]))
    if r["problems"]:
        lines.append(f"problems: {len(r['problems'])}")
        for p in r["problems"]:
            lines.append(f"  ✗ {p['area']}: {escape(p['message'])}")
            if p.get("remediation"):
                lines.append(f"    action: {escape(p['remediation']['message'])}")
    else:
        lines.append("no problems found")
    return "\n".join(lines)


@click.command()
def doctor():
    """Diagnose this installation: home and permissions, locator and service health, the
    service's process tree, browser candidates and what each needs, the Chromium executable
    and the log files.

    Passive: never starts the service, never changes a file, never asks a browser for
    authorization. Problems are listed with their remediation; the command itself succeeds.

    \b
    Example:  bp doctor
    Example:  bp --json doctor
    """
    finish(diagnose(click.get_current_context().obj), _render)
