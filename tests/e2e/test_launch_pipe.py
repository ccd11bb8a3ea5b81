"""`bp launch` without a DevTools TCP port: Chromium's --remote-debugging-pipe, held by the
pipe holder (janitor/pipe_holder.py), reached only through an owner-only Unix socket.

Every check on the browser's side goes through that socket (janitor/unix_cdp.py), the way a
test may reach a launched browser; the test's own Chromium (conftest `chromium`) keeps its TCP
port and serves as the positive control of the listening-socket check.
"""

import json
import os
import signal
import socket
import stat
import subprocess
import psutil
import pytest

from janitor.unix_cdp import UnixCdp
from tests import helpers
from tests.faults.common import janitors_of
from tests.helpers import bp


@pytest.fixture
def launched(home):
    """A `bp launch --headless` browser; yields (env, reply json, record); stopped afterwards."""
    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    result = bp(home, "launch", "--headless", env=env)
    assert result.rc == 0, result
    with open(os.path.join(home, "launched-browser.json")) as fh:
        record = json.load(fh)
    try:
        yield env, result.json, record
    finally:
        bp(home, "disconnect", env=env)
        bp(home, "launch", "--stop", env=env)


def socket_path(home):
    from bp import discovery

    return discovery.launched_socket(home)


def tree(pid):
    """pid and all its descendants (psutil.Process objects)."""
    root = psutil.Process(pid)
    return [root] + root.children(recursive=True)


def listening_tcp_ports(procs):
    """TCP ports (v4 and v6) on which any of procs holds a LISTEN socket, from /proc."""
    inodes = set()
    for proc in procs:
        try:
            fds = os.listdir(f"/proc/{proc.pid}/fd")
        except (FileNotFoundError, PermissionError):
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{proc.pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: TCP_LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def page_targets(cdp, title=None):
    infos = cdp.call("Target.getTargets")["result"]["targetInfos"]
    return [t for t in infos if t["type"] == "page" and (title is None or t["title"] == title)]


def test_the_launched_browser_listens_on_no_tcp_port(home, chromium, launched):
    env, reply, record = launched
    # Positive control: the same check finds the test browser's DevTools port.
    assert chromium.port in listening_tcp_ports(tree(chromium.proc.pid))
    pid = reply["browser"]["pid"]
    browser = tree(record["holderPid"])
    assert pid in [p.pid for p in browser]
    cmdline = psutil.Process(pid).cmdline()
    assert "--remote-debugging-pipe" in cmdline
    assert not [a for a in cmdline if a.startswith("--remote-debugging-port")]
    assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
    assert listening_tcp_ports(tree(record["holderPid"])) == set()
    assert not os.path.exists(os.path.join(reply["browser"]["userDataRoot"], "DevToolsActivePort"))
    # ... and nobody answers DevTools' HTTP on any port the browser's processes hold at all.
    for proc in tree(record["holderPid"]):
        for conn in proc.net_connections(kind="inet"):
            assert conn.status != psutil.CONN_LISTEN, conn


def test_the_socket_is_owner_only_in_an_owner_only_directory(home, launched):
    path = socket_path(home)
    st = os.lstat(path)
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid()
    parent = os.lstat(os.path.dirname(path))
    assert stat.S_IMODE(parent.st_mode) == 0o700 and parent.st_uid == os.geteuid()


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another OS user needs root")
def test_another_os_user_cannot_reach_the_socket(home, launched):
    path = socket_path(home)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit status only
        code = 3
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)  # nobody
            probe = socket.socket(socket.AF_UNIX)
            try:
                probe.connect(path)
                code = 1  # reached it: the test fails
            except PermissionError:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # Control: the owner connects and is served.
    cdp = UnixCdp(socket_path(home), 10)
    try:
        assert cdp.call("Browser.getVersion")["result"]["product"]
    finally:
        cdp.shutdown()


