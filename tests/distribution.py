"""One release build and one pair of bundled installations per test run, shared by xdist workers.

Building (sdist, wheel, skill archive) and installing take seconds; every worker that needs them
takes an flock on a file in the run's shared temporary root, and the first one does the work
(pytest-xdist's documented pattern for session fixtures).
"""

import fcntl
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shared_root(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _once(root, name, make):
    """Run make(directory) once per test run for this name; later callers get the directory."""
    directory = os.path.join(str(root), name)
    with open(os.path.join(str(root), name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = os.path.join(directory, ".done")
        if not os.path.exists(done):
            os.makedirs(directory, exist_ok=True)
            make(directory)
            with open(done, "w") as fh:
                fh.write("ok\n")
    return directory


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def release_dir(tmp_path_factory):
    """A release built from this tree with `python -m release.build` (no isolation: the test
    extras bring build, setuptools and wheel into this venv)."""

    def make(directory):
        run([sys.executable, "-m", "release.build", "--out", os.path.join(directory, "dist"), "--no-isolation",
             "--no-archive"],
            cwd=ROOT)

    return os.path.join(_once(shared_root(tmp_path_factory), "release", make), "dist")


def release_index(dist):
    name = next(n for n in os.listdir(dist) if n.endswith("-release-index.json"))
    with open(os.path.join(dist, name)) as fh:
        return json.load(fh)


def bundled_installations(tmp_path_factory, count=2):
    """`count` fresh virtual environments outside the source tree, each with the release's
    wheel installed like a product bundles it: the dependencies come from a wheelhouse that
    `pip download` filled once from the package index, then every install is offline
    (`--no-index`). The venvs have no pip of their own; this interpreter's pip installs into
    them (`pip --python`)."""
    dist = release_dir(tmp_path_factory)
    wheel = os.path.join(dist, release_index(dist)["python"]["wheel"])

    def make(directory):
        wheelhouse = os.path.join(directory, "wheelhouse")
        run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", wheelhouse, wheel])
        for n in range(count):
            venv = os.path.join(directory, f"venv{n}")
            run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=directory)
            run([sys.executable, "-m", "pip", "--python", os.path.join(venv, "bin", "python"), "install", "-q",
                 "--disable-pip-version-check", "--no-index", "--find-links", wheelhouse, wheel], cwd=directory)

    directory = _once(shared_root(tmp_path_factory), "bundle", make)
    return [os.path.join(directory, f"venv{n}") for n in range(count)]


def archive_release_dir(tmp_path_factory):
    """A full release, the self-contained archive included (PyInstaller), built once per test
    run. Its build time is written beside it (build-seconds) for the run's report."""

    def make(directory):
        import time

        started = time.monotonic()
        run([sys.executable, "-m", "release.build", "--out", os.path.join(directory, "dist"), "--no-isolation"],
            cwd=ROOT)
        with open(os.path.join(directory, "build-seconds"), "w") as fh:
            fh.write(f"{time.monotonic() - started:.1f}\n")

    return os.path.join(_once(shared_root(tmp_path_factory), "release-archive", make), "dist")
