"""Deleted and corrupted private files, stale sockets, and when the CLI may say
"unresponsive": the broker keeps answering and no Agent is locked out."""

import fcntl
import json
import os
import socket
import subprocess
import sys
import threading

import pytest
import zmq

from bp import errors, paths, protocol
from tests import helpers
from tests.faults.common import assert_recovered, assert_tabs_closed
from tests.helpers import bp

pytestmark = pytest.mark.faults


def test_deleted_owner_lock_locks_no_agent_out(home, chromium, connected_baseline):
    env, baseline = connected_baseline
    broker = helpers.broker_pid(home)
    os.unlink(os.path.join(home, "broker.lock"))

    status = bp(home, "status", env=env)
    assert status.rc == 0 and status.json["service"]["state"] == "running", status
    assert bp(home, "snapshot", env=env).rc == 0
    other = bp(home, "--client-key", "agent-b", "connect", env=env)
    assert other.rc == 0, other
    assert [p.pid for p in helpers.brokers_of(home)] == [broker]  # never a second broker
    from cli import client

    assert helpers.wait_until(lambda: client.broker_running(home) is True, timeout=5)  # the broker put it back
    assert_recovered(home, env, chromium, baseline, keys=("agent-b", "browser-pilot-cli"))
    assert helpers.brokers_of(home) == []


@pytest.mark.parametrize("damage", ["deleted", "corrupt"])
def test_disconnect_without_a_readable_locator_keeps_the_identity_check(home, chromium, connected_baseline, damage):
    env, baseline = connected_baseline
    path = os.path.join(home, "broker-locator.json")
    if damage == "deleted":
        os.unlink(path)
    else:
        with open(path, "w") as fh:
            fh.write("{not json")
    assert bp(home, "status", env=env).rc == 0
    done = bp(home, "disconnect", env=env)
    assert done.rc == 0 and done.json["brokerStopped"] is True, done  # named by the broker's own answer
    assert helpers.wait_until(lambda: not helpers.brokers_of(home))
    assert_tabs_closed(chromium, baseline)


def test_broker_stops_only_for_a_named_identity(home, connected):
    """A disconnect that names no broker identity releases the Agent but never stops it."""
    # The installed package's identity (the broker's), not that of a source tree on sys.path.
    installed = subprocess.run([sys.executable, "-c", "import json; from bp import identity; "
                                "print(json.dumps(identity.installation_identity()))"],
                               cwd="/", capture_output=True, text=True, check=True)
    request, payload = protocol.encode_request(protocol.OP_DISCONNECT, "browser-pilot-cli", {"expectBroker": None},
                                               timeout_ms=10000, installation=json.loads(installed.stdout))
    with helpers.broker_socket(home, path=paths.socket_path(home)) as sock:
        sock.send(payload)
        assert sock.poll(10000)
        reply = json.loads(sock.recv())
    assert reply["ok"] is True and reply["brokerStopped"] is False, reply
    assert reply["reason"] == "broker_identity_unknown", reply
    assert bp(home, "status", env=connected).json["service"]["state"] == "running"


def test_corrupt_startup_lock_of_nobody_is_reclaimed_at_once(home, chromium, env_for):
    env = env_for(home)
    paths.ensure_private_dir(home)
    lock = os.path.join(home, "startup.lock")
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"\x00garbage")
    os.close(fd)
    result = bp(home, "--timeout", "8000", "connect", env=env)
    assert result.rc == 0, result  # not after 30 s of mtime: no process holds it
    assert not os.path.exists(lock)


def test_startup_lock_held_by_a_live_process_is_never_reclaimed(home, env_for):
    """Even corrupt, a claim whose holder is alive (it holds the flock) is waited for."""
    env = env_for(home)
    paths.ensure_private_dir(home)
    lock = os.path.join(home, "startup.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"garbage")
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        result = bp(home, "--timeout", "1500", "connect", env=env)
        assert result.rc == 1 and result.code == "browser_disconnected", result
        assert os.path.exists(lock) and helpers.brokers_of(home) == []
    finally:
        os.close(fd)


def test_stale_janitor_sockets_of_dead_brokers_are_removed_at_start(home, env_for):
    paths.ensure_private_dir(home)
    stale = []
    for name in ("janitor-4242-1.sock", "janitor-4243-7.sock"):
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(os.path.join(home, name))
        sock.close()
        stale.append(os.path.join(home, name))
    assert bp(home, "connect", env=env_for(home)).rc == 0
    assert not [p for p in stale if os.path.exists(p)]


def test_short_timeout_is_not_called_unresponsive(home, connected):
    for args in (["snapshot"], ["status"], ["tabs"]):
        result = bp(home, "--timeout", "1", *args, env=connected)
        assert (result.json.get("remediation") or {}).get("code") != "restart_unresponsive_broker", (args, result)
        if not result.json.get("ok"):
            assert (result.json.get("context") or {}).get("reason") != "unresponsive", (args, result)
    assert bp(home, "status", env=connected).json["service"]["state"] == "running"


class _DroppingBroker:
    """A fault: a 'broker' that holds the owner lock and answers pings, but drops every other
    reply (as a broker whose reply could not be sent would)."""

    def __init__(self, home):
        paths.ensure_private_dir(home)
        self.lock_fd = os.open(os.path.join(home, "broker.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.bind("ipc://" + paths.socket_path(home))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop.is_set():
            if not self.sock.poll(50):
                continue
            frames = self.sock.recv_multipart()
            request = json.loads(frames[-1])
            if request.get("op") == protocol.OP_PING:
                body = {"ok": True, "service": {"state": "running", "pid": os.getpid()}}
                self.sock.send_multipart(frames[:-1] + [json.dumps(body).encode()])

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.sock.close(0)
        self.ctx.destroy(0)
        os.close(self.lock_fd)


def test_dropped_reply_is_not_called_unresponsive(home):
    fake = _DroppingBroker(home)
    try:
        tabs = bp(home, "--timeout", "500", "tabs")
        assert tabs.code == "browser_disconnected" and tabs.json["context"]["reason"] == "no_reply", tabs
        assert tabs.json["remediation"]["code"] == "inspect_broker_state", tabs
        status = bp(home, "status")  # the whole 2 s health wait, then a ping that is answered
        assert status.json["recovery"]["remediation"]["code"] == "inspect_broker_state", status
    finally:
        fake.close()


def test_no_remediation_tells_an_agent_to_stop_or_kill_a_process():
    for code, text in errors.REMEDIATIONS.items():
        lowered = text.lower()
        assert "kill" not in lowered and "stop that process" not in lowered, code


def test_deleted_broker_socket_is_bound_again(home, chromium, connected_baseline):
    env, baseline = connected_baseline
    os.unlink(paths.socket_path(home))
    assert helpers.wait_until(lambda: os.path.exists(paths.socket_path(home)), timeout=5)
    assert bp(home, "snapshot", env=env).rc == 0
    assert_recovered(home, env, chromium, baseline)
