"""SIGKILL and SIGSTOP of the janitor, the broker and Chromium in the middle of a command."""

import os
import shutil
import signal
import subprocess
import time

import pytest

from tests import helpers
from tests.faults.common import (assert_recovered, assert_tabs_closed, janitor_pid, janitors_of, leftover,
                                 reconnect_and_recover)
from tests.helpers import bp

pytestmark = pytest.mark.faults


def _managed(home, env, key="browser-pilot-cli"):
    tabs = bp(home, "--client-key", key, "tabs", env=env).json["tabs"]
    return [t for t in tabs if t["origin"] == "managed"]


def _slow_wait(home, env, timeout_ms=8000):
    """A command in flight: a wait that cannot succeed, answered at its deadline."""
    proc = subprocess.Popen([helpers.BP, "--timeout", str(timeout_ms), "wait", "--text", "never-there"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    time.sleep(0.5)  # let it reach the broker; the fault lands while it waits
    return proc


def _envelope(proc, timeout=30):
    out, err = proc.communicate(timeout=timeout)
    result = helpers.Result(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert result.json is not None and "Traceback" not in result.stderr, result
    return result


def test_new_janitor_takes_over_the_tabs_of_a_killed_one(home, chromium, connected_baseline, pages):
    env, baseline = connected_baseline
    assert bp(home, "open", "--new", pages.page("<p>second</p>"), env=env).rc == 0
    old_tabs = leftover(chromium, baseline)
    assert len(old_tabs) == 2
    os.kill(janitor_pid(home, env), signal.SIGKILL)
    assert helpers.wait_until(lambda: bp(home, "status", env=env).json["browser"]["state"] == "disconnected")

    again = bp(home, "connect", env=env)
    assert again.rc == 0, again
    # The predecessor's tabs are closed by the new janitor, not left open unowned, and the
    # Agent has exactly one managed tab again (not the old one shown as managed plus another).
    assert helpers.wait_until(lambda: not old_tabs & set(chromium.pages()), timeout=5)
    assert len(leftover(chromium, baseline)) == 1
    assert len(_managed(home, env)) == 1
    # And the new janitor owns what is left: the broker's death closes it.
    os.kill(helpers.broker_pid(home), signal.SIGKILL)
    assert_tabs_closed(chromium, baseline)
    reconnect_and_recover(home, env, chromium, baseline)


def test_janitor_sigstopped_mid_command(home, chromium, connected_baseline):
    env, baseline = connected_baseline
    janitor = janitor_pid(home, env)
    proc = _slow_wait(home, env, timeout_ms=3000)
    os.kill(janitor, signal.SIGSTOP)
    try:
        stuck = bp(home, "--timeout", "3000", "snapshot", env=env)
        assert stuck.rc == 1 and stuck.json["code"] != "internal_error", stuck
        assert (stuck.json.get("remediation") or {}).get("code") != "restart_unresponsive_broker", stuck
        assert bp(home, "--timeout", "2000", "status", env=env).rc == 0  # the broker itself answers
    finally:
        os.kill(janitor, signal.SIGCONT)
    _envelope(proc)
    assert bp(home, "snapshot", env=env).rc == 0
    assert_recovered(home, env, chromium, baseline)


def test_broker_sigkilled_mid_command(home, chromium, connected_baseline):
    env, baseline = connected_baseline
    proc = _slow_wait(home, env)
    os.kill(helpers.broker_pid(home), signal.SIGKILL)
    result = _envelope(proc)
    assert result.rc == 1 and result.code in ("browser_disconnected", "unknown_outcome"), result
    assert_tabs_closed(chromium, baseline)
    assert helpers.wait_until(lambda: not janitors_of(home))
    reconnect_and_recover(home, env, chromium, baseline)


def test_broker_sigstopped_mid_command(home, chromium, connected_baseline):
    env, baseline = connected_baseline
    broker = helpers.broker_pid(home)
    proc = _slow_wait(home, env, timeout_ms=4000)
    os.kill(broker, signal.SIGSTOP)
    try:
        time.sleep(1.0)
        # A stopped broker is not dead: its janitor keeps every tab.
        assert len(leftover(chromium, baseline)) == 1 and len(janitors_of(home)) == 1
    finally:
        os.kill(broker, signal.SIGCONT)
    result = _envelope(proc)
    assert result.rc == 1 and result.code == "wait_timeout", result
    assert_recovered(home, env, chromium, baseline)


def test_chromium_sigkilled_mid_command(home, pages):
    browser = helpers.Chromium(helpers.short_tmpdir("bpc-fault-"))
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=browser.root)
    try:
        assert bp(home, "connect", env=env).rc == 0
        assert bp(home, "open", pages.page("<p>here</p>"), env=env).rc == 0
        proc = _slow_wait(home, env)
        browser.stop()
        result = _envelope(proc)
        assert result.rc == 1 and result.code in ("browser_disconnected", "unknown_outcome"), result
        status = bp(home, "--timeout", "2000", "status", env=env)
        assert status.rc == 0 and status.json["browser"]["state"] == "disconnected", status
        assert helpers.wait_until(lambda: not janitors_of(home))  # the janitor left with its browser
        # A browser started again is connected afresh, with one new managed tab and nothing else.
        os.unlink(os.path.join(browser.root, "DevToolsActivePort"))  # the killed browser's
        browser = helpers.Chromium(browser.root)
        baseline = set(browser.pages())
        assert bp(home, "connect", env=env).rc == 0
        assert len(leftover(browser, baseline)) == 1
        assert_recovered(home, env, browser, baseline)
    finally:
        browser.stop()
        shutil.rmtree(browser.root, ignore_errors=True)
