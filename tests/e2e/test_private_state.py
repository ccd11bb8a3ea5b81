"""Private files: refusals with a stable code, never silently ignored; the short socket fallback."""

import json
import os
import stat

import pytest

from tests import helpers
from tests.helpers import bp


def _assert_unsafe(result, path_fragment):
    assert result.rc == 1, result
    assert result.code == "unsafe_state", result
    assert path_fragment in result.json["context"]["path"]
    assert result.json["remediation"]["code"] == "fix_private_state"


def test_symlinked_home_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    _assert_unsafe(bp(str(link), "connect"), "link")


def test_group_writable_home_is_refused(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o770)
    _assert_unsafe(bp(str(home), "connect"), "home")
    _assert_unsafe(bp(str(home), "launch"), "home")


def test_readable_home_of_ours_is_tightened_to_owner_only(tmp_path, env_for):
    home = tmp_path / "h"
    home.mkdir()
    os.chmod(home, 0o755)
    try:
        assert bp(str(home), "connect", env=env_for(str(home))).rc == 0
        assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    finally:
        helpers.stop_brokers(str(home))


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a foreign-owned directory needs root")
def test_foreign_owned_home_is_refused(tmp_path):
    home = tmp_path / "foreign"
    home.mkdir(mode=0o700)
    os.chown(home, 65534, 65534)
    _assert_unsafe(bp(str(home), "connect"), "foreign")


def test_symlinked_locator_is_refused_not_treated_as_absent(home, env_for, tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    os.chmod(home, 0o700)
    os.symlink(target, os.path.join(home, "broker-locator.json"))
    result = bp(home, "connect", env=env_for(home))
    _assert_unsafe(result, "broker-locator.json")
    assert target.read_text() == "{}"  # never written through


def test_open_mode_locator_is_refused(home, env_for):
    path = os.path.join(home, "broker-locator.json")
    with open(path, "w") as fh:
        json.dump({"pid": 1}, fh)
    os.chmod(path, 0o644)
    _assert_unsafe(bp(home, "connect", env=env_for(home)), "broker-locator.json")


def test_files_and_sockets_are_owner_only(home, connected):
    for name in os.listdir(home):
        st = os.lstat(os.path.join(home, name))
        if stat.S_ISDIR(st.st_mode):
            assert stat.S_IMODE(st.st_mode) == 0o700, name
        else:
            assert stat.S_IMODE(st.st_mode) & 0o077 == 0, name
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    for name in os.listdir(os.path.join(home, "logs")):
        assert stat.S_IMODE(os.stat(os.path.join(home, "logs", name)).st_mode) == 0o600


def test_long_home_uses_a_short_owner_only_runtime_dir(tmp_path, env_for):
    home = tmp_path / ("x" * 60) / ("y" * 60)
    try:
        result = bp(str(home), "connect", env=env_for(str(home)))
        assert result.rc == 0, result
        assert not os.path.exists(home / "broker.sock")
        endpoint = helpers.locator(str(home))["endpoint"]
        run_dir = os.path.dirname(endpoint)
        assert run_dir.startswith("/tmp/browser-pilot-")
        assert len(endpoint) <= 100
        assert stat.S_IMODE(os.stat(run_dir).st_mode) == 0o700
        assert bp(str(home), "status", env=env_for(str(home))).json["browser"]["state"] == "ready"
    finally:
        helpers.stop_brokers(str(home))
