"""Exactly one broker, stale claims, unresponsive brokers: real processes, real Chromium."""

import json
import os
import signal
import threading

import psutil

from tests import helpers
from tests.helpers import bp


def test_eight_concurrent_first_connects_start_exactly_one_broker(home, env_for):
    env = env_for(home)
    results = [None] * 8

    def run(i):
        e = dict(env, BROWSER_PILOT_CLIENT_KEY=f"agent-{i}")
        results[i] = bp(home, "connect", env=e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.rc == 0 and r.json["ok"] for r in results), results
    assert len({r.json["connectionGeneration"] for r in results}) == 1  # one shared connection
    assert len(helpers.brokers_of(home)) == 1
    status = bp(home, "status", env=env).json
    assert status["service"]["agents"] == 8
    assert [p["role"] for p in status["processes"]] == ["broker", "janitor"]


def test_stale_locator_and_lock_of_a_sigkilled_broker_do_not_block_the_next_start(home, connected):
    old_pid = helpers.broker_pid(home)
    os.kill(old_pid, signal.SIGKILL)
    helpers.wait_until(lambda: not psutil.pid_exists(old_pid) or psutil.Process(old_pid).status() == psutil.STATUS_ZOMBIE)
    # A startup lock left by a CLI that died mid-start (dead pid), next to the dead locator.
    dead = psutil.Popen(["true"])
    dead.wait()
    lock = os.path.join(home, "startup.lock")
    with open(lock, "w") as fh:
        json.dump({"schemaVersion": 1, "pid": dead.pid, "startTime": 1.0, "token": "x"}, fh)
    os.chmod(lock, 0o600)
    assert os.path.exists(os.path.join(home, "broker-locator.json"))
    assert os.path.exists(os.path.join(home, "broker.sock"))

    status = bp(home, "status", env=connected)
    assert status.json["service"]["state"] == "stopped", status  # a dead broker is not "unavailable"

    again = bp(home, "connect", env=connected)
    assert again.rc == 0, again
    assert helpers.broker_pid(home) != old_pid
    assert len(helpers.brokers_of(home)) == 1
    assert not os.path.exists(lock)


def test_sigstopped_broker_gets_unresponsive_remediation_and_stays_alive(home, connected):
    pid = helpers.broker_pid(home)
    os.kill(pid, signal.SIGSTOP)
    try:
        result = bp(home, "--timeout", "3000", "connect", env=connected)
        assert result.rc == 1
        assert result.code == "browser_disconnected"
        assert result.json["retryable"] is True
        assert result.json["remediation"]["code"] == "restart_unresponsive_broker"

        status = bp(home, "status", env=connected)
        assert status.rc == 0
        assert status.json["service"]["state"] == "unavailable"  # the contract's word for it
        assert status.json["session"] == {"state": "unavailable"}
        assert status.json["recovery"]["remediation"]["code"] == "restart_unresponsive_broker"

        assert psutil.Process(pid).status() == psutil.STATUS_STOPPED  # never signalled or replaced
        assert [p.pid for p in helpers.brokers_of(home)] == [pid]
    finally:
        os.kill(pid, signal.SIGCONT)
    assert bp(home, "status", env=connected).json["service"]["state"] == "running"


def test_unresponsive_wait_never_exceeds_the_command_timeout(home, connected):
    pid = helpers.broker_pid(home)
    os.kill(pid, signal.SIGSTOP)
    try:
        result = bp(home, "--timeout", "300", "status", env=connected)
        assert result.json["service"]["state"] == "unavailable"
        # It waited the 300 ms it was given, not the 2 s health wait: so it only says that no
        # reply came (a broker is called unresponsive only after the whole health wait).
        assert result.json["recovery"]["remediation"]["code"] == "inspect_broker_state", result.json
    finally:
        os.kill(pid, signal.SIGCONT)


def test_commands_other_than_connect_never_start_a_broker(home, env_for):
    env = env_for(home)
    for args in (["status"], ["browsers"], ["disconnect"]):
        result = bp(home, *args, env=env)
        assert result.rc == 0, result
    assert helpers.brokers_of(home) == []
    assert not os.path.exists(os.path.join(home, "broker.sock"))


def test_sigkill_of_the_broker_during_use_lets_the_next_connect_start_a_fresh_one(home, connected):
    first = helpers.broker_pid(home)
    os.kill(first, signal.SIGKILL)
    result = bp(home, "connect", env=connected)
    assert result.rc == 0, result
    assert helpers.broker_pid(home) != first
