"""The janitor is the crash boundary: managed tabs go with the broker, user tabs never do."""

import os
import signal

import psutil

from tests import helpers
from tests.helpers import bp


def _managed_ids(chromium, before):
    return set(chromium.pages()) - set(before)


def test_sigkill_of_broker_closes_managed_tabs_and_popups_only(home, chromium, env_for):
    env = env_for(home)
    user_before = chromium.new_user_tab()  # opened by the user before Browser Pilot connected
    baseline = chromium.pages()
    for key in ("agent-a", "agent-b", "agent-c"):
        result = bp(home, "--client-key", key, "connect", env=env)
        assert result.rc == 0, result
    managed = _managed_ids(chromium, baseline)
    assert len(managed) == 3
    # A popup of a managed tab (owned opener chain) and a popup of a user tab (not owned).
    some_managed = sorted(managed)[0]
    chromium.evaluate(some_managed, "window.open('about:blank#managed-popup'); 1")
    chromium.evaluate(user_before, "window.open('about:blank#user-popup'); 1")
    user_after = chromium.new_user_tab()  # opened by the user while connected
    assert helpers.wait_until(lambda: len(chromium.pages()) == len(baseline) + 3 + 3)
    popups = {t for t, info in chromium.pages().items() if "popup" in info["url"]}
    managed_popup = {t for t in popups if chromium.pages()[t]["url"].endswith("managed-popup")}
    user_popup = popups - managed_popup

    os.kill(helpers.broker_pid(home), signal.SIGKILL)

    closed = managed | managed_popup
    assert helpers.wait_until(lambda: not (closed & set(chromium.pages())), timeout=5)
    remaining = set(chromium.pages())
    assert {user_before, user_after} | user_popup <= remaining
    assert set(baseline) <= remaining
    assert helpers.wait_until(lambda: not [p for p in psutil.process_iter(["cmdline"])
                                           if "janitor" in (p.info["cmdline"] or [])[-7:-6] + (p.info["cmdline"] or [])[2:3]
                                           and str(home) in " ".join(p.info["cmdline"] or [])], timeout=5)
    nxt = bp(home, "connect", env=env)
    assert nxt.rc == 0, nxt


def test_killed_janitor_reports_disconnected_and_next_connect_has_newer_generation(home, chromium, connected):
    first = bp(home, "status", env=connected).json
    assert first["browser"]["state"] == "ready"
    generation = first["browser"]["connectionGeneration"]
    janitor = [p for p in first["processes"] if p["role"] == "janitor"][0]["pid"]
    os.kill(janitor, signal.SIGKILL)

    def disconnected():
        s = bp(home, "status", env=connected).json
        return s if s["browser"]["state"] == "disconnected" else None

    status = helpers.wait_until(disconnected, timeout=5)
    assert status, "the broker did not notice the janitor's death"
    assert status["recovery"]["required"] is True
    assert status["recovery"]["code"] == "browser_disconnected"

    again = bp(home, "connect", env=connected)
    assert again.rc == 0, again
    assert again.json["connectionGeneration"] > generation
    assert bp(home, "status", env=connected).json["browser"]["state"] == "ready"


def test_disconnect_closes_only_this_agents_tab_and_keeps_broker_for_others(home, chromium, env_for):
    env = env_for(home)
    baseline = set(chromium.pages())
    assert bp(home, "--client-key", "agent-a", "connect", env=env).rc == 0
    tab_a = set(chromium.pages()) - baseline
    assert bp(home, "--client-key", "agent-b", "connect", env=env).rc == 0
    tab_b = set(chromium.pages()) - baseline - tab_a
    broker = helpers.broker_pid(home)

    first = bp(home, "--client-key", "agent-a", "disconnect", env=env)
    assert first.rc == 0, first
    assert first.json["brokerStopped"] is False
    assert first.json["reason"] == "other_agents_active"
    assert helpers.wait_until(lambda: not (tab_a & set(chromium.pages())))
    assert tab_b <= set(chromium.pages())
    assert helpers.broker_pid(home) == broker and psutil.pid_exists(broker)

    second = bp(home, "--client-key", "agent-b", "disconnect", env=env)
    assert second.rc == 0, second
    assert second.json["brokerStopped"] is True
    assert helpers.brokers_of(home) == []
    assert not os.path.exists(os.path.join(home, "broker-locator.json"))
    assert not (tab_b & set(chromium.pages()))
    assert baseline <= set(chromium.pages())  # user tabs untouched


def test_disconnect_from_another_installation_releases_but_leaves_broker_running(home, chromium, env_for, tmp_path):
    import shutil
    import subprocess
    import sys

    import bp as bp_package

    env = env_for(home)
    assert bp(home, "connect", env=env).rc == 0
    # A second, compatible installation: the same code at another real path.
    src = os.path.dirname(os.path.dirname(os.path.realpath(bp_package.__file__)))
    other = tmp_path / "other-install"
    for package in ("bp", "cli", "broker", "janitor"):
        shutil.copytree(os.path.join(src, package), other / package)
    result = subprocess.run([sys.executable, "-m", "cli", "disconnect"], env=dict(env, PYTHONPATH=str(other)),
                            cwd=str(other), capture_output=True, text=True, timeout=60)
    reply = helpers.Result(result)
    assert reply.rc == 0, reply
    assert reply.json["released"] is True
    assert reply.json["brokerStopped"] is False
    assert reply.json["reason"] == "other_installation"
    assert len(helpers.brokers_of(home)) == 1
