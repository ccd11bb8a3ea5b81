"""`bp launch`: a private Chromium that discovery finds, and that --stop stops (only it)."""

import json
import os

import psutil

from tests import helpers
from tests.helpers import bp


def test_launch_connect_and_stop_only_the_launched_browser(home, chromium):
    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    launched = bp(home, "launch", "--headless", env=env)
    assert launched.rc == 0, launched
    info = launched.json["browser"]
    assert info["headless"] is True and info["id"].startswith("browser:launched:")
    assert info["userDataRoot"].startswith(home)
    pid = info["pid"]

    again = bp(home, "launch", "--headless", env=env)
    assert again.json["alreadyRunning"] is True and again.json["browser"]["pid"] == pid

    listed = [c for c in bp(home, "browsers", "--browser", "launched", env=env).json["browsers"]]
    assert [c["state"] for c in listed] == ["disconnected"]
    connected = bp(home, "connect", "--browser", "launched", env=env)
    assert connected.rc == 0, connected
    assert connected.json["browserId"] == info["id"]
    assert bp(home, "disconnect", env=env).json["brokerStopped"] is True

    stopped = bp(home, "launch", "--stop", env=env)
    assert stopped.json == {"ok": True, "stopped": True, "pid": pid}
    assert helpers.wait_until(lambda: not psutil.pid_exists(pid) or
                              psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    assert chromium.proc.poll() is None  # the other browser is untouched
    assert bp(home, "launch", "--stop", env=env).json == {"ok": True, "stopped": False, "reason": "not_launched"}


def test_launch_stop_never_kills_a_process_that_reused_the_pid(home):
    # A record whose pid is alive but whose start time differs is not our browser.
    import json

    me = psutil.Process(os.getpid())
    record = {"pid": me.pid, "startTime": me.create_time() - 1000, "userDataDir": os.path.join(home, "p"),
              "executable": "/bin/false", "product": "Chromium", "headless": True}
    path = os.path.join(home, "launched-browser.json")
    with open(path, "w") as fh:
        json.dump(record, fh)
    os.chmod(path, 0o600)
    result = bp(home, "launch", "--stop")
    assert result.json == {"ok": True, "stopped": False, "pid": me.pid}
    assert me.is_running()


def test_launch_with_a_missing_executable_is_browser_not_found(home):
    result = bp(home, "launch", "--headless", BROWSER_PILOT_CHROME="/nonexistent/chrome")
    assert result.rc == 1
    assert result.code == "browser_not_found"
    relative = bp(home, "launch", BROWSER_PILOT_CHROME="chrome")
    assert relative.code == "invalid_argument"
    assert relative.json["context"]["field"] == "BROWSER_PILOT_CHROME"


def test_a_renderer_crash_leaves_its_dump_in_the_launched_profile(home, pages):
    import glob

    from bp import discovery
    from janitor.unix_cdp import UnixCdp

    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    launched = bp(home, "launch", "--headless", env=env)
    assert launched.rc == 0, launched
    profile = launched.json["browser"]["userDataRoot"]
    try:
        assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
        assert bp(home, "open", "--new", pages.page("<p>doomed</p>", title="doomed"), env=env).rc == 0
        # The launched browser has no DevTools port: the test reaches it through the owner-only
        # socket of its pipe holder, as the janitor does.
        cdp = UnixCdp(discovery.launched_socket(home), 10)
        try:
            infos = cdp.call("Target.getTargets")["result"]["targetInfos"]
            page = [t for t in infos if t["type"] == "page" and t["title"] == "doomed"][0]
            session = cdp.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                               call_id=2)["result"]["sessionId"]
            cdp.call("Target.setDiscoverTargets", {"discover": True}, call_id=4)
            cdp.send('{"id":3,"method":"Page.crash","params":{},"sessionId":"%s"}' % session)
            # Hold the connection until the browser says the renderer crashed: closing it at once
            # lets the pipe holder undo this client's session first, on a loaded machine before
            # the crash command reached the renderer (then nothing crashed and no dump came).
            cdp.settimeout(30)
            while True:
                message = json.loads(cdp.recv_data()[1])
                if message.get("method") == "Target.targetCrashed" and \
                        message["params"].get("targetId") == page["targetId"]:
                    break
        finally:
            cdp.shutdown()
        dumps = os.path.join(profile, "Crash Reports")
        assert helpers.wait_until(lambda: glob.glob(os.path.join(dumps, "**", "*.dmp"), recursive=True), 30)
        crashed = bp(home, "snapshot", env=env)
        assert crashed.code == "target_crashed", crashed
    finally:
        bp(home, "disconnect", env=env)
        bp(home, "launch", "--stop", env=env)
