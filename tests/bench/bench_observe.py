"""Benchmark: observation quality on the fixture corpus and snapshot/click wall time.

Prints recall of must-appear elements, the false-interactable rate, stale-ref detection, and
observation sizes over tests/corpus.py, then medians of interleaved runs of `bp status`,
`bp snapshot` on a 50- and a 5,000-element page and `bp click` (with its fresh observation).

    .venv/bin/python -m tests.bench.bench_observe [--runs 20]
"""

import json
import os
import signal
import statistics
import subprocess

from tests import helpers
from tests.bench.bench_startup import median_table, timed
from tests.corpus import CASES
from tests.bench.rig import Rig, arguments


def bp_json(env, *args):
    out = subprocess.run([helpers.BP, *args], env=env, capture_output=True, text=True)
    return json.loads(out.stdout), len(out.stdout.encode())


def corpus_quality(env, pages):
    must_total = must_found = not_total = not_found = 0
    sizes = []
    misses = []
    for case, (_, must, must_not) in sorted(CASES.items()):
        observation, size = bp_json(env, "open", pages.url(f"/corpus/{case}"), "--limit", "200")
        sizes.append(size)
        seen = [(e["role"], e["name"]) for e in observation.get("elements", [])]
        for pair in must:
            must_total += 1
            must_found += pair in seen
            if pair not in seen:
                misses.append((case, "missed", pair))
        for pair in must_not:
            not_total += 1
            not_found += pair in seen
            if pair in seen:
                misses.append((case, "false", pair))
    print(f"Corpus: {len(CASES)} cases")
    print(f"  recall of must-appear elements   {must_found}/{must_total} = {100 * must_found / must_total:.1f} %")
    print(f"  false-interactable rate          {not_found}/{not_total} = {100 * not_found / not_total:.1f} %")
    print(f"  observation bytes                median {statistics.median(sizes):.0f}, max {max(sizes)}")
    for miss in misses:
        print("   ", *miss)


COUNTER = ("<button id=b onclick=\"document.title='n='+(+(document.title.split('=')[1]||0)+1)\">Count</button>"
           "<a href='/page?title=Next'>Next page</a>"
           "<script>function swap(){const b=document.getElementById('b');b.replaceWith(b.cloneNode(true));}</script>")


def stale_detection(home, env, pages, chromium):
    scenarios = 0
    detected = 0

    def fresh():
        observation, _ = bp_json(env, "open", pages.page(COUNTER, title="stale-probe"))
        return [e["ref"] for e in observation["elements"] if e["name"] == "Count"][0]

    def raw():
        return [t for t, i in chromium.pages().items() if i["title"].startswith("stale-probe") or
                i["title"].startswith("n=")][0]

    cases = {
        "navigation": lambda ref: bp_json(env, "open", pages.url("/page?title=elsewhere")),
        "clone_and_replace": lambda ref: chromium.evaluate(raw(), "swap(); 1"),
        "renamed": lambda ref: chromium.evaluate(raw(), "document.getElementById('b').textContent='Other'; 1"),
        "reconnect": lambda ref: _reconnect(home, env),
    }
    for name, change in cases.items():
        ref = fresh()
        change(ref)
        result, _ = bp_json(env, "click", str(ref))
        scenarios += 1
        ok = result.get("code") == "stale_ref"
        detected += ok
        print(f"    {name:<18} {'stale_ref' if ok else 'NOT DETECTED: ' + json.dumps(result)[:120]}")
    print(f"  stale-ref detection              {detected}/{scenarios} = {100 * detected / scenarios:.1f} %")


def _reconnect(home, env):
    status, _ = bp_json(env, "status")
    janitor = [p for p in status["processes"] if p["role"] == "janitor"][0]["pid"]
    os.kill(janitor, signal.SIGKILL)
    helpers.wait_until(lambda: bp_json(env, "status")[0]["browser"]["state"] == "disconnected")
    bp_json(env, "connect")


def timings(env, pages, runs):
    small = pages.page("".join(f"<button>Item {i}</button>" for i in range(49)) + COUNTER.split("<a")[0])
    large = pages.page("".join(f"<button>Item {i}</button>" for i in range(5000)))
    bp_json(env, "open", "--new", large, "--limit", "10000")
    large_tab = bp_json(env, "tabs")[0]["tabs"][-1]["index"]
    bp_json(env, "open", "--new", small)
    small_tab = bp_json(env, "tabs")[0]["tabs"][-1]["index"]
    samples = {"bp status": [], "bp snapshot (50 elements)": [], "bp click (50 elements, + observation)": [],
               "bp snapshot --limit 10000 (5,000 elements)": []}
    for _ in range(runs):
        samples["bp status"].append(timed([helpers.BP, "status"], env))
        bp_json(env, "tab", str(small_tab))
        samples["bp snapshot (50 elements)"].append(timed([helpers.BP, "snapshot"], env))
        samples["bp click (50 elements, + observation)"].append(timed([helpers.BP, "click", "50"], env))
        bp_json(env, "tab", str(large_tab))
        samples["bp snapshot --limit 10000 (5,000 elements)"].append(
            timed([helpers.BP, "snapshot", "--limit", "10000"], env))
    print("Wall time (interleaved, tabs in the background of a headless window):")
    median_table(samples)
    base = statistics.median(samples["bp status"])
    print(f"  => snapshot(50) - status = {statistics.median(samples['bp snapshot (50 elements)']) - base:+.1f} ms; "
          f"click(50) - status = {statistics.median(samples['bp click (50 elements, + observation)']) - base:+.1f} ms")


def main():
    args = arguments(20)
    with Rig() as rig:
        home, env = rig.home()
        chromium, pages = rig.chromium, rig.pages
        corpus_quality(env, pages)
        stale_detection(home, env, pages, chromium)
        timings(env, pages, args.runs)


if __name__ == "__main__":
    main()