def test_connect_open_click_disconnect_over_the_pipe(home, pages, launched):
    env, reply, record = launched
    connected = bp(home, "connect", "--browser", "launched", env=env)
    assert connected.rc == 0, connected
    assert connected.json["browserId"] == reply["browser"]["id"]
    url = pages.page('<button onclick="document.title=\'clicked\'">Go</button>', title="piped")
    opened = helpers.ok(home, env, "open", "--new", url)
    ref = helpers.ref_of(opened, "button", "Go")
    assert helpers.ok(home, env, "click", str(ref))["title"] == "clicked"
    cdp = UnixCdp(socket_path(home), 10)  # a second client while the janitor is served
    try:
        assert [t["title"] for t in page_targets(cdp, "clicked")] == ["clicked"]
        done = helpers.ok(home, env, "disconnect")
        assert done["closedTabs"] >= 1
        assert helpers.wait_until(lambda: not page_targets(cdp, "clicked"), 10)
    finally:
        cdp.shutdown()
    # The browser outlives the session, and a new one reaches it.
    assert psutil.pid_exists(reply["browser"]["pid"])
    assert bp(home, "connect", "--browser", "launched", env=env).rc == 0


def test_broker_sigkill_closes_the_managed_tabs_and_the_browser_stays(home, pages, launched):
    env, reply, record = launched
    assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
    helpers.ok(home, env, "open", "--new", pages.page("<p>doomed</p>", title="doomed"))
    cdp = UnixCdp(socket_path(home), 10)
    try:
        assert len(page_targets(cdp, "doomed")) == 1
        os.kill(helpers.broker_pid(home), signal.SIGKILL)
        # The janitor's EOF cleanup still runs over the pipe.
        assert helpers.wait_until(lambda: not page_targets(cdp, "doomed"), 10)
        assert helpers.wait_until(lambda: not janitors_of(home), 10)
    finally:
        cdp.shutdown()
    assert psutil.pid_exists(reply["browser"]["pid"])
    assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
    assert helpers.ok(home, env, "open", "--new", pages.page("<p>again</p>", title="again"))["title"] == "again"


def test_janitor_sigkill_leaves_the_browser_reconnectable(home, pages, launched):
    env, reply, record = launched
    assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
    helpers.ok(home, env, "open", "--new", pages.page("<p>first</p>", title="first"))
    janitor = [p for p in janitors_of(home)]
    assert len(janitor) == 1
    janitor[0].kill()
    assert helpers.wait_until(lambda: bp(home, "status", env=env).json["browser"]["state"] != "ready", 10)
    assert psutil.pid_exists(reply["browser"]["pid"])
    again = bp(home, "connect", "--browser", "launched", env=env)
    assert again.rc == 0, again
    assert again.json["connectionGeneration"] == 2
    assert helpers.ok(home, env, "open", "--new", pages.page("<p>second</p>", title="second"))["title"] == "second"


def test_a_client_that_leaves_takes_its_browser_state_along(home, pages, launched):
    """What a WebSocket close undid, the holder undoes: the sessions of a client's browser-level
    auto-attach (waitForDebuggerOnStart) are detached and no auto-attach outlives the client."""
    first = UnixCdp(socket_path(home), 10)
    second = UnixCdp(socket_path(home), 10)
    try:
        # Both clients use id 1 at once: each gets its own reply.
        first.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
        second.send(json.dumps({"id": 1, "method": "Target.getTargets"}))
        assert "product" in _reply(first, 1)["result"] and "targetInfos" in _reply(second, 1)["result"]
        first.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
                   call_id=2)
        held = second.call("Target.createTarget", {"url": pages.page("<p>held</p>", title="held")},
                           call_id=2)["result"]["targetId"]
        # Control: while the first client is there, the new tab is attached to it and waits for
        # a debugger (events reach every client).
        assert _attached(second, held)["waitingForDebugger"] is True
        assert _info(second, held)["attached"] is True
        first.shutdown()
        first = None
        # Its session is detached once the holder sees it leave ...
        assert helpers.wait_until(lambda: _info(second, held)["attached"] is False, 10)
        second.events = []
        later = second.call("Target.createTarget", {"url": pages.page("<p>free</p>", title="free")},
                            call_id=4)["result"]["targetId"]
        assert helpers.wait_until(lambda: _info(second, later)["title"] == "free", 10)
        # ... and no auto-attach survives the client that asked for it.
        assert _info(second, later)["attached"] is False
        assert not [e for e in second.events if e["method"] == "Target.attachedToTarget"], second.events
        for target in (held, later):
            second.call("Target.closeTarget", {"targetId": target}, call_id=9)
    finally:
        for client in (first, second):
            if client is not None:
                client.shutdown()


