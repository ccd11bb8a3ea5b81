"""Benchmark: five actions as five `bp` calls against one `bp batch` of the same five steps,
on the same 50-element page. Medians of interleaved runs; not a test.

    .venv/bin/python -m tests.bench.bench_batch [--runs 10]
"""

import json
import os
import statistics
import subprocess
import time

from tests import helpers
from tests.bench.bench_startup import median_table, timed
from tests.bench.rig import Rig, arguments, bp_json

PAGE = "".join(f"<button>Item {i}</button>" for i in range(45)) + "".join(
    f"<input aria-label=Field{i}>" for i in range(5))


def main():
    args = arguments(10)
    with Rig() as rig:
        home, env = rig.home()
        pages = rig.pages
        observation = bp_json(env, "open", pages.page(PAGE, title="bench-batch"))
        fields = [str(e["ref"]) for e in observation["elements"] if e["name"].startswith("Field")]
        steps = [["type", ref, "x"] for ref in fields[:4]] + [["click", "1"]]
        path = os.path.join(home, "steps.json")
        with open(path, "w") as fh:
            json.dump([{"cmd": s[0], "args": s[1:]} for s in steps], fh)

        def separately():
            for step in steps:
                subprocess.run([helpers.BP, *step], env=env, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                               check=False)

        rows = {"5 actions as 5 bp calls": [], "the same 5 steps as 1 bp batch": []}
        for _ in range(args.runs):
            bp_json(env, "snapshot")  # fresh refs, as an Agent would have
            start = time.perf_counter()
            separately()
            rows["5 actions as 5 bp calls"].append((time.perf_counter() - start) * 1000)
            bp_json(env, "snapshot")
            rows["the same 5 steps as 1 bp batch"].append(timed([helpers.BP, "batch", "--file", path], env))
        print("Wall time, 50-element page, interleaved:")
        median_table(rows)
        saved = statistics.median(rows["5 actions as 5 bp calls"]) - statistics.median(rows["the same 5 steps as 1 bp batch"])
        print(f"  => batch saves {saved:.1f} ms over 5 separate calls")


if __name__ == "__main__":
    main()
