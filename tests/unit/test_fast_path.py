"""The click-free fast path (cli/fast.py) serves a subset of what the click commands accept and
sends exactly the request they would send: checked argv by argv against the real click
application, with the broker call replaced by a recorder (nothing here is about the wire)."""

import pytest
from hypothesis import given, settings, strategies as st

from bp import protocol
from cli import client, fast, signals


class Sent(Exception):
    pass


def click_request(argv, monkeypatch):
    """What the click application would send for argv: (settings, op, args) or None when
    click refuses the argv (a usage error)."""
    import click

    from cli.main import cli

    recorded = {}

    def record(settings, op, args, *, installation=None):
        recorded.update(fields={"client_key": settings.client_key, "request_id": settings.request_id,
                                "timeout_ms": settings.timeout_ms}, op=op, args=args)
        raise Sent()

    monkeypatch.setattr(client, "call", record)
    monkeypatch.setattr(client, "broker_running", lambda home_dir: True)
    monkeypatch.setattr(signals, "install", lambda: None)
    try:
        cli.main(args=list(argv), prog_name="bp", standalone_mode=False)
    except Sent:
        return recorded["fields"], recorded["op"], recorded["args"]
    except click.UsageError:
        return None
    except click.exceptions.Exit:
        return None
    raise AssertionError(f"click neither sent nor refused {argv!r}")


def check_same(argv, monkeypatch, environ=None):
    environ = environ or {}
    for name in ("BROWSER_PILOT_CLIENT_KEY", "BROWSER_PILOT_REQUEST_ID"):
        if name in environ:
            monkeypatch.setenv(name, environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    planned = fast.plan(list(argv), environ)
    if planned is None:
        return None
    assert click_request(argv, monkeypatch) == planned, argv
    return planned


@pytest.mark.parametrize("argv", [
    ["snapshot"], ["snapshot", "--limit", "100"], ["snapshot", "-l", "7", "--diff"], ["snapshot", "--limit=3"],
    ["click", "3"], ["click", "--limit", "5", "12"], ["click", "3", "--double"], ["click", "3", "--right"],
    ["hover", "9"], ["type", "4", "Ada Lovelace", "--clear", "-s"], ["type", "1", ""], ["press", "Shift+Tab"],
    ["tabs"], ["status"], ["--json", "--timeout", "5000", "click", "2"],
    ["--client-key", "agent-7", "--request-id", "r1", "type", "2", "x"], ["--client-key=agent-x", "snapshot"],
])
def test_common_steps_take_the_fast_path_and_send_what_click_sends(argv, monkeypatch):
    assert check_same(argv, monkeypatch) is not None


@pytest.mark.parametrize("argv", [
    ["--human", "snapshot"], ["--help"], ["snapshot", "--help"], ["click", "--xy", "1,2"], ["type", "3", "-"],
    ["click", "١"], ["snapshot", "--limit", "１"], ["snapshot", "--limit", "0"], ["click", "3", "--double", "--right"],
    ["click"], ["snapshot", "-l5"], ["open", "https://example.com"], ["press", "Hyper+x"], ["--timeout", "0", "tabs"],
    ["snapshot", "--", "x"], ["type", "3", "-x"], ["click", "3", "--limit", "5", "--limit", "6"],
])
def test_everything_else_goes_to_click(argv, monkeypatch):
    assert fast.plan(argv, {}) is None


def test_the_environment_supplies_the_key_and_request_id_as_in_click(monkeypatch):
    planned = check_same(["snapshot"], monkeypatch,
                         {"BROWSER_PILOT_CLIENT_KEY": "agent-env", "BROWSER_PILOT_REQUEST_ID": "step-9"})
    assert planned[0]["client_key"] == "agent-env" and planned[0]["request_id"] == "step-9"
    assert fast.plan(["snapshot"], {"BROWSER_PILOT_CLIENT_KEY": "x"}) is None  # invalid: click reports it


TOKENS = ["snapshot", "click", "hover", "type", "press", "tabs", "status", "--limit", "-l", "--diff", "--double",
          "--right", "--clear", "-c", "--submit", "-s", "--json", "--timeout", "--client-key", "--request-id",
          "1", "3", "50", "10000", "10001", "0", "-1", "007", "+5", "٣", "abc", "Enter", "Control+a", "x",
          "--limit=2", "--timeout=100", "agent-1", "-", "--", "", " 5", "300000", "300001"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=6))
def test_any_argv_the_fast_path_takes_is_one_click_takes_the_same_way(monkeypatch_argv):
    argv = monkeypatch_argv
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same(argv, monkeypatch)


def test_the_fast_path_does_not_import_click_or_zmq():
    import subprocess
    import sys

    code = ("import sys; from cli import fast; fast.plan(['click', '3'], {});"
            "from cli import client; print(sorted(m for m in ('click', 'zmq', 'marshmallow', 'psutil') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert protocol.OP_CLICK == "click"


def test_shell_completion_reaches_click_untouched(monkeypatch):
    import sys

    import cli.main

    called = []
    monkeypatch.setenv("_BP_COMPLETE", "bash_complete")
    monkeypatch.setattr(sys, "argv", ["bp", "snapshot"])  # a form the fast path would serve
    monkeypatch.setattr(cli.main, "main", lambda: called.append(True))
    monkeypatch.setattr(fast, "run", lambda *planned: called.append("fast"))
    fast.main()
    assert called == [True]
