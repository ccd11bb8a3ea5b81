"""Passive discovery: every candidate state, with real files and processes, and no sockets."""

import os

from tests import helpers
from tests.helpers import bp


def _by_root(result, root):
    return [c for c in result.json["browsers"] if c["userDataRoot"] == root][0]


def test_discovery_never_opens_a_socket(home, tmp_path):
    listener = helpers.listening_socket()
    root = str(tmp_path / "browser")
    helpers.write_endpoint(root, listener.getsockname()[1])
    proc = helpers.process_with_data_dir(root)
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root)
        for args in (["browsers"], ["status"], ["browsers", "--browser", "custom"]):
            result = bp(home, *args, env=env)
            assert result.rc == 0, result
        assert _by_root(bp(home, "browsers", env=env), root)["state"] == "disconnected"
        assert helpers.accepted_connections(listener) == 0
    finally:
        proc.kill()
        listener.close()


def test_discovery_through_a_running_broker_opens_no_socket(home, chromium, tmp_path):
    listener = helpers.listening_socket()
    root = str(tmp_path / "browser")
    helpers.write_endpoint(root, listener.getsockname()[1])
    proc = helpers.process_with_data_dir(root)
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=os.pathsep.join([chromium.root, root]))
        listed = bp(home, "browsers", env=env).json["browsers"]
        chosen = [c["id"] for c in listed if c["userDataRoot"] == chromium.root][0]
        assert bp(home, "connect", "--browser", chosen, env=env).rc == 0
        through_broker = bp(home, "browsers", env=env)
        assert _by_root(through_broker, root)["state"] == "disconnected"  # the broker saw it...
        status = bp(home, "status", env=env)
        assert status.json["service"]["state"] == "running"
        assert helpers.accepted_connections(listener) == 0  # ...and never connected to it
    finally:
        proc.kill()
        listener.close()


def test_every_passive_candidate_state_has_its_remediation(home, tmp_path):
    roots = {name: str(tmp_path / name) for name in ("off", "disabled", "stale", "enabled", "garbled")}
    for root in roots.values():
        os.makedirs(root)
    helpers.write_endpoint(roots["stale"], 9)  # endpoint left by a browser that is gone
    helpers.write_endpoint(roots["enabled"], 9)
    with open(os.path.join(roots["garbled"], "DevToolsActivePort"), "w") as fh:
        fh.write("not-a-port\n")
    procs = [helpers.process_with_data_dir(roots[n]) for n in ("disabled", "enabled", "garbled")]
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=os.pathsep.join(roots.values()))
        result = bp(home, "browsers", env=env)
        assert result.rc == 0, result
        expect = {
            "off": ("not_running", "not_running", "disabled", "start_browser"),
            "disabled": ("remote_debugging_disabled", "running", "disabled", "enable_remote_debugging"),
            "stale": ("disconnected", "not_running", "stale", "restart_remote_debugging"),
            "enabled": ("disconnected", "running", "enabled", "connect_browser"),
            "garbled": ("disconnected", "running", "stale", "restart_remote_debugging"),
        }
        for name, (state, process, remote, fix) in expect.items():
            c = _by_root(result, roots[name])
            assert (c["state"], c["processState"], c["remoteDebuggingState"], c["remediation"]["code"]) == \
                (state, process, remote, fix), (name, c)
            assert c["id"].startswith("browser:custom:")
            assert c["remediation"]["actionRequired"] is True
    finally:
        for p in procs:
            p.kill()


def test_browser_filter_matches_id_product_or_channel(home, tmp_path):
    root = str(tmp_path / "brave-data")
    os.makedirs(root)
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root)
    assert [c["product"] for c in bp(home, "browsers", "--browser", "BRAVE", env=env).json["browsers"]] == ["Brave"]
    assert bp(home, "browsers", "--browser", "no-such-browser", env=env).json["browsers"] == []


def test_relative_extra_data_dir_is_invalid_argument(home):
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS="relative/dir")
    result = bp(home, "browsers", env=env)
    assert result.rc == 1
    assert result.code == "invalid_argument"
    assert result.json["context"]["field"] == "BROWSER_PILOT_BROWSER_DATA_DIRS"


def test_connected_browser_is_ready_and_listed_first(home, chromium, connected):
    result = bp(home, "browsers", env=connected)
    first = result.json["browsers"][0]
    assert first["userDataRoot"] == chromium.root
    assert first["state"] == "ready"
    assert first["authorizationState"] == "authorized"
    assert "remediation" not in first


