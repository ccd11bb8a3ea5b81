"""`bp launch`: a private Chromium that discovery finds, and that --stop stops (only it)."""

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
