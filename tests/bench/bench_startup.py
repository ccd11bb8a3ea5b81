"""Benchmark: CLI start-up against its import floor, the cold connect, and crash cleanup.

Prints medians of many runs, measured side by side in one run (the machine is shared and noisy).
Not a test: run it with the venv's own interpreter,

    .venv/bin/python -m tests.bench.bench_startup [--runs 30]
"""

import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

from tests import helpers
from tests.bench.rig import arguments

PY = sys.executable


def timed(args, env=None):
    started = time.perf_counter()
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                   check=False)
    return (time.perf_counter() - started) * 1000


def median_table(rows):
    width = max(len(name) for name in rows)
    for name, samples in rows.items():
        print(f"  {name:<{width}}  median {statistics.median(samples):7.1f} ms   "
              f"p10 {sorted(samples)[len(samples) // 10]:7.1f}   p90 {sorted(samples)[len(samples) * 9 // 10]:7.1f}   "
              f"(n={len(samples)})")


def bench_hot_path(env, runs):
    cases = {
        "python -I -S -c pass": [PY, "-I", "-S", "-c", "pass"],
        "python -c 'import click, zmq'": [PY, "-c", "import click, zmq"],
        "bp status (running broker)": [helpers.BP, "status"],
        "bp --client-key other-agent status": [helpers.BP, "--client-key", "other-agent", "status"],
    }
    samples = {name: [] for name in cases}
    for _ in range(3):  # warm the page cache
        for args in cases.values():
            timed(args, env)
    for _ in range(runs):  # interleaved, so drift hits every case alike
        for name, args in cases.items():
            samples[name].append(timed(args, env))
    print("Hot path (interleaved):")
    median_table(samples)
    floor = statistics.median(samples["python -c 'import click, zmq'"])
    status = statistics.median(samples["bp status (running broker)"])
    print(f"  => bp status is {status - floor:+.1f} ms over the click+zmq import floor")


def bench_cold_connect(home, env, runs):
    samples = []
    for _ in range(runs):
        helpers.stop_brokers(home)
        samples.append(timed([helpers.BP, "connect"], env))
    print("Cold path: first 'bp connect' (broker + janitor start + CDP handshake + managed tab):")
    median_table({"bp connect (no broker running)": samples})
    warm = [timed([helpers.BP, "connect"], env) for _ in range(runs)]
    median_table({"bp connect (already connected)": warm})


def bench_crash_cleanup(home, env, chromium, runs, tabs=20):
    samples = []
    for _ in range(runs):
        helpers.stop_brokers(home)
        before = set(chromium.pages())
        for i in range(tabs):
            subprocess.run([helpers.BP, "--client-key", f"bench-agent-{i:02d}", "connect"], env=env,
                           stdout=subprocess.DEVNULL, check=True)
        managed = set(chromium.pages()) - before
        assert len(managed) == tabs, len(managed)
        started = time.perf_counter()
        os.kill(helpers.broker_pid(home), signal.SIGKILL)
        while managed & set(chromium.pages()):
            time.sleep(0.005)
        samples.append((time.perf_counter() - started) * 1000)
    print(f"Crash cleanup: SIGKILL of the broker -> {tabs} managed tabs gone (polled via /json/list):")
    median_table({f"{tabs} managed tabs closed": samples})


def bench_tabs(home, env, chromium, runs, tab_count=50):
    created = [chromium.new_user_tab() for _ in range(tab_count)]
    try:
        cases = {"bp status": [helpers.BP, "status"], f"bp tabs ({tab_count}+ tabs)": [helpers.BP, "tabs"]}
        samples = {name: [] for name in cases}
        for _ in range(runs):
            for name, args in cases.items():
                samples[name].append(timed(args, env))
        print("Inventory (interleaved):")
        median_table(samples)
    finally:
        for target in created:
            chromium.close_tab(target)


def bench_memory(home, env, keys=10, tabs_per_key=5):
    for k in range(keys):
        key = f"mem-agent-{k:02d}"
        subprocess.run([helpers.BP, "--client-key", key, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
        for _ in range(tabs_per_key - 1):
            subprocess.run([helpers.BP, "--client-key", key, "open", "--new", "about:blank"], env=env,
                           stdout=subprocess.DEVNULL, check=True)
    import json

    status = json.loads(subprocess.run([helpers.BP, "status"], env=env, capture_output=True, text=True).stdout)
    for proc in status["processes"]:
        print(f"Memory with {keys} keys x {tabs_per_key} tabs: {proc['role']} RSS {proc['rssBytes'] / 1048576:.1f} MiB")


def main():
    args = arguments(30)
    chromium = helpers.Chromium(helpers.short_tmpdir("bpc-bench-"))
    home = helpers.short_tmpdir("bph-bench-")
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=chromium.root)
    try:
        print(f"python: {PY}  cores: {os.cpu_count()}")
        subprocess.run([helpers.BP, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
        bench_hot_path(env, args.runs)
        bench_cold_connect(home, env, max(10, args.runs // 3))
        bench_crash_cleanup(home, env, chromium, max(10, args.runs // 3))
        subprocess.run([helpers.BP, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
        bench_tabs(home, env, chromium, args.runs)
        helpers.stop_brokers(home)
        bench_memory(home, env)
    finally:
        helpers.stop_brokers(home)
        chromium.stop()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(chromium.root, ignore_errors=True)


if __name__ == "__main__":
    main()
