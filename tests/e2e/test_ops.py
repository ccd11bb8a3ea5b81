"""What the operation table (bp/ops.py) fixed, on real Chromium: connect and profiles --identify
have command records, and `bp dropdown` behind a busy tab waits instead of calling the broker dead."""

import json
import signal
import time

import psutil

from tests import helpers
from tests.helpers import bp

FORM = """<label>Fruit <select id=fruit><option value=a>Apple</option><option value=b>Banana</option></select></label>"""
BUSY = "(() => { const start = Date.now(); while (Date.now() - start < 5000) {} return 'done'; })()"


def _methods(home, env):
    listing = bp(home, "commands", env=env)
    assert listing.rc == 0, listing
    return {c["method"]: c for c in listing.json["commands"]}


def test_an_interrupted_connect_is_a_command_that_bp_command_knows(home, pending_browser):
    env = dict(BROWSER_PILOT_BROWSER_DATA_DIRS=pending_browser.root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=20000)
    assert bp(home, "status", **env).rc == 0
    running = helpers.bp_popen(home, "connect", **env)
    # The request is with the broker once the janitor for the pending handshake runs.
    assert helpers.wait_until(lambda: helpers.brokers_of(home) and
                              any("janitor" in " ".join(c.cmdline()) for c in helpers.brokers_of(home)[0].children()),
                              timeout=15)
    running.send_signal(signal.SIGINT)
    out, _ = running.communicate(timeout=10)
    reply = json.loads(out)
    assert reply["code"] == "unknown_outcome", reply  # the attempt had begun: it may still complete
    command_id = reply["context"]["commandId"]
    known = bp(home, "command", command_id, **env)
    assert known.rc == 0, known
    assert known.json["command"]["id"] == command_id
    assert known.json["command"]["method"] == "browser.connect" and known.json["command"]["mutating"] is True
    assert known.json["command"]["cancellationRequested"] is True


def test_a_broker_killed_during_a_pending_handshake_takes_its_janitor_with_it(home, pending_browser):
    """The janitor notices the broker's end (its stdin's EOF) while the browser still holds the
    handshake (an Allow dialog nobody answers), not only once the handshake timeout frees it:
    nothing is owned yet, so it leaves at once."""
    env = dict(BROWSER_PILOT_BROWSER_DATA_DIRS=pending_browser.root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=60000)
    assert bp(home, "status", **env).rc == 0
    running = helpers.bp_popen(home, "connect", **env)
    janitors = helpers.wait_until(lambda: [c for b in helpers.brokers_of(home) for c in b.children()
                                           if "janitor" in " ".join(c.cmdline())], timeout=15)
    assert janitors, "no janitor started for the pending handshake"
    helpers.brokers_of(home)[0].kill()
    gone, alive = psutil.wait_procs(janitors, timeout=20)  # a third of the handshake timeout
    assert not alive, "the janitor outlived its broker while the handshake was pending"
    running.kill()
    running.communicate(timeout=10)


def test_connect_and_profiles_identify_leave_command_records(home, connected):
    methods = _methods(home, connected)
    assert methods["browser.connect"]["status"] == "completed"
    assert bp(home, "profiles", "--identify", env=connected).rc == 0
    methods = _methods(home, connected)
    assert methods["browser.profiles"]["status"] == "completed" and methods["browser.profiles"]["mutating"] is True


def test_dropdown_behind_a_busy_tab_waits_for_it(home, connected, pages):
    assert bp(home, "open", pages.page(FORM), env=connected).rc == 0
    busy = helpers.bp_popen(home, "eval", BUSY, **{k: v for k, v in connected.items() if k.startswith("BROWSER_PILOT_")})
    try:
        # The eval holds the tab's worker; the dropdown queues behind it for longer than the 2 s
        # a quick call may take.
        assert helpers.wait_until(lambda: any(c["method"] == "browser.eval" and c["status"] in ("accepted", "dispatched")
                                              for c in bp(home, "commands", env=connected).json["commands"]), timeout=10)
        time.sleep(0.5)  # from accepted to running on the tab's worker
        result = bp(home, "dropdown", "#fruit", env=connected)
        assert result.rc == 0, result  # before: browser_disconnected + restart_unresponsive_broker
        assert [o["label"] for o in result.json["options"]] == ["Apple", "Banana"]
    finally:
        out, _ = busy.communicate(timeout=30)
    assert json.loads(out)["ok"] is True
