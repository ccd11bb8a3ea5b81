"""Benchmark: the self-contained archive's `bp` against the wheel install, side by side.

Builds a release with its archive (or takes one: --release DIR), unpacks the archive, and times,
interleaved run by run so drift hits both alike: `bp --version` (no service), `bp status` and
`bp snapshot` against each installation's own running broker on the same Chromium and page, and
the cold `bp connect` (the broker and the janitor start); and the two floors, `python -c pass`
against a PyInstaller one-folder build of a script that is only `pass`. The wheel side is the `bp` of this
interpreter's environment (the package installed non-editable from this tree: a wheel install).
Not a test: run it with the venv's own interpreter,

    .venv/bin/python -m tests.bench.bench_archive [--runs 30] [--release DIR]
"""

import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

from tests import distribution, helpers
from tests.bench.bench_startup import median_table
from tests.bench.rig import Rig, arguments

PAGE = "<h1>Bench</h1>" + "".join(f"<p><a href='#{i}'>link {i}</a> <button>button {i}</button></p>" for i in range(50))


def timed(command, env):
    """(wall-clock ms, CPU ms of the command's own processes): CPU time says more than the wall
    clock on a loaded machine (it leaves out the broker's share: another process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def frozen_floor(directory):
    """A PyInstaller one-folder build of `pass`: the packager's own start-up cost."""
    with open(os.path.join(directory, "floor.py"), "w") as fh:
        fh.write("pass\n")
    subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--onedir", "--log-level", "ERROR",
                    "--distpath", os.path.join(directory, "dist"), "--workpath", os.path.join(directory, "build"),
                    "--specpath", directory, os.path.join(directory, "floor.py")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return os.path.join(directory, "dist", "floor", "floor")


def build_release(directory):
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "release.build", "--out", directory, "--no-isolation"], cwd=distribution.ROOT,
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def main():
    args = arguments(30, release={"default": None, "help": "an already built release directory (with its archive)"})
    scratch = tempfile.mkdtemp(prefix="bp-bench-archive-")
    try:
        release = args.release
        if release is None:
            release = os.path.join(scratch, "dist")
            print(f"release.build with the archive: {build_release(release):.1f} s (wall clock)")
        index = distribution.release_index(release)
        with tarfile.open(os.path.join(release, index["archive"]["file"])) as tar:
            tar.extractall(scratch, filter="tar")
        frozen = os.path.join(scratch, index["archive"]["executable"])
        installs = {"wheel": helpers.BP, "archive": frozen}
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.dirname(frozen)) for f in fs
                   if not os.path.islink(os.path.join(d, f)))
        print(f"python: {sys.executable}  cores: {os.cpu_count()}  archive: {index['archive']['file']} "
              f"({os.path.getsize(os.path.join(release, index['archive']['file'])) / 1048576:.1f} MiB packed, "
              f"{size / 1048576:.1f} MiB unpacked, {index['archive']['packager']})")
        with Rig("archive") as rig:
            url = rig.pages.page(PAGE, title="Bench")
            envs = {}
            for name, bp in installs.items():
                home, env = rig.home(bp=bp)
                subprocess.run([bp, "open", url], env=env, stdout=subprocess.DEVNULL, check=True)
                envs[name] = (home, env)
            floor_dir = os.path.join(scratch, "floor")
            os.makedirs(floor_dir)
            cases = {"floor   python -c pass": ([sys.executable, "-c", "pass"], None),
                     "floor   frozen pass (PyInstaller)": ([frozen_floor(floor_dir)], None)}
            for name, bp in installs.items():
                cases[f"{name:<7} bp --version"] = ([bp, "--version"], envs[name][1])
                cases[f"{name:<7} bp status"] = ([bp, "status"], envs[name][1])
                cases[f"{name:<7} bp snapshot"] = ([bp, "snapshot"], envs[name][1])
            for command, env in cases.values():  # warm the page cache
                timed(command, env)
            samples = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, (command, env) in cases.items():
                    samples[name].append(timed(command, env))
            print("Hot path, each against its own running broker (interleaved), wall clock:")
            median_table({name: [wall for wall, _ in runs] for name, runs in samples.items()})
            print("... and CPU time of the bp process itself:")
            median_table({name: [cpu for _, cpu in runs] for name, runs in samples.items()})
            cold = {f"{name:<7} bp connect (no broker running)": [] for name in installs}
            for _ in range(max(5, args.runs // 3)):
                for name, bp in installs.items():
                    home, env = envs[name]
                    helpers.stop_brokers(home)
                    cold[f"{name:<7} bp connect (no broker running)"].append(timed([bp, "connect"], env)[0])
            print("Cold start: broker + janitor start, CDP handshake, managed tab (interleaved):")
            median_table(cold)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