def test_pending_authorization_gives_browser_not_authorized_then_authorization_required(home, pending_browser):
    root, held = pending_browser.root, pending_browser.held
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=1000)
    result = bp(home, "connect", env=env, timeout=30)
    assert result.rc == 1
    assert result.code == "browser_not_authorized", result
    assert result.json["retryable"] is True
    assert result.json["remediation"]["code"] == "allow_remote_debugging"
    assert len(held) == 1  # exactly one handshake attempt, not retried
    c = _by_root(bp(home, "browsers", env=env), root)
    assert c["state"] == "authorization_required"
    assert c["remediation"]["code"] == "allow_remote_debugging"
    assert len(held) == 1  # listing is passive: still one connection


def test_concurrent_connects_share_one_pending_attempt(home, pending_browser):
    root, held = pending_browser.root, pending_browser.held
    # A handshake window long enough that the later callers surely arrive while it is pending,
    # however slowly their processes start; each of them still answers within its own --timeout.
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=12000)
    assert bp(home, "browsers", env=env).rc == 0
    # Start the broker first so the concurrent calls race on the attempt, not on startup.
    first = helpers.bp_popen(home, "connect", BROWSER_PILOT_BROWSER_DATA_DIRS=root,
                             BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=12000)
    helpers.wait_until(lambda: len(held) == 1, timeout=10)
    others = [helpers.bp_popen(home, "--client-key", f"agent-{i}", "connect", BROWSER_PILOT_BROWSER_DATA_DIRS=root,
                               BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=12000) for i in range(3)]
    outputs = [p.communicate(timeout=30) for p in [first] + others]
    for out, _ in outputs:
        assert '"code":"browser_not_authorized"' in out, outputs
    assert len(held) == 1


def test_short_timeout_while_authorization_is_pending_reports_pending_and_next_connect_joins(home, pending_browser):
    root, held = pending_browser.root, pending_browser.held
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root, BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=12000)
    # The first call also starts the broker, which on a loaded machine can take more than 1 s of
    # the timeout; both calls stay well inside the handshake's own bound.
    first = bp(home, "--timeout", "4000", "connect", env=env)
    assert first.code == "browser_not_authorized", first
    assert first.json["context"]["state"] == "authorization_pending"
    second = bp(home, "--timeout", "1000", "connect", env=env)
    assert second.json["context"]["state"] == "authorization_pending"
    assert len(held) == 1  # the second call joined the same attempt


def test_refused_endpoint_is_a_stale_port_not_an_authorization_problem(home, tmp_path):
    listener = helpers.listening_socket()
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there any more
    root = str(tmp_path / "refused")
    helpers.write_endpoint(root, port)
    proc = helpers.process_with_data_dir(root)
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root)
        result = bp(home, "connect", env=env)
        assert result.code == "browser_disconnected", result
        assert result.json["remediation"]["code"] == "restart_remote_debugging"
    finally:
        proc.kill()


def test_several_viable_browsers_without_filter_is_a_structured_choice(home, chromium, tmp_path):
    root = str(tmp_path / "second")
    helpers.write_endpoint(root, 9)
    proc = helpers.process_with_data_dir(root)
    try:
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=os.pathsep.join([chromium.root, root]))
        result = bp(home, "connect", env=env)
        assert result.rc == 1
        assert result.code == "browser_selection_required", result
        ids = {c["userDataRoot"] for c in result.json["context"]["candidates"]}
        assert ids == {chromium.root, root}
        assert result.json["remediation"]["code"] == "select_browser"
        chosen = [c["id"] for c in result.json["context"]["candidates"] if c["userDataRoot"] == chromium.root][0]
        ok = bp(home, "connect", "--browser", chosen, env=env)
        assert ok.rc == 0, ok
        assert ok.json["browserId"] == chosen
    finally:
        proc.kill()


def test_no_browser_at_all_is_browser_not_found(home, tmp_path):
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=str(tmp_path / "x"))
    result = bp(home, "connect", "--browser", "no-such-browser", env=env)
    assert result.rc == 1
    assert result.code == "browser_not_found"
    assert result.json["remediation"]["code"] == "select_supported_browser"


def test_not_running_browser_gives_disconnected_with_start_remediation(home, tmp_path):
    root = str(tmp_path / "off")
    os.makedirs(root)
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=root)
    result = bp(home, "connect", "--browser", "custom", env=env)
    assert result.code == "browser_disconnected", result
    assert result.json["remediation"]["code"] == "start_browser"
    assert result.json["context"]["browserState"] == "not_running"
