"""Starting the broker: only `bp connect` does this.

Exactly one broker per home: every contender health-checks, takes the startup lock (a private
claim published complete-before-visible), health-checks again, and only then looks at the old
locator. A live broker that does not answer is reported, never signalled or replaced; a dead
one (pid + start time prove it) is reclaimed.
"""

import os
import subprocess
import sys
import time

from bp import identity, locator, paths, protocol
from bp.errors import BPError, disconnected
from cli import client

START_WAIT_S = 15.0


def _ping(home_dir, settings, wait_ms):
    return client.ping(home_dir, settings, wait_ms)


def _healthy(home_dir, settings):
    """True when a broker answers; raises when one is alive but silent; False when none runs."""
    running = client.broker_running(home_dir)
    if running is False:
        return False
    wait_ms = min(protocol.HEALTH_WAIT_MS, settings.timeout_ms)
    reply = _ping(home_dir, settings, wait_ms)
    if reply is None:
        error = client.silent_broker_error(home_dir, running, wait_ms)
        if (error.context or {}).get("reason") == "not_running":
            return False
        raise error
    if not reply.get("ok"):
        raise BPError(reply["code"], reply["error"], retryable=reply.get("retryable"), context=reply.get("context"),
                      remediation=reply.get("remediation"))
    return True


def ensure_broker(settings):
    home_dir, _ = paths.ensure_home()
    if _healthy(home_dir, settings):
        return
    deadline = time.monotonic() + settings.timeout_ms / 1000.0
    with locator.StartupLock(home_dir, wait_s=max(0.1, deadline - time.monotonic())):
        if _healthy(home_dir, settings):
            return  # another CLI started it while we waited for the lock
        record, ident = locator.read_locator(home_dir)
        if record and not record.get("corrupt"):
            if identity.is_alive(record["pid"], record.get("startTime")):
                # Alive, holds no owner lock or does not answer: never kill or replace it.
                raise client.unresponsive_error()
        if record:
            paths.unlink_if_same(locator.locator_path(home_dir), ident)  # a dead broker's claim
        _forget_startup_error(home_dir)
        proc = _spawn(home_dir)
        start_deadline = min(deadline, time.monotonic() + START_WAIT_S)
        while time.monotonic() < start_deadline:
            if client.broker_running(home_dir) and _ping(home_dir, settings, 500) is not None:
                return
            if proc.poll() is not None:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            # Still starting (a busy machine, a short --timeout): it carries on, detached.
            raise disconnected("The Browser Pilot service is still starting; run the command again.",
                               remediation_code="inspect_broker_startup", context={"reason": "starting"})
        refused = _startup_error(home_dir)
        if refused is not None:
            raise refused  # e.g. its policy file is unsafe or invalid: the service refused to start
        raise disconnected("The Browser Pilot service did not start.", remediation_code="inspect_broker_startup",
                           context={"exitCode": proc.poll()})


STARTUP_ERROR_NAME = "startup-error.json"  # written by broker/server.py when it refuses to start


def _forget_startup_error(home_dir):
    try:
        os.unlink(os.path.join(home_dir, "logs", STARTUP_ERROR_NAME))
    except FileNotFoundError:
        pass


def _startup_error(home_dir):
    """The BPError the broker recorded as it refused to start, or None."""
    import json

    try:
        raw = paths.read_private_file(os.path.join(home_dir, "logs", STARTUP_ERROR_NAME))
        reply = json.loads(raw) if raw else None
    except (BPError, OSError, ValueError):
        return None
    if not isinstance(reply, dict) or reply.get("ok") is not False or not isinstance(reply.get("code"), str):
        return None
    try:
        return BPError(reply["code"], str(reply.get("error") or "The Browser Pilot service refused to start."),
                       retryable=reply.get("retryable"), context=reply.get("context"),
                       remediation=reply.get("remediation"))
    except ValueError:
        return None


def _spawn(home_dir):
    env = dict(os.environ, BROWSER_PILOT_HOME=home_dir)
    env.pop("BROWSER_PILOT_REQUEST_ID", None)
    log_dir = os.path.join(home_dir, "logs")
    paths.ensure_private_dir(log_dir)
    # Only what escapes the broker's own logging (an import error, a crash) lands here.
    err_fd = os.open(os.path.join(log_dir, "broker-stderr.log"),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        # Detached: its own session, no terminal, no inherited descriptors, cwd / so it pins nothing.
        return subprocess.Popen([sys.executable, "-m", "broker"], cwd="/", env=env, start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err_fd, close_fds=True)
    finally:
        os.close(err_fd)
