"""Benchmark: `bp snapshot` on a page of 10,000 controls, all listed and at the default limit,
and on a 50-control form, optionally side by side with another tree's `bp` (interleaved runs,
medians). The big page is mixed, as real pages are (issue 26): a heading, then 5,000 list items
each holding a link and a button; --page buttons measures issue 19's 10,000 plain buttons.

    .venv/bin/python -m tests.bench.bench_big_snapshot [--runs 20] [--other /path/to/.venv/bin/bp]
        [--save DIR] [--page mixed|buttons]

Each `bp` gets a home of its own on one private Chromium, and a tab of the same page. With
--save, each side's last output of each command is written to DIR (to compare them byte for
byte: the same page must give the same answer; the summary line compares them, all but
the home's own profileContextId). Not a test: prints figures only.
"""

import argparse
import os
import re
import statistics
import subprocess
import time

from tests import helpers
from tests.bench.bench_peer import BIG, FORM
from tests.bench.rig import Rig

COMMANDS = {"all 10,000 listed": ["snapshot", "--limit", "10000"], "default limit": ["snapshot"]}
MIXED = "<h1>Catalogue</h1><ul>" + "".join(f'<li><a href="#item-{i}">Item {i}</a> <span>in stock</span> '
                                              f'<button>Add {i}</button></li>' for i in range(5_000)) + "</ul>"


def timed(bp, env, args):
    started = time.perf_counter()
    out = subprocess.run([bp, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return (time.perf_counter() - started) * 1000, out.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--other", help="another tree's bp executable, measured in alternation")
    parser.add_argument("--save", help="folder for each side's last output of each command")
    parser.add_argument("--page", choices=("mixed", "buttons"), default="mixed")
    args = parser.parse_args()
    sides = {"this tree": helpers.BP}
    if args.other:
        sides["other"] = args.other
    with Rig("big") as rig:
        url = rig.pages.page(MIXED if args.page == "mixed" else BIG, title="big10k")
        form = rig.pages.page(FORM, title="form50")
        envs, form_envs = {}, {}
        for side, bp in sides.items():
            _, env = rig.home(bp=bp)
            subprocess.run([bp, "open", "--new", url], env=env, stdout=subprocess.DEVNULL, check=True)
            envs[side] = env
            _, env = rig.home(bp=bp)
            subprocess.run([bp, "open", "--new", form], env=env, stdout=subprocess.DEVNULL, check=True)
            form_envs[side] = env
        commands = dict(COMMANDS, **{"50-element form": ["snapshot"]})
        times = {(side, name): [] for side in sides for name in commands}
        last = {}
        for index in range(args.runs + 1):  # the first round warms up and is not counted
            for name, command in commands.items():
                for side, bp in (sides.items() if index % 2 else reversed(sides.items())):
                    ms, out = timed(bp, (form_envs if name == "50-element form" else envs)[side], command)
                    last[(side, name)] = out
                    if index:
                        times[(side, name)].append(ms)
        what = "a heading and 5,000 list items of a link and a button" if args.page == "mixed" else "10,000 buttons"
        print(f"Medians of {args.runs} interleaved runs, page of {what}")
        print("| command | " + " | ".join(sides) + " |")
        print("|---|" + "---|" * len(sides))
        for name, command in commands.items():
            cells = [f"{statistics.median(times[(side, name)]):,.0f} ms" for side in sides]
            print(f"| {name}: bp {' '.join(command)} | " + " | ".join(cells) + " |")
        for name in commands:
            # Each home has a browser context of its own: its id is the one field that differs.
            outs = {re.sub(rb'"profileContextId":"[^"]*"', b'"profileContextId":"-"', last[(side, name)]) for side in sides}
            sizes = ", ".join(f"{len(last[(side, name)]):,} B" for side in sides)
            same = "identical" if len(outs) == 1 else "DIFFERENT"
            print(f"{name}: last outputs {same} ({sizes})")
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            for (side, name), out in last.items():
                with open(os.path.join(args.save, f"{side.replace(' ', '-')}.{name.split()[0]}.json"), "wb") as fh:
                    fh.write(out)


if __name__ == "__main__":
    main()
