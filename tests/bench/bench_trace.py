"""Benchmark: what `bp trace` costs an Agent's step. Three Agents (client keys) on one broker,
each with its own tab on the same 50-element page: one not tracing, one tracing, one tracing
with --screenshots. Interleaved runs of `bp click` (with its fresh observation) and of the pair
`bp click` + `bp snapshot` — with screenshots the picture is taken on the tab after the click's
answer went out, so its cost lands on the tab's next command, which the pair measures. Then the
broker's own figures: the time each thumbnail held the tab (`imageMs`), the export's time and
size, and the in-process cost of recording one step (no browser). Medians; not a test.

    .venv/bin/python -m tests.bench.bench_trace [--runs 20]
"""

import os
import re
import statistics
import time
from types import SimpleNamespace

from tests import helpers
from tests.bench.bench_startup import median_table, timed
from tests.bench.rig import Rig, arguments, bp_json

PAGE = "".join(f"<button>Item {i}</button>" for i in range(49)) + "<input aria-label=Field>"
VARIANTS = (("no trace", None), ("trace", ("trace", "start")), ("trace --screenshots", ("trace", "start", "--screenshots")))


def record_cost(n=20000):
    """Microseconds per Traces.record of a click's reply, in process (what the broker adds)."""
    from bp import ops
    from broker.registry import Request
    from broker.trace import book

    agent = SimpleNamespace(key="k", selected="RAW")
    broker = SimpleNamespace(agents=SimpleNamespace(get=lambda key: agent),
                             browser=SimpleNamespace(targets=SimpleNamespace(info=lambda raw: {})))
    traces = book.Traces(None, broker.agents, broker.browser, None)
    traces.start(agent, screenshots=False)
    reply = {"ok": True, "title": "bench", "url": "http://127.0.0.1:1/html?id=1&title=bench",
             "elements": [{"ref": i, "role": "button", "name": f"Item {i}"} for i in range(50)],
             "evidence": {"action": "click", "kind": "control", "effects": ["focus_changed"], "status": "verified"},
             "hints": [], "truncated": False, "truncationReasons": []}
    untraced = Request(op=ops.OP_CLICK, client="other", args={"ref": 1, "limit": 50}, timeout_ms=5000,
                       command_id="cmd-abcdefgh12")
    request = Request(op=ops.OP_CLICK, client="k", args={"ref": 1, "limit": 50}, timeout_ms=5000,
                      command_id="cmd-abcdefgh12")
    out = {}
    for name, req in (("key not tracing", untraced), ("key tracing", request)):
        started = time.perf_counter()
        for _ in range(n):
            traces.record(req, reply)
        out[name] = (time.perf_counter() - started) / n * 1e6
    return out


def main():
    args = arguments(20)
    with Rig("trace") as rig:
        _, base = rig.home()
        url = rig.pages.page(PAGE, title="bench-trace")
        envs = {}
        for index, (name, start) in enumerate(VARIANTS):
            env = dict(base, BROWSER_PILOT_CLIENT_KEY=f"bench-trace-{index}")
            bp_json(env, "open", url, "--new")
            if start:
                assert bp_json(env, *start)["ok"]
            envs[name] = env
        samples = {}
        for name in envs:
            samples[f"bp click 1 [{name}]"] = []
        for name in envs:
            samples[f"bp click 1 + bp snapshot [{name}]"] = []
        for _ in range(args.runs):
            for name, env in envs.items():
                samples[f"bp click 1 [{name}]"].append(timed([helpers.BP, "click", "1"], env))
                time.sleep(0.3)  # the screenshot (if any) is done before the next click
            for name, env in envs.items():
                started = time.perf_counter()
                timed([helpers.BP, "click", "1"], env)
                timed([helpers.BP, "snapshot"], env)
                samples[f"bp click 1 + bp snapshot [{name}]"].append((time.perf_counter() - started) * 1000)
        print(f"Per-command cost of bp trace (50-element page, medians of {args.runs} interleaved runs; "
              f"cores: {os.cpu_count()}):")
        median_table(samples)
        med = {k: statistics.median(v) for k, v in samples.items()}
        for form in ("bp click 1 [{}]", "bp click 1 + bp snapshot [{}]"):
            plain = med[form.format("no trace")]
            print(f"  => {form.format('…')}: trace {med[form.format('trace')] - plain:+.1f} ms, "
                  f"trace --screenshots {med[form.format('trace --screenshots')] - plain:+.1f} ms")
        # The broker's own view of the screenshots, and the export.
        out_dir = helpers.short_tmpdir("bpt-trace-out-")
        env = dict(envs["trace --screenshots"], BROWSER_PILOT_OUTPUT_DIR=out_dir)
        started = time.perf_counter()
        exported = bp_json(env, "trace", "export", "bench.html")
        export_ms = (time.perf_counter() - started) * 1000
        html = open(exported["file"], encoding="utf-8").read()
        image_ms = [float(x) for x in re.findall(r'data-image-ms="([0-9.]+)"', html)]
        print(f"  export: {exported['steps']} steps, {exported['images']} images, {exported['sizeBytes']:,} bytes "
              f"({exported['sizeBytes'] / max(1, exported['steps']):,.0f} B/step), bp trace export {export_ms:.0f} ms")
        if image_ms:
            print(f"  thumbnail time on the tab (imageMs): median {statistics.median(image_ms):.1f} ms (n={len(image_ms)})")
    for name, micros in record_cost().items():
        print(f"  in-process Traces.record, {name}: {micros:.1f} µs per command")


if __name__ == "__main__":
    main()
