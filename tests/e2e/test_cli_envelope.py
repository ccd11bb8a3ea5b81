"""The public envelope: JSON when piped, text on request, stable codes, exit codes, usage errors."""

import json
import os
import signal
import subprocess
import time

import pytest

from tests import helpers
from tests.helpers import bp

COMMANDS = ["status", "browsers", "connect", "disconnect", "launch"]


@pytest.mark.parametrize("args,field,parser_code", [
    (["--timeout", "0", "status"], "timeout", "invalid_value"),
    (["--timeout", "300001", "status"], "timeout", "invalid_value"),
    (["--timeout", "12abc", "status"], "timeout", "invalid_value"),
    (["--client-key", "x", "status"], "clientKey", "invalid_value"),
    (["--client-key", "bad key!", "status"], "clientKey", "invalid_value"),
    (["--request-id", "-starts-with-dash", "status"], "requestId", "invalid_value"),
    (["no-such-command"], "command", "unknown_command"),
    (["browsers", "--bogus"], "bogus", "unknown_option"),
    (["browsers", "--browser"], "browser", "missing_option_value"),
    (["status", "extra-arg"], "arguments", "unexpected_argument"),
])
def test_usage_errors_are_invalid_argument_with_field(home, args, field, parser_code):
    result = bp(home, *args)
    assert result.rc == 1, result
    assert result.json["ok"] is False
    assert result.code == "invalid_argument"
    assert result.json["retryable"] is False
    assert result.json["context"]["field"] == field
    assert result.json["context"]["parserCode"] == parser_code
    assert result.stderr == ""  # click's own text is not printed in JSON mode


def test_client_key_env_is_validated_like_the_flag(home):
    result = bp(home, "status", BROWSER_PILOT_CLIENT_KEY="!")
    assert result.code == "invalid_argument"
    assert result.json["context"]["field"] == "clientKey"


def test_request_id_env_is_validated_like_the_flag(home):
    result = bp(home, "status", BROWSER_PILOT_REQUEST_ID="has space")
    assert result.json["context"]["field"] == "requestId"


def test_relative_home_is_invalid_argument(tmp_path):
    env = helpers.bp_env("relative/home")
    result = bp(None, "status", env=env)
    assert result.rc == 1
    assert result.code == "invalid_argument"
    assert result.json["context"]["field"] == "home"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(home, command):
    result = bp(home, command, "--help")
    assert result.rc == 0
    assert "Example:" in result.stdout


def test_help_lists_commands_and_no_private_surface(home):
    result = bp(home, "--help")
    assert result.rc == 0
    for command in COMMANDS:
        assert command in result.stdout
    for option in ("--client-key", "--request-id", "--timeout", "--json", "--human"):
        assert option in result.stdout
    for private in ("bridge", "tool", "artifact", "mcp", "serve"):
        assert bp(home, private).code == "invalid_argument"


def test_version_prints_the_package_version(home):
    import bp as package

    result = bp(home, "--version")
    assert result.rc == 0
    assert result.stdout.strip() == package.__version__


def test_json_when_piped_and_human_on_request(home):
    piped = bp(home, "status")
    assert piped.json["ok"] is True
    human = bp(home, "--human", "status")
    assert human.json is None
    assert human.stdout.startswith("service: stopped")


def test_human_failure_goes_to_stderr_with_code(home):
    result = bp(home, "--human", "--timeout", "0", "status")
    assert result.rc == 1
    assert result.stdout == ""
    assert "✗" in result.stderr and "[invalid_argument]" in result.stderr


def test_json_forces_json_on_a_tty(home):
    import pty

    for flag, expect_json in (("--json", True), (None, False)):
        main, secondary = pty.openpty()
        args = [helpers.BP] + ([flag] if flag else []) + ["status"]
        proc = subprocess.Popen(args, env=helpers.bp_env(home), stdout=secondary, stderr=secondary,
                                stdin=subprocess.DEVNULL)
        proc.wait(30)
        os.close(secondary)
        out = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(main)
        text = out.decode()
        assert text.lstrip().startswith("{") == expect_json, text


def test_browser_commands_without_broker_do_not_start_one(home):
    assert bp(home, "disconnect").json == {"ok": True, "released": False, "brokerStopped": False,
                                          "reason": "not_running"}
    assert helpers.brokers_of(home) == []


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_connect_exits_with_signal_code(home, pending_browser, sig, code):
    root = pending_browser.root
    env = dict(BROWSER_PILOT_BROWSER_DATA_DIRS=root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=20000)
    assert bp(home, "status", **env).rc == 0
    running = helpers.bp_popen(home, "connect", **env)
    # Wait until the request is with the broker (the handshake is pending).
    assert helpers.wait_until(lambda: helpers.brokers_of(home) and
                              any("janitor" in " ".join(c.cmdline()) for c in helpers.brokers_of(home)[0].children()),
                              timeout=15)
    time.sleep(0.2)
    running.send_signal(sig)
    out, _ = running.communicate(timeout=10)
    assert running.returncode == code, out
    reply = json.loads(out)
    assert reply["code"] == "unknown_outcome"  # connect is a mutation: it may still complete
    assert reply["context"]["commandId"].startswith("cmd-")


def test_mutating_call_that_outlives_the_cli_timeout_is_unknown_outcome(home, pending_browser):
    root = pending_browser.root
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=20000)
    # Start the service (and the pending attempt) first, so the short timeout below is spent
    # on the attempt, not on starting the service.
    assert bp(home, "--timeout", "3000", "connect", env=env).code == "browser_not_authorized"
    result = bp(home, "--timeout", "500", "connect", env=env)
    # The broker answers at its deadline with the pending state; never a plain failure.
    assert result.code in ("browser_not_authorized", "unknown_outcome"), result
    if result.code == "unknown_outcome":
        assert result.json["context"]["commandId"]
    else:
        assert result.json["context"]["state"] == "authorization_pending"
