"""Unit tests of the shared core: files, claims, identities, schemas, redaction, ceilings."""

import json
import logging
import os
import subprocess

import pytest

from bp import errors, identity, janitor_pipe, locator, logs, paths, protocol, schemas
from bp.errors import BPError
from broker.agents import Agents
from janitor.ownership import Ownership


# --- private files ---------------------------------------------------------------------------

def test_read_private_file_absent_is_none(tmp_path):
    assert paths.read_private_file(str(tmp_path / "missing")) is None


@pytest.mark.parametrize("setup,reason", [
    (lambda p: (p.write_text("{}"), os.chmod(p, 0o644)), "owner-only"),
    (lambda p: p.mkdir(), "not a regular file"),
    (lambda p: (p.write_text("x" * 20000), os.chmod(p, 0o600)), "larger"),
])
def test_read_private_file_refuses_unsafe_files(tmp_path, setup, reason):
    path = tmp_path / "meta.json"
    setup(path)
    with pytest.raises(BPError) as info:
        paths.read_private_file(str(path))
    assert info.value.code == "unsafe_state"
    assert reason in info.value.message


def test_read_private_file_refuses_symlink(tmp_path):
    real = tmp_path / "real"
    real.write_text("{}")
    os.chmod(real, 0o600)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(BPError) as info:
        paths.read_private_file(str(tmp_path / "link"))
    assert "symbolic link" in info.value.message


def test_create_exclusive_publishes_complete_claims_once(tmp_path):
    path = str(tmp_path / "claim")
    assert paths.create_private_file_exclusive(path, b"first") is True
    assert paths.create_private_file_exclusive(path, b"second") is False
    assert open(path, "rb").read() == b"first"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")] == []


def test_unlink_if_same_keeps_a_replaced_file(tmp_path):
    path = str(tmp_path / "lock")
    paths.replace_private_file(path, b"old")
    judged = paths.file_identity(path)
    os.unlink(path)
    paths.replace_private_file(path, b"new")
    assert paths.unlink_if_same(path, judged) is False
    assert open(path, "rb").read() == b"new"


def test_home_must_be_absolute(monkeypatch):
    monkeypatch.setenv("BROWSER_PILOT_HOME", "relative")
    with pytest.raises(BPError) as info:
        paths.home()
    assert info.value.code == "invalid_argument"
    assert info.value.context["field"] == "home"


def test_runtime_dir_falls_back_for_long_homes():
    short = "/tmp/h"
    assert paths.runtime_dir(short) == short
    long_home = "/tmp/" + "a" * 120
    fallback = paths.runtime_dir(long_home)
    assert fallback != long_home and len(fallback) < 60
    assert paths.runtime_dir(long_home) == fallback  # derived, stable


# --- startup lock ------------------------------------------------------------------------------

def test_startup_lock_is_exclusive_and_released(tmp_path):
    home = str(tmp_path)
    with locator.StartupLock(home, wait_s=1):
        with pytest.raises(BPError) as info:
            with locator.StartupLock(home, wait_s=0.1):
                pass
        assert info.value.code == "browser_disconnected"
    assert not os.path.exists(tmp_path / "startup.lock")


