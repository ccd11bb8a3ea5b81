"""Benchmark: what out-of-process iframes cost now that each waits, as it starts, until its
interception is on (issue 27 item 1c: waitForDebuggerOnStart on the frames' auto-attach). `bp
open` of a page with three cross-site iframes (two images each), with its observation, bounds off
and bounds on with subresources; with --compare BP (another tree's `bp`, e.g. main's), the same
on that tree, interleaved. Medians; not a test.

    .venv/bin/python -m tests.bench.bench_frames [--runs 20] [--compare /work/main/.venv/bin/bp]
"""

import json
import statistics
import subprocess

from tests import helpers
from tests.bench.bench_startup import median_table, timed
from tests.bench.rig import Rig, arguments


def main():
    args = arguments(20, compare={"default": None})
    with Rig("frames") as rig:
        pages = rig.pages
        inner = pages.page("".join(f"<p>inner {i}</p><img src='/json?pad={i}' width=1 height=1>" for i in range(2)),
                           title="inner", site="a")
        url = pages.page("".join(f"<iframe src='{inner}&n={i}'></iframe>" for i in range(3)), title="bench-frames")
        bounds = {"version": 1, "origins": {"allow": [f"http://127.0.0.1:{pages.port}", f"http://*.test:{pages.port}"],
                                            "subresources": True}}
        trees = {"this tree": helpers.BP}
        if args.compare:
            trees["compare"] = args.compare
        runs = {}
        for tree, exe in trees.items():
            for name, policy in (("bounds off", None), ("bounds on + subresources", bounds)):
                _, env = rig.home(policy=policy, bp=exe)
                runs[f"bp open, 3 cross-site frames [{tree}, {name}]"] = (exe, env)
        for exe, env in runs.values():  # warm
            reply = json.loads(subprocess.run([exe, "open", url], env=env, capture_output=True, text=True).stdout)
            assert reply["ok"], reply
        samples = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, (exe, env) in runs.items():
                samples[name].append(timed([exe, "open", url], env))
        print("Wall time of bp open of a page with three cross-site iframes, with its observation, interleaved:")
        median_table(samples)
        if args.compare:
            for name in ("bounds off", "bounds on + subresources"):
                ours = statistics.median(samples[f"bp open, 3 cross-site frames [this tree, {name}]"])
                theirs = statistics.median(samples[f"bp open, 3 cross-site frames [compare, {name}]"])
                print(f"  => {name}: this tree - compare = {ours - theirs:+.1f} ms")


if __name__ == "__main__":
    main()
