"""The product-bundled path, black-box: the release's wheel installed into fresh virtual
environments outside the source tree, their `bin` first on PATH, stable Agent environment
(key, absolute output directory), and only the `bp` executable talking to real Chromium.
Nothing here imports the package."""

import os
import subprocess

import pytest

from tests import distribution, helpers

PAGE = """<!doctype html><title>Bundle smoke</title>
<button id="count" type="button" onclick="this.textContent = 'Clicked ' + (++window.n) + ' time'">Clicked 0 times</button>
<script>window.n = 0;</script>
"""


@pytest.fixture(scope="module")
def installations(tmp_path_factory):
    return distribution.bundled_installations(tmp_path_factory, count=2)


@pytest.fixture(scope="module")
def release_index(tmp_path_factory):
    return distribution.release_index(distribution.release_dir(tmp_path_factory))


class Installed:
    """One bundled installation as a product runs it: `bp` resolved through PATH."""

    def __init__(self, venv, home, chromium, key, workdir):
        self.venv = venv
        self.workdir = str(workdir)
        self.env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=chromium.root, BROWSER_PILOT_CLIENT_KEY=key,
                                  BROWSER_PILOT_OUTPUT_DIR=os.path.join(self.workdir, "out"))
        for private in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
            self.env.pop(private, None)
        self.env["PATH"] = os.path.join(venv, "bin") + os.pathsep + self.env.get("PATH", "")
        os.makedirs(self.env["BROWSER_PILOT_OUTPUT_DIR"], exist_ok=True)

    def __call__(self, *args):
        proc = subprocess.run(["bp", *args], env=self.env, cwd=self.workdir, capture_output=True, text=True,
                              timeout=90, stdin=subprocess.DEVNULL)
        return helpers.Result(proc)


def _ok(result):
    assert result.rc == 0 and result.json and result.json["ok"] is True, result
    return result.json


def test_bundled_wheel_runs_the_main_job_black_box(installations, release_index, home, chromium, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    bp = Installed(installations[0], home, chromium, "bundled-agent", tmp_path)

    assert subprocess.run(["sh", "-c", "command -v bp"], env=bp.env, capture_output=True, text=True).stdout.strip() \
        == os.path.join(installations[0], "bin", "bp")
    index = release_index
    assert bp("--version").stdout.strip() == index["version"]
    doctor = _ok(bp("doctor"))
    assert doctor["installation"]["path"].startswith(installations[0] + os.sep)  # not the source tree
    assert not doctor["installation"]["path"].startswith(distribution.ROOT)

    connected = _ok(bp("connect"))
    assert connected["connectionGeneration"] >= 1
    opened = _ok(bp("open", page.as_uri()))
    assert opened["title"] == "Bundle smoke"
    snapshot = _ok(bp("snapshot"))
    button = next(e for e in snapshot["elements"] if e["name"] == "Clicked 0 times")
    clicked = _ok(bp("click", str(button["ref"])))
    assert any(e["name"] == "Clicked 1 time" for e in clicked["elements"]), clicked
    assert "content_changed" in clicked["evidence"]["effects"], clicked["evidence"]
    shot = _ok(bp("screenshot", "smoke.png"))  # a name lands in BROWSER_PILOT_OUTPUT_DIR
    assert shot["file"] == os.path.join(bp.env["BROWSER_PILOT_OUTPUT_DIR"], "smoke.png")
    with open(shot["file"], "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    status = _ok(bp("status"))
    assert status["service"]["version"] == index["version"]
    assert status["session"]["state"] != "none"

    done = _ok(bp("disconnect"))
    assert done["released"] is True and done["brokerStopped"] is True  # this installation started it
    assert helpers.brokers_of(home) == []


def test_two_installations_share_one_broker_and_only_the_starter_stops_it(installations, home, chromium, tmp_path):
    first = Installed(installations[0], home, chromium, "agent-first", tmp_path)
    second = Installed(installations[1], home, chromium, "agent-second", tmp_path)

    _ok(first("connect"))
    pid = _ok(first("status"))["service"]["pid"]
    seen = _ok(second("status"))["service"]
    assert seen["pid"] == pid and seen["state"] == "running"  # compatible installation reuses it
    _ok(second("connect"))
    assert _ok(second("status"))["service"]["pid"] == pid
    assert [p.pid for p in helpers.brokers_of(home)] == [pid]
    assert _ok(first("doctor"))["locator"]["sameInstallation"] is True
    assert _ok(second("doctor"))["locator"]["sameInstallation"] is False

    released = _ok(first("disconnect"))  # the starter, while another Agent is active
    assert released["released"] is True and released["brokerStopped"] is False
    assert released["reason"] == "other_agents_active"

    released = _ok(second("disconnect"))  # the last Agent, but another installation
    assert released["released"] is True and released["brokerStopped"] is False
    assert released["reason"] == "other_installation"
    assert _ok(first("status"))["service"]["pid"] == pid

    stopped = _ok(first("disconnect"))  # the installation that started it, nobody left
    assert stopped["brokerStopped"] is True
    assert stopped["released"] is False  # its Agent was already released
    assert helpers.brokers_of(home) == []
