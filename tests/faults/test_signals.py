"""Signals to the broker's process group (a logout, a closing terminal, `kill -TERM -PGID`, a
service manager) and to the janitor alone: the crash boundary still closes every managed tab."""

import os
import signal

import pytest

from tests import helpers
from tests.faults.common import (assert_recovered, assert_tabs_closed, janitor_pid, janitors_of, leftover,
                                 reconnect_and_recover, send_group)
from tests.helpers import bp

pytestmark = pytest.mark.faults


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_group_signal_closes_every_managed_tab(home, chromium, env_for, pages, signum):
    env = env_for(home)
    baseline = set(chromium.pages())
    for key in ("agent-a", "agent-b"):
        assert bp(home, "--client-key", key, "connect", env=env).rc == 0
    assert bp(home, "--client-key", "agent-a", "open", "--new", pages.page("<p>second</p>"), env=env).rc == 0
    assert len(leftover(chromium, baseline)) == 3
    broker = helpers.broker_pid(home)

    send_group(broker, signum)

    assert helpers.wait_until(lambda: not helpers.brokers_of(home) and not janitors_of(home), timeout=10)
    assert_tabs_closed(chromium, baseline)
    reconnect_and_recover(home, env, chromium, baseline)


def test_janitor_outlives_signals_aimed_at_it_and_still_cleans_up(home, chromium, connected_baseline):
    env, baseline = connected_baseline
    janitor = janitor_pid(home, env)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        os.kill(janitor, signum)
    status = bp(home, "status", env=env).json
    assert status["browser"]["state"] == "ready"
    assert janitor_pid(home, env) == janitor
    assert len(leftover(chromium, baseline)) == 1
    assert_recovered(home, env, chromium, baseline)


def test_janitor_argv_holds_no_devtools_url(home, connected):
    (janitor,) = janitors_of(home)
    assert not [arg for arg in janitor.cmdline() if "ws://" in arg or "devtools" in arg]
