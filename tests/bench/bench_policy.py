"""Benchmark: what an allowed navigation (`bp open` of a page with 10 subresources, with its
fresh observation) costs with the person's navigation bounds off, on (documents intercepted),
and on with origins.subresources (every request intercepted). Three homes, three brokers, one
Chromium; medians of interleaved runs; not a test.

    .venv/bin/python -m tests.bench.bench_policy [--runs 20]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess

from tests import helpers
from tests.bench.bench_startup import median_table, timed
from tests.pages import PageServer

PAGE = "".join(f"<p>Item {i}</p><img src='/json?pad={i}' width=1 height=1>" for i in range(10))
BOUNDS = {"version": 1, "origins": {"allow": ["http://127.0.0.1:*"]}}


def home_with(policy):
    home = helpers.short_tmpdir("bph-bench-")
    os.chmod(home, 0o700)
    if policy is not None:
        path = os.path.join(home, "policy.json")
        with open(path, "w") as fh:
            json.dump(policy, fh)
        os.chmod(path, 0o600)
    return home


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    chromium = helpers.Chromium(helpers.short_tmpdir("bpc-bench-"))
    pages = PageServer()
    setups = {"bounds off": home_with(None), "bounds on (documents)": home_with(BOUNDS),
              "bounds on + subresources": home_with(dict(BOUNDS, origins=dict(BOUNDS["origins"], subresources=True)))}
    envs = {name: helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=chromium.root) for name, home in setups.items()}
    try:
        for env in envs.values():
            subprocess.run([helpers.BP, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
        url = pages.page(PAGE, title="bench-policy")
        for env in envs.values():  # warm: each home's tab has the page (and its cache) once
            reply = json.loads(subprocess.run([helpers.BP, "open", url], env=env, capture_output=True, text=True).stdout)
            assert reply["ok"], reply
        samples = {f"bp open (allowed) [{name}]": [] for name in setups}
        for _ in range(args.runs):
            for name, env in envs.items():
                samples[f"bp open (allowed) [{name}]"].append(timed([helpers.BP, "open", url], env))
        print("Wall time of an allowed navigation with its observation (page + 10 images), interleaved:")
        median_table(samples)
        base = statistics.median(samples["bp open (allowed) [bounds off]"])
        for name in list(setups)[1:]:
            print(f"  => {name} - off = {statistics.median(samples[f'bp open (allowed) [{name}]']) - base:+.1f} ms")
    finally:
        for home in setups.values():
            helpers.stop_brokers(home)
            shutil.rmtree(home, ignore_errors=True)
        pages.stop()
        chromium.stop()
        shutil.rmtree(chromium.root, ignore_errors=True)


if __name__ == "__main__":
    main()
