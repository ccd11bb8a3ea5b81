"""Benchmark: what journaling a held tab's requests from the moment it is held costs. A page
that makes 300 parallel fetches is opened (`bp open`, then `bp wait --text` until all 300 came
back), side by side:

- this tree (journal, console and errors from the moment the tab is held);
- with --compare BP (another tree's `bp`, e.g. /work/main/.venv/bin/bp, where the journal starts
  with the key's first `bp net`): that tree without any `bp net` (nothing journaled), and after
  one `bp net` (journaled the old way).

Each variant has its own home (own broker and janitor) on one shared Chromium; runs are
interleaved and medians printed: the wall time, and the CPU time the variant's broker and
janitor spent on it (less sensitive to a busy machine; Chrome's own share is not in it). Not a
test.

    .venv/bin/python -m tests.bench.bench_journal [--runs 15] [--compare /work/main/.venv/bin/bp]
"""

import json
import subprocess
import time

from tests import helpers
from tests.bench.bench_startup import median_table
from tests.bench.rig import Rig, arguments

FETCHES = 300
PAGE = f"""
<p id="out">working</p>
<script>
const all = [];
for (let i = 0; i < {FETCHES}; i++) all.push(fetch('/json?pad=200&n=' + i).then(r => r.text()));
Promise.all(all).then(() => {{ document.getElementById('out').textContent = 'fetched-all'; }});
</script>
"""


def run(bp, env, *args):
    return subprocess.run([bp, *args], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def open_and_settle(bp, env, url):
    """ms from `bp open` until the page shows that every fetch came back."""
    started = time.perf_counter()
    opened = run(bp, env, "open", url)
    waited = run(bp, env, "--timeout", "30000", "wait", "--text", "fetched-all")
    elapsed = (time.perf_counter() - started) * 1000
    assert opened.returncode == 0 and waited.returncode == 0, (opened.stdout[:500], waited.stdout[:500])
    return elapsed


def service_cpu_ms(home):
    """CPU time (user + system, ms) of this home's broker and of its janitor so far."""
    broker = janitor = 0.0
    for proc in helpers.brokers_of(home):
        broker += sum(proc.cpu_times()[:2])
        janitor += sum(sum(child.cpu_times()[:2]) for child in proc.children())
    return broker * 1000, janitor * 1000


def main():
    args = arguments(15, compare={"help": "another tree's bp (its journal starts with the first `bp net`)"})
    variants = {"this tree: journaled from hold": (helpers.BP, False)}
    if args.compare:
        variants["compared tree: no `bp net` (not journaled)"] = (args.compare, False)
        variants["compared tree: after `bp net` (journaled)"] = (args.compare, True)
    homes, envs = {}, {}
    with Rig() as rig:
        pages = rig.pages
        for name, (bp, net_first) in variants.items():
            homes[name], envs[name] = rig.home(bp=bp)
            assert run(bp, envs[name], "open", pages.page("<p>warm-up</p>")).returncode == 0
            if net_first:
                assert run(bp, envs[name], "net").returncode == 0
        samples = {name: [] for name in variants}
        cpu = {f"{name} [{part} CPU]": [] for name in variants for part in ("broker", "janitor")}
        for _ in range(args.runs):
            for name, (bp, _) in variants.items():
                before = service_cpu_ms(homes[name])
                samples[name].append(open_and_settle(bp, envs[name], pages.page(PAGE, title="bench-journal")))
                after = service_cpu_ms(homes[name])
                cpu[f"{name} [broker CPU]"].append(after[0] - before[0])
                cpu[f"{name} [janitor CPU]"].append(after[1] - before[1])
        listed = json.loads(run(helpers.BP, envs["this tree: journaled from hold"], "net", "--limit", "1").stdout)
        print(f"`bp open` + `bp wait --text` of a page of {FETCHES} parallel fetches, interleaved:")
        median_table(samples)
        print("CPU time of the variant's broker and janitor during those runs:")
        median_table(cpu)
        print(f"  (this tree's journal of its key: total {listed['total']}, dropped {listed.get('dropped', 0)})")


if __name__ == "__main__":
    main()
