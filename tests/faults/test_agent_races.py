"""Races of one Agent with itself, and a tab that draws no frames."""

import subprocess

import pytest

from tests import helpers
from tests.faults.common import assert_recovered, leftover
from tests.helpers import bp

pytestmark = pytest.mark.faults


def test_concurrent_connects_of_one_key_create_one_managed_tab(home, chromium, env_for):
    env = env_for(home)
    baseline = set(chromium.pages())
    assert bp(home, "--client-key", "other", "connect", env=env).rc == 0  # the broker is up: the race is the tab
    baseline |= leftover(chromium, baseline)
    procs = [subprocess.Popen([helpers.BP, "--client-key", "racer", "connect"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) for _ in range(4)]
    for proc in procs:
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    assert len(leftover(chromium, baseline)) == 1
    tabs = bp(home, "--client-key", "racer", "tabs", env=env).json["tabs"]
    assert len([t for t in tabs if t["origin"] == "managed"]) == 1
    assert_recovered(home, env, chromium, baseline, keys=("racer",))
    assert bp(home, "--client-key", "other", "disconnect", env=env).rc == 0


def test_screenshot_of_a_background_managed_tab_always_answers(home, chromium, connected, pages, tmp_path):
    assert bp(home, "open", pages.page("<h1>front</h1>"), env=connected).rc == 0
    assert bp(home, "open", "--new", pages.page("<h1>behind</h1>", title="behind"), env=connected).rc == 0
    for attempt in range(6):
        shot = bp(home, "--timeout", "15000", "screenshot", str(tmp_path / f"shot-{attempt}.png"), env=connected)
        assert shot.rc == 0, (attempt, shot)
        assert shot.json["width"] > 0
