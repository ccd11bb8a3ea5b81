"""What every fault test ends with: the broker answers `bp status` and no managed tab is left
in the browser (checked with Chromium's own /json/list, never through bp)."""

import os

import psutil

from tests import helpers
from tests.helpers import bp


def janitors_of(home):
    """Live janitor processes serving this home (children of its broker)."""
    found = []
    for broker in helpers.brokers_of(home):
        for child in broker.children():
            try:
                if "janitor" in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                    found.append(child)
            except psutil.Error:
                pass
    return found


def janitor_pid(home, env):
    status = bp(home, "status", env=env).json
    return [p for p in status["processes"] if p["role"] == "janitor"][0]["pid"]


def leftover(chromium, baseline):
    """Tabs in the browser now that were not there before the test (baseline: a set of ids)."""
    return set(chromium.pages()) - set(baseline)


def assert_recovered(home, env, chromium, baseline, keys=("browser-pilot-cli",)):
    """The broker answers status at once; after each Agent disconnects, nothing is left."""
    status = bp(home, "--timeout", "2000", "status", env=env)
    assert status.rc == 0, status
    assert status.json["service"]["state"] == "running", status
    for key in keys:
        done = bp(home, "--client-key", key, "disconnect", env=env)
        assert done.rc == 0, done
    assert_tabs_closed(chromium, baseline, timeout=10)


def assert_tabs_closed(chromium, baseline, timeout=5):
    """The crash boundary's work: every tab opened since the baseline closes."""
    assert helpers.wait_until(lambda: not leftover(chromium, baseline), timeout=timeout), leftover(chromium, baseline)


def reconnect_and_recover(home, env, chromium, baseline):
    """After a broker's death: a fresh connect succeeds and leaves a recovered state."""
    assert bp(home, "connect", env=env).rc == 0
    assert_recovered(home, env, chromium, baseline)


def send_group(pid, signum):
    os.killpg(os.getpgid(pid), signum)
