"""Benchmark: what an allowed navigation (`bp open` of a page with 10 subresources, with its
fresh observation) costs with the person's navigation bounds off, on (documents intercepted),
and on with origins.subresources (every request intercepted). Three homes, three brokers, one
Chromium; medians of interleaved runs; not a test.

    .venv/bin/python -m tests.bench.bench_policy [--runs 20]
"""

import json
import statistics
import subprocess

from tests import helpers
from tests.bench.bench_startup import median_table, timed
from tests.bench.rig import Rig, arguments

PAGE = "".join(f"<p>Item {i}</p><img src='/json?pad={i}' width=1 height=1>" for i in range(10))
BOUNDS = {"version": 1, "origins": {"allow": ["http://127.0.0.1:*"]}}


def main():
    args = arguments(20)
    with Rig() as rig:
        pages = rig.pages
        policies = {"bounds off": None, "bounds on (documents)": BOUNDS,
                    "bounds on + subresources": dict(BOUNDS, origins=dict(BOUNDS["origins"], subresources=True))}
        setups = {name: rig.home(policy=policy) for name, policy in policies.items()}
        envs = {name: env for name, (_, env) in setups.items()}
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


if __name__ == "__main__":
    main()
