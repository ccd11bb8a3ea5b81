"""Benchmark: `bp launch`, the first `bp connect` and snapshots on the launched browser, side by
side with another tree's `bp` (the TCP-port launch before the pipe holder, by default main's).

Each run, per tree and interleaved: launch a fresh headless browser (timed), connect with no
broker running (timed), open a small and a big page and snapshot each in full (timed, several times),
then disconnect and stop the browser. Not a test: run it with the venv's own interpreter,

    .venv/bin/python -m tests.bench.bench_launch [--runs 5] [--other /work/main/.venv/bin/bp]
"""

import json
import os
import shutil
import subprocess
import time

from tests import helpers
from tests.bench.bench_startup import median_table
from tests.bench.rig import arguments
from tests.pages import PageServer

SNAPSHOTS = 8
BIG_ITEMS = 3000


def timed(bp, env, *args):
    started = time.perf_counter()
    result = subprocess.run([bp, *args], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - started) * 1000
    reply = json.loads(result.stdout) if result.stdout.strip() else {}
    if not reply.get("ok"):
        raise SystemExit(f"{bp} {' '.join(args)} failed: {result.stdout[:500]} {result.stderr[:500]}")
    return elapsed, reply


def one_run(name, bp, home, pages, samples):
    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    try:
        ms, _ = timed(bp, env, "launch", "--headless")
        samples[f"{name}: bp launch"].append(ms)
        ms, _ = timed(bp, env, "connect", "--browser", "launched")
        samples[f"{name}: bp connect (cold broker)"].append(ms)
        for label, url in pages.items():
            timed(bp, env, "open", url)
            for _ in range(SNAPSHOTS):
                ms, reply = timed(bp, env, "snapshot", "--limit", "10000")
                samples[f"{name}: bp snapshot ({label}, {len(reply['elements'])} elements)"].append(ms)
    finally:
        subprocess.run([bp, "disconnect"], env=env, capture_output=True)
        subprocess.run([bp, "launch", "--stop"], env=env, capture_output=True)
        helpers.stop_brokers(home)


def main():
    args = arguments(5, other={"default": "/work/main/.venv/bin/bp"})
    trees = {"before (" + args.other + ")": args.other, "pipe (this tree)": helpers.BP}
    server = PageServer()
    homes = {name: helpers.short_tmpdir("bph-launch-") for name in trees}
    pages = {"small": server.page("<button>Go</button><p>hello</p>", title="small"),
             "big": server.page("<ul>" + "".join(f"<li><a href='#{i}'>item {i}</a></li>" for i in range(BIG_ITEMS))
                                + "</ul>", title="big")}
    samples = {}
    try:
        for name in trees:  # the first launch of a profile creates it: keep it out of the figures
            one_run(name, trees[name], homes[name], pages, _sink())
        for _ in range(args.runs):
            for name, bp in trees.items():
                run = _sink()
                one_run(name, bp, homes[name], pages, run)
                for key, values in run.items():
                    samples.setdefault(key, []).extend(values)
    finally:
        server.stop()
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)
    print(f"bp launch / connect / snapshot on a launched headless browser ({args.runs} runs, interleaved; "
          f"load average {os.getloadavg()[0]:.1f}):")
    median_table(dict(sorted(samples.items(), key=lambda kv: (kv[0].split(": ")[1], kv[0]))))


def _sink():
    from collections import defaultdict

    return defaultdict(list)


if __name__ == "__main__":
    main()