def test_startup_lock_of_a_dead_owner_is_reclaimed(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    path = tmp_path / "startup.lock"
    path.write_text(json.dumps({"pid": dead.pid, "startTime": 12345.0, "token": "t"}))
    os.chmod(path, 0o600)
    with locator.StartupLock(str(tmp_path), wait_s=1) as lock:
        assert json.loads(path.read_text())["token"] == lock.token


def test_startup_lock_of_a_live_owner_is_never_taken(tmp_path):
    path = tmp_path / "startup.lock"
    me = identity.own_identity()
    path.write_text(json.dumps({"pid": me["pid"], "startTime": me["startTime"], "token": "live"}))
    os.chmod(path, 0o600)
    with pytest.raises(BPError):
        with locator.StartupLock(str(tmp_path), wait_s=0.2):
            pass
    assert json.loads(path.read_text())["token"] == "live"


def test_pid_reuse_is_not_mistaken_for_the_recorded_process():
    me = identity.own_identity()
    assert identity.is_alive(me["pid"], me["startTime"])
    assert not identity.is_alive(me["pid"], me["startTime"] - 100)  # same pid, other start time


# --- protocol and schemas --------------------------------------------------------------------

def test_command_id_is_deterministic_only_with_a_request_id():
    a = protocol.command_id("agent-one", "connect", {"browser": "x"}, "req-1")
    assert a == protocol.command_id("agent-one", "connect", {"browser": "x"}, "req-1")
    assert a != protocol.command_id("agent-one", "connect", {"browser": "y"}, "req-1")
    assert a != protocol.command_id("agent-two", "connect", {"browser": "x"}, "req-1")
    assert protocol.command_id("agent-one", "connect", {}) != protocol.command_id("agent-one", "connect", {})


def test_request_schema_accepts_what_the_cli_sends():
    request, _ = protocol.encode_request("connect", "agent-one", {"browser": "x"}, timeout_ms=1000, request_id="r1")
    loaded = schemas.REQUEST.load(request)
    assert loaded["op"] == "connect"


def test_reply_schema_requires_a_known_code():
    assert schemas.REPLY.validate({"ok": True, "anything": 1}) == {}
    assert schemas.REPLY.validate({"ok": False, "code": "nope", "error": "x", "retryable": False})
    assert schemas.REPLY.validate({"ok": False, "code": "internal_error"})
    assert schemas.REPLY.validate(errors.failure("target_busy", "busy")) == {}


def test_error_codes_include_the_contract_and_never_unknown():
    for code in ("protocol_incompatible", "browser_not_authorized", "target_busy", "stale_ref", "unknown_outcome",
                 "wait_timeout", "result_too_large", "invalid_argument", "internal_error"):
        assert code in errors.ERROR_CODES
    assert len(errors.ERROR_CODES) == len(set(errors.ERROR_CODES))
    with pytest.raises(ValueError):
        BPError("made_up", "x")


def test_peek_reads_only_the_head_of_cdp_frames():
    assert janitor_pipe.peek_id(b'{"id":42,"result":{}}') == 42
    assert janitor_pipe.peek_id(b'{"method":"Target.targetCreated","params":{"id":3}}') is None
    assert janitor_pipe.peek_method(b'{"method":"Target.targetCreated","params":{}}') == "Target.targetCreated"
    assert janitor_pipe.peek_id(b"garbage") is None


# --- ownership and agents --------------------------------------------------------------------

def test_ownership_adopts_only_popups_of_owned_openers_and_closes_deepest_first():
    owned = Ownership()
    owned.add_created("tab")
    assert owned.adopt_popup("popup", "tab")
    assert owned.adopt_popup("grandchild", "popup")
    assert not owned.adopt_popup("user-popup", "user-tab")  # opener chain not owned
    assert owned.close_order() == [["grandchild"], ["popup"], ["tab"]]
    owned.forget("popup")
    assert "popup" not in owned


def test_ownership_has_a_ceiling(monkeypatch):
    import dataclasses

    from bp import settings

    monkeypatch.setattr(settings, "_current", dataclasses.replace(settings.current(), janitor_max_owned=3))
    owned = Ownership()
    assert all(owned.add_created(f"t{i}") for i in range(3))
    assert not owned.add_created("t3")
    assert not owned.adopt_popup("p", "t0")


def test_agents_ceiling_and_lease_expiry():
    now = [1000.0]
    agents = Agents(clock=lambda: now[0], limit=3)
    for key in ("a-1", "a-2", "a-3"):
        agents.touch(key)
    with pytest.raises(BPError) as info:
        agents.touch("a-4")
    assert info.value.code == "result_too_large"
    assert info.value.retryable is True
    agents.touch("a-1")  # an existing key is renewed, not refused
    now[0] += 301
    assert {a.key for a in agents.expired()} == {"a-1", "a-2", "a-3"}
    agents.touch("a-4")
    assert agents.active_keys() == ["a-4"]


# --- logging ---------------------------------------------------------------------------------

def test_redaction_filter_keeps_secrets_out_of_the_log(tmp_path):
    log_file = logs.setup_broker_logging(str(tmp_path))
    try:
        log = logging.getLogger("broker.test")
        log.info("typed %s", {"text": "hunter2-typed", "password": "s3cret-pw", "ref": 4})
        log.info("header Authorization: Bearer tok-123456 and cookie=sid-98765")
        log.info("eval %s", {"expression": "document.cookie", "value": "eval-result-xyz"})
    finally:
        logging.shutdown()
        logging.getLogger().handlers[:] = []
    text = open(log_file).read()
    for secret in ("hunter2-typed", "s3cret-pw", "tok-123456", "sid-98765", "document.cookie", "eval-result-xyz"):
        assert secret not in text
    assert "[redacted]" in text and "'ref': 4" in text
    assert oct(os.stat(log_file).st_mode & 0o777) == "0o600"


# --- urls and per-agent ceilings -------------------------------------------------------------

@pytest.mark.parametrize("given,expected", [
    ("example.com", "https://example.com"),
    ("localhost:8080/x", "https://localhost:8080/x"),
    ("http://127.0.0.1:5000/a?b=c", "http://127.0.0.1:5000/a?b=c"),
    ("about:blank", "about:blank"),
    ("  https://example.com/  ", "https://example.com/"),
])
def test_urls_are_normalized(given, expected):
    from bp import urls

    assert urls.normalize(given) == expected


@pytest.mark.parametrize("bad", ["", "javascript:alert(1)", "JavaScript:void(0)", "chrome://settings",
                                 "vbscript:x", "http://", "https://a b/", "http://h:70000/", "x" * 9000])
def test_bad_urls_are_invalid_argument(bad):
    from bp import urls

    with pytest.raises(BPError) as info:
        urls.normalize(bad)
    assert info.value.code == "invalid_argument"
    assert info.value.context["field"] == "url"


def test_targets_per_agent_ceiling_forgets_unused_ids_then_refuses(monkeypatch):
    import broker.agents as module

    monkeypatch.setattr(module, "MAX_TARGETS_PER_AGENT", 3)
    agent = module.Agent("agent-x", 0.0, 1)
    ids = [agent.opaque_id(f"raw-{i}") for i in range(3)]
    agent.opaque_id("raw-3")  # over the ceiling: the oldest unused mapping is forgotten
    assert agent.opaque_of("raw-0") is None and agent.raw_by_opaque.get(ids[0]) is None
    for raw in ("raw-1", "raw-2", "raw-3"):
        agent.tab(raw).controlled = True  # every mapping in use: nothing can be forgotten
    with pytest.raises(BPError) as info:
        agent.opaque_id("raw-4")
    assert info.value.code == "result_too_large"


def test_opaque_ids_differ_per_agent_and_reset_with_the_generation():
    from broker.agents import Agent

    a, b = Agent("agent-a", 0.0, 1), Agent("agent-b", 0.0, 1)
    assert a.opaque_id("raw") != b.opaque_id("raw")
    first = a.opaque_id("raw")
    assert a.opaque_id("raw") == first
    a.enter_generation(2)
    assert a.raw_by_opaque.get(first) is None