def _info(cdp, target_id):
    infos = cdp.call("Target.getTargets", call_id=3)["result"]["targetInfos"]
    return [t for t in infos if t["targetId"] == target_id][0]


def _reply(cdp, call_id):
    cdp.settimeout(10)
    while True:
        _, raw = cdp.recv_data()
        message = json.loads(raw)
        if message.get("id") == call_id:
            return message


def _attached(cdp, target_id):
    for message in getattr(cdp, "events", []):
        params = message.get("params") or {}
        if message.get("method") == "Target.attachedToTarget" and params["targetInfo"]["targetId"] == target_id:
            return params
    cdp.settimeout(10)
    while True:
        _, raw = cdp.recv_data()
        message = json.loads(raw)
        params = message.get("params") or {}
        if message.get("method") == "Target.attachedToTarget" and params["targetInfo"]["targetId"] == target_id:
            return params


def test_the_holder_leaves_with_the_browser(home, launched):
    env, reply, record = launched
    holder = psutil.Process(record["holderPid"])
    os.kill(reply["browser"]["pid"], signal.SIGKILL)
    holder.wait(15)
    assert not os.path.exists(socket_path(home))
    listed = bp(home, "browsers", "--browser", "launched", env=env).json["browsers"]
    assert [c["processState"] for c in listed] == ["not_running"]
    # A new launch starts afresh and is reachable again.
    relaunched = bp(home, "launch", "--headless", env=env)
    assert relaunched.rc == 0 and relaunched.json["alreadyRunning"] is False, relaunched
    assert bp(home, "connect", "--browser", "launched", env=env).rc == 0


def test_launch_stop_ends_the_holder_too(home, launched):
    env, reply, record = launched
    holder = psutil.Process(record["holderPid"])
    assert bp(home, "launch", "--stop", env=env).json["stopped"] is True
    holder.wait(15)
    assert not os.path.exists(socket_path(home))


def test_the_socket_refuses_a_message_without_an_id(home, launched):
    raw = socket.socket(socket.AF_UNIX)
    raw.settimeout(10)
    raw.connect(socket_path(home))
    raw.sendall(b'{"method":"Browser.close"}\0')
    assert raw.recv(4096) == b""  # dropped, not forwarded
    raw.close()
    env, reply, record = launched
    assert psutil.pid_exists(reply["browser"]["pid"])
    cdp = UnixCdp(socket_path(home), 10)
    try:
        assert cdp.call("Browser.getVersion")["result"]["product"]
    finally:
        cdp.shutdown()


def test_a_long_home_puts_the_socket_in_the_short_owner_only_runtime_dir(tmp_path):
    home = str(tmp_path / ("x" * 60) / ("y" * 60))
    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    try:
        assert bp(home, "launch", "--headless", env=env).rc == 0
        path = socket_path(home)
        assert path.startswith("/tmp/browser-pilot-") and len(path) <= 100
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
    finally:
        bp(home, "disconnect", env=env)
        bp(home, "launch", "--stop", env=env)
        helpers.stop_brokers(home)


def test_a_janitor_package_in_the_working_directory_is_never_run(home, tmp_path):
    impostor = tmp_path / "janitor"
    impostor.mkdir()
    (impostor / "__init__.py").write_text("")
    marker = tmp_path / "ran"
    (impostor / "pipe_holder.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    try:
        result = subprocess.run([helpers.BP, "launch", "--headless"], env=env, cwd=str(tmp_path),
                                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result
        assert not marker.exists()
    finally:
        bp(home, "launch", "--stop", env=env)
