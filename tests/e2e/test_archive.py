"""The self-contained archive (release/archive.py): unpacked in a fresh directory and run with a
clean environment (only PATH=/usr/bin:/bin and HOME), its `bp` is the CLI, the broker and the
janitor — no Python of the host's is involved (each process's executable is the archive's bp) —
and it does the main job and the crash boundary on real Chromium."""

import json
import os
import shutil
import signal
import subprocess
import tarfile

import psutil
import pytest

from release import build
from tests import distribution, helpers

pytestmark = pytest.mark.archive
pytest_plugins = ("pytester",)

PAGE = """<!doctype html><title>Archive smoke</title>
<button type="button" onclick="this.textContent = 'Clicked ' + (++window.n)">Clicked 0</button>
<script>window.n = 0;</script>"""


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    dist = distribution.archive_release_dir(tmp_path_factory)
    return dist, distribution.release_index(dist)


def test_archive_is_indexed_with_its_sidecar(release):
    dist, index = release
    asset = next(a for a in index["assets"] if a["kind"] == "archive")
    assert asset["file"] == f"browser-pilot-{index['version']}-linux-x86_64.tar.gz" == index["archive"]["file"]
    assert index["archive"]["executable"] == f"browser-pilot-{index['version']}-linux-x86_64/bp"
    assert index["archive"]["packager"].startswith("PyInstaller ")
    check = subprocess.run(["sha256sum", "-c", asset["checksumFile"]], cwd=dist, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert build.verify_release(dist)["archive"] == index["archive"]


def test_a_damaged_archive_is_refused_by_verify(release, tmp_path):
    dist, index = release
    copy = tmp_path / "dist"
    shutil.copytree(dist, copy)
    name = index["archive"]["file"]
    with open(copy / name, "r+b") as fh:  # one byte inside the gzip stream
        fh.seek(os.path.getsize(copy / name) // 2)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(build.ReleaseError) as refused:
        build.verify_release(str(copy))
    assert any(name in problem for problem in refused.value.problems), refused.value.problems


def test_unpacked_archive_runs_cli_broker_and_janitor_without_python(release, pages):
    dist, index = release
    root = helpers.short_tmpdir("bpa-")
    user_home = os.path.join(root, "home")
    os.makedirs(user_home)
    browser = None
    bp_home = os.path.join(user_home, ".browser-pilot")  # the default home under HOME
    try:
        with tarfile.open(os.path.join(dist, index["archive"]["file"])) as tar:
            tar.extractall(root, filter="tar")
        top = os.path.join(root, index["archive"]["topDirectory"])
        executable = os.path.join(root, index["archive"]["executable"])
        sums = subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=top, capture_output=True, text=True)
        assert sums.returncode == 0, sums.stdout[-2000:] + sums.stderr[-2000:]
        with open(os.path.join(top, "licenses", "INDEX.txt")) as fh:
            licences = fh.read()
        for name in ("Python", "pyzmq", "websocket-client", "click", "psutil", "orjson", "pyinstaller"):
            assert name in licences
        with open(os.path.join(top, "browser-pilot-archive.json")) as fh:
            assert json.load(fh)["version"] == index["version"]

        # The person's Chromium in its default place under HOME: discovery finds it with no
        # BROWSER_PILOT_* variable at all.
        browser = helpers.Chromium(os.path.join(user_home, ".config", "chromium"))
        clean = {"PATH": "/usr/bin:/bin", "HOME": user_home}

        def bp(*args):
            proc = subprocess.run([executable, *args], env=clean, cwd=root, capture_output=True, text=True,
                                  timeout=90, stdin=subprocess.DEVNULL)
            result = helpers.Result(proc)
            assert result.rc == 0 and result.json and result.json["ok"] is True, result
            return result.json

        assert subprocess.run([executable, "--version"], env=clean, capture_output=True, text=True).stdout.strip() \
            == index["version"]
        baseline = set(browser.pages())
        assert bp("connect")["connectionGeneration"] >= 1
        opened = bp("open", pages.page(PAGE, title="Archive smoke"))
        assert opened["title"] == "Archive smoke"
        button = next(e["ref"] for e in opened["elements"] if e["name"] == "Clicked 0")
        clicked = bp("click", str(button))
        assert any(e["name"] == "Clicked 1" for e in clicked["elements"]), clicked

        status = bp("status")
        roles = {p["role"]: p["pid"] for p in status["processes"]}
        assert set(roles) == {"broker", "janitor"}, status["processes"]
        for role, pid in roles.items():
            proc = psutil.Process(pid)
            assert proc.exe() == os.path.realpath(executable), (role, proc.exe())  # no host Python
            assert proc.cmdline()[1:3] == ["-m", role]
        managed = set(browser.pages()) - baseline
        assert len(managed) == 1

        os.kill(roles["broker"], signal.SIGKILL)  # the crash: the janitor closes the managed tab
        assert helpers.wait_until(lambda: not managed & set(browser.pages()), timeout=10), browser.pages()

        assert bp("connect")["ok"] is True  # a fresh broker from the archive
        done = bp("disconnect")
        assert done["released"] is True and done["brokerStopped"] is True
        assert helpers.wait_until(lambda: not helpers.brokers_of(bp_home), timeout=10)
        assert helpers.wait_until(lambda: not set(browser.pages()) - baseline, timeout=10)
    finally:
        helpers.stop_brokers(bp_home)
        if browser is not None:
            browser.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_pytest_plugin_tests_the_archive_bp(release, pytester, monkeypatch):
    """docs/pytest-plugin.md: BROWSER_PILOT_BP points the plugin's Agent at the archive's bp."""
    from tests.e2e.test_pytest_plugin import EXAMPLE_NAME, example_text

    dist, index = release
    root = helpers.short_tmpdir("bpa-plugin-")
    try:
        with tarfile.open(os.path.join(dist, index["archive"]["file"])) as tar:
            tar.extractall(root, filter="tar")
        for name in [k for k in os.environ if k.startswith(("BROWSER_PILOT_", "PYTEST_XDIST"))]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("BROWSER_PILOT_BP", os.path.join(root, index["archive"]["executable"]))
        pytester.makepyfile(**{EXAMPLE_NAME[:-3]: example_text() + """

def test_the_service_is_the_archive(bp_agent):
    import os, psutil
    bp_agent.run("connect")
    for pid in bp_agent.processes().values():
        assert psutil.Process(pid).exe() == os.path.realpath(bp_agent.executable)
"""})
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-k", "broker_crash or the_archive",
                                               timeout=300)
        result.assert_outcomes(passed=2, deselected=3)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_browser_bp_launch_starts_gets_none_of_the_archive_libraries(release):
    """The bootloader's LD_LIBRARY_PATH (the archive's _internal/) and its _PYI_* markers stay
    with the archive's own processes: the launched Chromium gets the person's environment."""
    dist, index = release
    root = helpers.short_tmpdir("bpa-launch-")
    user_home = os.path.join(root, "home")
    os.makedirs(user_home)
    clean = {"PATH": "/usr/bin:/bin", "HOME": user_home}
    try:
        with tarfile.open(os.path.join(dist, index["archive"]["file"])) as tar:
            tar.extractall(root, filter="tar")
        executable = os.path.join(root, index["archive"]["executable"])

        def bp(*args):
            proc = subprocess.run([executable, *args], env=clean, capture_output=True, text=True, timeout=90,
                                  stdin=subprocess.DEVNULL)
            result = helpers.Result(proc)
            assert result.rc == 0 and result.json and result.json["ok"] is True, result
            return result.json

        launched = bp("launch", "--headless")["browser"]
        browser = psutil.Process(launched["pid"])
        tree = [browser] + browser.children(recursive=True)
        for proc in tree:
            environ = proc.environ()
            assert not [k for k in environ if k.startswith("_PYI_") or k.startswith("LD_LIBRARY_PATH")], \
                (proc.cmdline()[:2], {k: v for k, v in environ.items() if "PYI" in k or "LD_" in k})
        assert bp("connect", "--browser", "launched")["ok"] is True  # the frozen broker and janitor still start
        assert bp("disconnect")["brokerStopped"] is True
        assert bp("launch", "--stop")["stopped"] is True
    finally:
        helpers.stop_brokers(os.path.join(user_home, ".browser-pilot"))
        subprocess.run([os.path.join(root, index["archive"]["executable"]), "launch", "--stop"], env=clean,
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
