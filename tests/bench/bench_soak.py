"""Soak benchmark: thousands of calls from several Agents against one broker, printing per
block of 500 calls the broker's and the janitor's RSS and the p50/p95 latency, so memory growth
or slowdown over time shows. Not a test (no assertions on speed).

    .venv/bin/python -m tests.bench.bench_soak [--calls 4000] [--agents 3] [--cli]

By default each call is the CLI's own round trip (cli.client.exchange: one REQ socket, the
same request bytes `bp` sends) without starting a process per call; --cli runs the real `bp`
executable for every call instead (slower; adds process start-up to every figure).
"""

import argparse
import json
import statistics
import subprocess
import time

import psutil

from bp import protocol
from cli import client
from tests import helpers
from tests.bench.rig import Rig

PAGE = ("<title>soak</title><h1>Soak</h1>" + "".join(f"<button onclick='this.textContent+=1'>B{i}</button>" for i in range(20))
        + "<input aria-label=Field><p id=out>text</p>")
BLOCK = 500


def mix(url):
    """The calls one Agent makes, in rotation: observation, actions, reads, bookkeeping."""
    return [
        (protocol.OP_SNAPSHOT, {}, ["snapshot"]),
        (protocol.OP_CLICK, {"ref": 1}, ["click", "1"]),
        (protocol.OP_STATUS, {}, ["status"]),
        (protocol.OP_TABS, {}, ["tabs"]),
        (protocol.OP_EVAL, {"expression": "document.title"}, ["eval", "document.title"]),
        (protocol.OP_READ, {}, ["read"]),
        (protocol.OP_COMMANDS, {}, ["commands"]),
        (protocol.OP_OPEN, {"url": url}, ["open", url]),
    ]


def rss_mb(proc):
    try:
        return proc.memory_info().rss / 2**20
    except psutil.Error:
        return float("nan")


def call_inprocess(home, key, op, args):
    _, payload = protocol.encode_request(op, key, args, timeout_ms=30_000)
    reply = client.exchange(home, payload, 33_000, interruptible=False)
    return reply is not None and reply.get("ok")


def call_cli(env, key, argv):
    result = subprocess.run([helpers.BP, "--client-key", key, *argv], env=env, capture_output=True, text=True)
    return result.returncode == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="run the real bp executable for every call")
    args = parser.parse_args()
    keys = [f"soak-agent-{i}" for i in range(args.agents)]
    with Rig("soak") as rig:
        home, env = rig.home(connect=False)
        chromium, pages = rig.chromium, rig.pages
        try:
            _soak(args, home, env, chromium, pages, keys)
        finally:
            for key in keys:
                subprocess.run([helpers.BP, "--client-key", key, "disconnect"], env=env, stdout=subprocess.DEVNULL)


def _soak(args, home, env, chromium, pages, keys):
    failures = 0
    url = pages.page(PAGE, title="soak")
    for key in keys:
        subprocess.run([helpers.BP, "--client-key", key, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
        subprocess.run([helpers.BP, "--client-key", key, "open", url], env=env, stdout=subprocess.DEVNULL, check=True)
    status = json.loads(subprocess.run([helpers.BP, "status"], env=env, capture_output=True, text=True).stdout)
    roles = {p["role"]: psutil.Process(p["pid"]) for p in status["processes"]}
    broker, janitor = roles["broker"], roles["janitor"]
    calls = mix(url)
    print(f"soak: {args.calls} calls, {args.agents} Agents, {'bp executable' if args.cli else 'in-process round trips'}")
    print(f"start: broker RSS {rss_mb(broker):.1f} MB, janitor RSS {rss_mb(janitor):.1f} MB, "
          f"tabs {len(chromium.pages())}")
    print(f"{'calls':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'fail':>5} {'broker MB':>10} {'janitor MB':>11}")
    block = []
    block_failures = 0
    for n in range(1, args.calls + 1):
        key = keys[n % len(keys)]
        op, op_args, argv = calls[(n // len(keys)) % len(calls)]
        started = time.perf_counter()
        ok = call_cli(env, key, argv) if args.cli else call_inprocess(home, key, op, op_args)
        block.append((time.perf_counter() - started) * 1000)
        block_failures += not ok
        if n % BLOCK == 0 or n == args.calls:
            cuts = statistics.quantiles(block, n=20)
            print(f"{n:>7} {statistics.median(block):>8.1f} {cuts[18]:>8.1f} {max(block):>8.1f} {block_failures:>5} "
                  f"{rss_mb(broker):>10.1f} {rss_mb(janitor):>11.1f}", flush=True)
            failures += block_failures
            block, block_failures = [], 0
    print(f"end: {failures} failed calls; tabs {len(chromium.pages())}; "
          f"broker {'alive' if broker.is_running() else 'GONE'}, janitor {'alive' if janitor.is_running() else 'GONE'}")


if __name__ == "__main__":
    main()
