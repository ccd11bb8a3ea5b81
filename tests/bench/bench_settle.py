"""Benchmark: the settle corpus (tests/settle_corpus.py) — for each way a page answers an action,
whether the answer is in that action's own observation, how long the call took, and what the
evidence's `settle` said. The grace of debounced fields shows in three rows: `debounced_search`
(a debounce whose timer the settle cannot see: the grace catches its request),
`debounced_search_global` (the timer is seen: no grace needed) and `search_noop` (a search box
that answers nothing: the grace's whole cost). Medians of --runs runs; not a test.

    .venv/bin/python -m tests.bench.bench_settle [--runs 5]
"""

import json
import statistics
import subprocess
import time

from tests import helpers
from tests.bench.rig import Rig, arguments, bp_json
from tests.settle_corpus import CASES, SettleServer


def act(env, case, action):
    page = bp_json(env, "open", case)
    role = "searchbox" if action[0] == "type" else "button"
    ref = str([e["ref"] for e in page["elements"] if e["role"] == role and e["name"] == action[1]][0])
    args = ["click", ref] if action[0] == "click" else ["type", ref, action[2]]
    started = time.perf_counter()
    out = subprocess.run([helpers.BP, "--timeout", "15000", *args], env=env, capture_output=True, text=True)
    ms = (time.perf_counter() - started) * 1000
    return ms, json.loads(out.stdout)


def main():
    args = arguments(5)
    server = SettleServer()
    try:
        with Rig("settle") as rig:
            _, env = rig.home()
            subprocess.run([helpers.BP, "open", "--new", "about:blank"], env=env, stdout=subprocess.DEVNULL, check=True)
            print(f"Settle corpus, medians of {args.runs} runs (managed tab in the background; machine state as it is):")
            print("| case | answer in the same call | call | settle (last run) |")
            print("|---|---|---|---|")
            for case, (_, action, expected) in sorted(CASES.items()):
                times, hits, settle = [], 0, None
                for _ in range(args.runs):
                    ms, reply = act(env, server.url(case), action)
                    times.append(ms)
                    names = [e.get("name") for e in reply.get("elements") or ()]
                    hits += expected is None or expected in names
                    settle = (reply.get("evidence") or {}).get("settle")
                label = f"{hits}/{args.runs}" if expected else "n/a (no answer expected)"
                print(f"| {case} | {label} | {statistics.median(times):,.0f} ms | {json.dumps(settle)} |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
