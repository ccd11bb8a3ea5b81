"""Benchmark: the Agent step as work grows (issue 37 item 4). 1, 4 and 8 Agents step at once,
each with its own client key on its own tab of one broker; each step is a `bp click` whose
handler changes the page at once, with its observation. Prints p50 and p95 of the step and the
broker's CPU per step (its process and the janitor's, user + system, over the whole round).
Not a test:

    .venv/bin/python -m tests.bench.bench_agents [--runs 30]    # steps per Agent and round
"""

import json
import statistics
import subprocess
import threading
import time

import psutil

from bp import locator
from tests import helpers
from tests.bench.rig import Rig, arguments

PAGE = ("<script>let n = 0;</script>" + "".join(f"<button>Filler {i}</button>" for i in range(20))
        + "<button onclick=\"document.getElementById('out').textContent = 'Count ' + (++n)\">Count</button>"
        + "<button id=out>Count 0</button>")


def step(env):
    started = time.perf_counter()
    out = subprocess.run([helpers.BP, "click", env["REF"]], env={k: v for k, v in env.items() if k != "REF"},
                         capture_output=True, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if '"ok":true' not in out.stdout:
        raise RuntimeError(out.stdout[:300] or out.stderr[:300])
    return elapsed


def service_cpu(home):
    record, _ = locator.read_locator(home)
    broker = psutil.Process(record["pid"])
    total = 0.0
    for proc in [broker, *broker.children(recursive=True)]:
        if "python" in proc.name():
            times = proc.cpu_times()
            total += times.user + times.system
    return total


def main():
    args = arguments(30)
    with Rig("agents") as rig:
        home, env = rig.home()
        url = rig.pages.page(PAGE, title="agents")
        agents = []
        for index in range(8):
            agent = dict(env, BROWSER_PILOT_CLIENT_KEY=f"bench-agent-{index}")
            subprocess.run([helpers.BP, "open", "--new", url], env=agent, stdout=subprocess.DEVNULL, check=True)
            snap = json.loads(subprocess.run([helpers.BP, "snapshot"], env=agent, capture_output=True, text=True).stdout)
            agent["REF"] = str([e["ref"] for e in snap["elements"] if e["name"] == "Count"][0])
            step(agent)  # warm
            agents.append(agent)
        print(f"bp click with its observation (a synchronous change), {args.runs} steps per Agent, one broker, "
              "each Agent on its own tab")
        print("| Agents | p50 step | p95 step | steps/s | broker + janitor CPU per step |")
        print("|---|---|---|---|---|")
        for count in (1, 4, 8):
            samples, errors = [], []
            lock = threading.Lock()

            def agent_loop(agent):
                for _ in range(args.runs):
                    try:
                        ms = step(agent)
                    except RuntimeError as exc:
                        errors.append(str(exc))
                        return
                    with lock:
                        samples.append(ms)

            cpu_before, started = service_cpu(home), time.perf_counter()
            threads = [threading.Thread(target=agent_loop, args=(agent,)) for agent in agents[:count]]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall, cpu = time.perf_counter() - started, service_cpu(home) - cpu_before
            if errors:
                print(f"| {count} | failed: {errors[0]} |")
                continue
            samples.sort()
            p95 = samples[min(len(samples) - 1, int(len(samples) * 0.95))]
            print(f"| {count} | {statistics.median(samples):.0f} ms | {p95:.0f} ms | {len(samples) / wall:.1f} | "
                  f"{cpu / len(samples) * 1000:.1f} ms |")


if __name__ == "__main__":
    main()
