"""The operation table (bp/ops.py) against everything derived from it: broker handlers, argument
schemas, command records, the ops the CLI sends and how long the CLI waits for each."""

import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from bp import ops, protocol, schemas
from broker import registry, server
from cli import client

CLI_DIR = os.path.join(os.path.dirname(client.__file__))


def _cli_sent_ops():
    """Every protocol.OP_* the CLI's sources name: the operations it can send."""
    names = set()
    for folder, _, files in os.walk(CLI_DIR):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    names.update(re.findall(r"\bprotocol\.(OP_[A-Z_]+)\b", fh.read()))
    return {getattr(protocol, name) for name in names}


def test_ops_handlers_schemas_and_cli_senders_are_one_set():
    declared = set(ops.OPS)
    assert len(declared) == len(ops.OPERATIONS) == 59
    assert set(registry.HANDLERS) == declared
    assert set(schemas.ARGS_SCHEMAS) == declared
    assert _cli_sent_ops() == declared
    assert set(protocol.OPERATIONS) == declared and protocol.MUTATING == ops.MUTATING
    # The OP_* names bp.protocol re-exports are exactly the table's.
    assert {getattr(protocol, n) for n in ops.__all__} == declared and len(ops.__all__) == len(declared)


def test_every_mutating_op_is_recorded_and_front_loop_ops_are_quick_and_unrecorded():
    for op in ops.OPS.values():
        if op.mutating:
            assert op.recorded, op
        if op.runs == ops.FRONT:
            assert not op.recorded and not op.long, op
            assert registry.HANDLERS[op.name].inline
        else:
            assert not registry.HANDLERS[op.name].inline
    assert server.UNRECORDED == set(ops.OPS) - ops.RECORDED
    # The three that used to disagree: they mutate, so they are recorded now.
    assert {"connect", "disconnect", "profiles"} <= ops.RECORDED
    assert not {"connect", "disconnect", "profiles"} & server.UNRECORDED


def test_capabilities_are_the_contracts_twelve():
    assert len(ops.CAPABILITIES) == 12
    assert {op.capability for op in ops.OPS.values()} <= set(ops.CAPABILITIES)
    assert ops.OPS["eval"].capability == "developer.eval"
    assert ops.OPS["cookies.list"].capability == "cookies.read"


def test_an_op_without_a_schema_or_a_handler_cannot_exist(monkeypatch):
    with pytest.raises(KeyError):
        registry.handler("no.such.op")  # a handler for an undeclared op has no schema either
    monkeypatch.setitem(ops.OPS, "bogus", ops.Op("bogus", "NoSuchArgs", capability="observation.read"))
    with pytest.raises(RuntimeError, match="NoSuchArgs"):
        schemas._args_schemas()
    with pytest.raises(RuntimeError, match="bogus"):
        registry.check_complete()


def test_a_second_handler_for_an_op_is_refused():
    with pytest.raises(RuntimeError, match="two handlers"):
        registry.handler(protocol.OP_STATUS)(lambda broker, request: {})


def test_tab_options_are_refused_on_an_op_that_does_not_run_on_a_tab(monkeypatch):
    monkeypatch.delitem(registry.HANDLERS, protocol.OP_STATUS)
    with pytest.raises(RuntimeError, match="does not run on a tab"):
        registry.handler(protocol.OP_STATUS, observe_after=True)(lambda broker, request: {})


@pytest.mark.parametrize("op", sorted(ops.OPS))
def test_the_cli_waits_the_ops_way(monkeypatch, op):
    """A long op pings (bounded by HEALTH_WAIT_MS) and then waits its deadline plus the margin;
    a quick op gets HEALTH_WAIT_MS. The exchange is faked: it records, nothing answers."""
    waits = []

    def exchange(home_dir, payload, wait_ms, interruptible=True, ticker=None, raw=False):
        waits.append((b'"op":"ping"' in payload, wait_ms))
        return {"ok": True}

    monkeypatch.setattr(client, "exchange", exchange)
    monkeypatch.setattr(client, "broker_running", lambda home_dir: True)
    settings = SimpleNamespace(client_key="test-client", request_id=None, timeout_ms=60_000)
    client.call(settings, op, {})
    if ops.OPS[op].long:
        assert waits == [(True, protocol.HEALTH_WAIT_MS), (op == "ping", 60_000 + protocol.REPLY_MARGIN_MS)]
    else:
        assert waits == [(op == "ping", protocol.HEALTH_WAIT_MS)]


def test_a_quick_mutating_op_that_times_out_is_unknown_outcome_and_a_read_is_unresponsive(monkeypatch):
    monkeypatch.setattr(client, "exchange", lambda *a, **k: None)
    monkeypatch.setattr(client, "broker_running", lambda home_dir: True)
    monkeypatch.setitem(ops.OPS, "status", ops.Op("status", "EmptyArgs", capability="browser.discovery",
                                                  mutating=True, long=False))
    settings = SimpleNamespace(client_key="test-client", request_id=None, timeout_ms=60_000)
    with pytest.raises(Exception) as mutated:
        client.call(settings, "status", {})
    assert mutated.value.code == "unknown_outcome"
    with pytest.raises(Exception) as read:
        client.call(settings, "commands", {})
    assert read.value.code == "browser_disconnected"


def test_dropdown_waits_as_a_long_call():
    # A busy tab queues it behind another command: a 2 s wait would call the broker dead.
    assert ops.OPS["dropdown"].long and ops.OPS["dropdown"].runs == ops.TAB


def test_no_cli_call_site_overrides_the_ops_wait():
    for folder, _, files in os.walk(CLI_DIR):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    assert "long_running=" not in fh.read(), name


def test_the_operation_table_is_on_the_cli_hot_path_without_marshmallow():
    code = "import sys, bp.ops, bp.protocol, cli.client, cli.main; print('marshmallow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(CLI_DIR)))
    assert out.stdout.strip() == "False", out
