"""Command records on real Chromium: --request-id retries that never run twice, listing,
cancellation before and after dispatch, SIGINT, the status recovery view, and browser loss."""

import json
import os
import shutil
import signal
import socket
import subprocess
import time

from tests import helpers
from tests.helpers import bp

COUNTER = "<button onclick=\"this.textContent = 'Count ' + (+this.textContent.split(' ')[1] + 1)\">Count 0</button>"


def counter_ref(observation):
    return [e["ref"] for e in observation["elements"] if e["name"].startswith("Count ")][0]


def count(home, env):
    names = [e["name"] for e in bp(home, "snapshot", env=env).json["elements"] if e["name"].startswith("Count ")]
    return int(names[0].split()[1])


def start(env, *args):
    return subprocess.Popen([helpers.BP, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def wait_for_command(home, env, status, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = bp(home, "commands", "--status", status, env=env).json["commands"]
        if rows:
            return rows[0]
        time.sleep(0.05)
    raise AssertionError(f"no {status} command appeared")


def test_a_retried_request_id_never_clicks_twice(home, connected, pages):
    observation = bp(home, "open", pages.page(COUNTER), env=connected).json
    ref = str(counter_ref(observation))
    first = bp(home, "--request-id", "step-7", "click", ref, env=connected)
    assert first.rc == 0, first
    assert count(home, connected) == 1
    # The same intended call from a new process: the recorded result, not a second click.
    again = bp(home, "--request-id", "step-7", "click", ref, env=connected)
    assert again.rc == 0, again
    assert again.json["recovered"] is True
    assert again.json["evidence"] == first.json["evidence"]
    assert count(home, connected) == 1
    reused = bp(home, "--request-id", "step-7", "click", ref, "--double", env=connected)
    assert reused.code == "invalid_argument", reused
    assert reused.json["context"]["field"] == "requestId"
    assert reused.json["context"]["reason"] == "request_id_reused"
    assert count(home, connected) == 1
    record = bp(home, "command", again.json["commandId"], env=connected).json
    assert record["command"]["status"] == "completed"
    assert record["command"]["method"] == "browser.click" and record["command"]["mutating"] is True
    assert record["result"]["evidence"] == first.json["evidence"]


def test_commands_are_listed_per_key(home, connected, pages, env_for):
    bp(home, "open", pages.page(COUNTER), env=connected)
    bp(home, "snapshot", env=connected)
    rows = bp(home, "commands", env=connected).json["commands"]
    assert [r["method"] for r in rows[:2]] == ["browser.snapshot", "browser.open"]
    assert all(r["status"] == "completed" for r in rows)
    assert not any(k in json.dumps(rows) for k in ("sessionId", "frameId"))
    other = env_for(home, BROWSER_PILOT_CLIENT_KEY="another-agent")
    assert bp(home, "commands", env=other).json["commands"] == []
    hidden = bp(home, "command", rows[0]["id"], env=other)
    assert hidden.code == "invalid_argument" and hidden.json["context"]["field"] == "commandId", hidden
    assert bp(home, "commands", "--status", "bogus", env=connected).code == "invalid_argument"
    # --limit is 1-100, as the contract says.
    assert bp(home, "commands", "--limit", "100", env=connected).rc == 0
    for limit in ("0", "101", "256"):
        bad = bp(home, "commands", "--limit", limit, env=connected)
        assert bad.code == "invalid_argument" and bad.json["context"]["field"] == "limit", bad


def test_status_shows_the_selected_profile_and_tab_and_a_failed_command_shows_its_error(home, connected, pages):
    bp(home, "open", pages.page(COUNTER, title="Counter page"), env=connected)
    status = bp(home, "status", env=connected).json
    tab = [t for t in bp(home, "tabs", env=connected).json["tabs"] if t["selected"]][0]
    target = status["session"]["target"]
    assert target == {k: tab[k] for k in ("index", "title", "url", "origin", "profileContextId")}
    assert (target["title"], target["origin"]) == ("Counter page", "managed")
    profile = status["session"]["profile"]
    assert profile["profileContextId"] == tab["profileContextId"] and profile["selected"] is True
    assert status["recovery"] == {"required": False}
    failed = bp(home, "click", "999", env=connected)
    assert failed.code == "stale_ref", failed
    row = bp(home, "commands", "--limit", "1", env=connected).json["commands"][0]
    assert (row["method"], row["errorCode"]) == ("browser.click", "stale_ref")
    record = bp(home, "command", row["id"], env=connected).json
    # The contract's shape for a failed command: error {code, message, data {code, retryable, context}}.
    assert "result" not in record
    error = record["error"]
    assert (error["code"], error["message"]) == ("stale_ref", failed.json["error"])
    assert (error["data"]["code"], error["data"]["retryable"], error["data"]["context"]) == \
        ("stale_ref", failed.json["retryable"], failed.json["context"])


def test_a_refused_connect_leaves_the_generation_and_the_next_connection_is_the_next_one(home):
    browser = helpers.Chromium(helpers.short_tmpdir("bpg-"))
    port_file = os.path.join(browser.root, "DevToolsActivePort")
    real = open(port_file).read()
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=browser.root)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed_port = probe.getsockname()[1]
        with open(port_file, "w") as fh:  # a stale endpoint: the browser runs, the port refuses
            fh.write(f"{closed_port}\n{real.splitlines()[1]}\n")
        refused = bp(home, "connect", env=env)
        assert refused.code == "browser_disconnected", refused
        assert bp(home, "status", env=env).json["browser"]["connectionGeneration"] == 0
        with open(port_file, "w") as fh:
            fh.write(real)
        connected = bp(home, "connect", env=env)
        assert connected.rc == 0, connected
        # BR-12: the generation advances on a restored connection, not on an attempt.
        assert connected.json["connectionGeneration"] == 1
        assert bp(home, "status", env=env).json["browser"]["connectionGeneration"] == 1
    finally:
        browser.stop()
        shutil.rmtree(browser.root, ignore_errors=True)


def test_cancel_before_dispatch_is_certain(home, connected, pages):
    observation = bp(home, "open", pages.page(COUNTER), env=connected).json
    ref = str(counter_ref(observation))
    # Keep the tab busy so that the click waits in the tab's queue, not yet dispatched.
    busy = start(connected, "eval", "new Promise(r => setTimeout(r, 30000))")
    wait_for_command(home, connected, "dispatched")
    click = start(connected, "click", ref)
    queued = wait_for_command(home, connected, "accepted")
    assert queued["method"] == "browser.click"
    cancelled = bp(home, "cancel", queued["id"], env=connected)
    assert cancelled.json["cancelled"] is True, cancelled
    out, _ = click.communicate(timeout=30)
    assert json.loads(out)["code"] == "command_cancelled", out
    busy.send_signal(signal.SIGINT)
    busy.communicate(timeout=30)
    assert count(home, connected) == 0
    assert bp(home, "command", queued["id"], env=connected).json["command"]["status"] == "cancelled"


def test_a_cancelled_evaluation_stops_waiting_and_frees_the_tab(home, connected, pages):
    bp(home, "open", pages.page(COUNTER), env=connected)
    endless = start(connected, "eval", "new Promise(() => {})")
    running = wait_for_command(home, connected, "dispatched")
    answer = bp(home, "cancel", running["id"], env=connected).json
    # After dispatch a cancel only asks: it never claims that nothing happened.
    assert answer["cancelled"] is False and "may have happened" in answer["note"], answer
    out, _ = endless.communicate(timeout=30)
    assert json.loads(out)["code"] == "unknown_outcome", out
    assert bp(home, "command", running["id"], env=connected).json["command"]["status"] == "unknown_outcome"
    assert count(home, connected) == 0  # the tab answers again


def test_sigint_cancels_a_queued_command_and_reports_a_dispatched_one(home, connected, pages):
    observation = bp(home, "open", pages.page(COUNTER), env=connected).json
    busy = start(connected, "eval", "new Promise(r => setTimeout(r, 30000))")
    running = wait_for_command(home, connected, "dispatched")
    click = start(connected, "click", str(counter_ref(observation)))
    wait_for_command(home, connected, "accepted")
    click.send_signal(signal.SIGINT)
    out, _ = click.communicate(timeout=30)
    assert click.returncode == 130
    assert json.loads(out)["code"] == "command_cancelled", out
    busy.send_signal(signal.SIGINT)
    out, _ = busy.communicate(timeout=30)
    assert busy.returncode == 130
    reply = json.loads(out)
    assert reply["code"] == "unknown_outcome" and reply["context"]["commandId"] == running["id"], reply
    assert count(home, connected) == 0


def test_browser_loss_mid_command_is_unknown_outcome_then_connect_recovers(home, pages):
    browser = helpers.Chromium(helpers.short_tmpdir("bpc-"))
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=browser.root)
        assert bp(home, "connect", env=env).rc == 0
        old = bp(home, "open", pages.page(COUNTER), env=env).json
        hanging = start(env, "eval", "new Promise(() => {})")
        running = wait_for_command(home, env, "dispatched")
        os.killpg(browser.proc.pid, signal.SIGKILL)  # the browser crashes mid-command
        out, _ = hanging.communicate(timeout=30)
        assert json.loads(out)["code"] == "unknown_outcome", out
        status = bp(home, "status", env=env).json
        assert [c["id"] for c in status["commands"]["uncertain"]] == [running["id"]]
        assert status["recovery"]["required"] is True
        lost = bp(home, "click", str(counter_ref(old)), env=env)
        assert lost.code == "browser_disconnected", lost
        browser.stop()
        os.unlink(os.path.join(browser.root, "DevToolsActivePort"))
        browser = helpers.Chromium(browser.root)
        assert bp(home, "connect", env=env).rc == 0
        stale = bp(home, "click", str(counter_ref(old)), env=env)
        assert stale.code in ("stale_ref", "target_not_owned"), stale
        fresh = bp(home, "open", pages.page(COUNTER), env=env)
        assert fresh.rc == 0, fresh
    finally:
        browser.stop()
        shutil.rmtree(browser.root, ignore_errors=True)


def test_sigint_during_a_wait_and_during_a_slow_navigation(home, connected, pages):
    bp(home, "open", pages.page(COUNTER), env=connected)
    waiting = start(connected, "wait", "--text", "never-appears")
    wait_for_command(home, connected, "accepted")
    waiting.send_signal(signal.SIGINT)
    out, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 130
    assert json.loads(out)["code"] == "command_cancelled", out
    slow = start(connected, "open", pages.url("/slow?wait=8&group=sigint"))
    running = wait_for_command(home, connected, "dispatched")  # the navigation was sent
    slow.send_signal(signal.SIGINT)
    out, _ = slow.communicate(timeout=30)
    assert slow.returncode == 130
    reply = json.loads(out)
    assert reply["code"] == "unknown_outcome" and reply["context"]["commandId"] == running["id"], reply
