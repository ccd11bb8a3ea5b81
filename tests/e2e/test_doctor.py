"""`bp doctor`: a passive diagnosis with the same facts in JSON and on a terminal."""

import json
import os

from tests import helpers
from tests.helpers import bp

FIELDS = ("installation", "home", "locator", "service", "processes", "browsers", "recovery", "chromium", "logs",
          "problems", "healthy")


def test_doctor_without_a_service_reports_everything_and_starts_nothing(home, env_for):
    result = bp(home, "doctor", env=env_for(home))
    assert result.rc == 0, result
    r = result.json
    assert r["ok"] is True
    for field in FIELDS:
        assert field in r, field
    assert r["home"]["path"] == home and r["home"]["state"] == "private"
    assert r["service"] == {"state": "stopped"} and r["processes"] == []
    assert r["locator"]["state"] == "absent"
    assert r["chromium"]["executable"] == helpers.chromium_path()
    assert any(c["userDataRoot"] == env_for(home)["BROWSER_PILOT_BROWSER_DATA_DIRS"] for c in r["browsers"])
    assert r["recovery"]["action"] == "bp connect"
    assert r["logs"]["dir"] == os.path.join(home, "logs")
    assert r["installation"]["version"] and r["installation"]["identity"].startswith("installation:")
    assert helpers.brokers_of(home) == []
    assert sorted(os.listdir(home)) == []  # nothing was created or claimed


def test_doctor_never_creates_a_missing_home(tmp_path):
    missing = str(tmp_path / "no-home-yet")
    result = bp(missing, "doctor")
    assert result.rc == 0, result
    assert result.json["home"]["state"] == "absent"
    assert result.json["locator"]["state"] == "absent"
    assert not os.path.exists(missing)


def test_doctor_reports_the_running_service_and_its_process_tree(home, connected):
    locator = helpers.locator(home)
    result = bp(home, "doctor", env=connected)
    r = result.json
    assert result.rc == 0 and r["ok"] is True, result
    assert r["problems"] == [], r
    assert r["service"]["state"] == "running"
    assert r["service"]["pid"] == locator["pid"]
    assert r["locator"]["state"] == "current" and r["locator"]["pid"] == locator["pid"]
    assert r["locator"]["sameInstallation"] is True
    roles = {p["role"]: p for p in r["processes"]}
    assert roles["broker"]["pid"] == locator["pid"]
    assert roles["janitor"]["parentPid"] == locator["pid"]
    assert any(c["state"] == "ready" for c in r["browsers"])  # the service's view: it is connected
    assert r["recovery"] == {"required": False}
    assert any(f["name"] == "broker.log" and f["mode"] == "0600" for f in r["logs"]["files"])
    assert r["healthy"] is True


def test_doctor_on_a_home_open_to_others_reports_unsafe_state_without_fixing_it(home):
    os.chmod(home, 0o777)
    result = bp(home, "doctor")
    r = result.json
    assert result.rc == 0
    assert r["home"]["state"] == "unsafe" and r["healthy"] is False
    problem = next(p for p in r["problems"] if p["area"] == "home")
    assert problem["code"] == "unsafe_state" and problem["remediation"]["code"] == "fix_private_state"
    assert os.stat(home).st_mode & 0o777 == 0o777  # passive: reported, never chmod-ed


def test_doctor_reports_a_stale_locator_of_a_dead_service(home):
    dead = helpers.process_with_data_dir("/nonexistent")
    dead.kill()
    dead.wait()
    path = os.path.join(home, "broker-locator.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"schemaVersion": 1, "pid": dead.pid, "startTime": 1.0, "serviceVersion": "0.5.0",
                   "installation": {"identity": "installation:other"}}, fh)
    r = bp(home, "doctor").json
    assert r["service"]["state"] == "stopped"
    assert r["locator"]["state"] == "stale" and r["locator"]["pid"] == dead.pid
    assert r["locator"]["sameInstallation"] is False
    assert any(p["area"] == "locator" and "gone" in p["message"] for p in r["problems"])
    assert os.path.exists(path)  # reclaiming is 'bp connect''s job, with proof


def test_doctor_reports_an_open_mode_locator_as_unsafe(home):
    path = os.path.join(home, "broker-locator.json")
    with open(path, "w") as fh:
        fh.write("{}")
    os.chmod(path, 0o644)
    r = bp(home, "doctor").json
    assert r["locator"]["state"] == "unsafe"
    assert any(p.get("code") == "unsafe_state" and p["path"] == path for p in r["problems"])


def test_doctor_reads_on_a_terminal_with_the_same_facts(home, env_for):
    result = bp(home, "--human", "doctor", env=env_for(home))
    assert result.rc == 0
    assert f"home: {home} [private" in result.stdout
    assert "service: stopped" in result.stdout
    assert f"chromium executable: {helpers.chromium_path()}" in result.stdout
    assert "no problems found" in result.stdout
