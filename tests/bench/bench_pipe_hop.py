"""Benchmark: what the pipe holder's hop costs one CDP round trip.

The same Chromium binary, reached two ways from this process: a `bp launch` browser through its
owner-only socket (holder -> --remote-debugging-pipe) and the test rig's Chromium over its
DevTools WebSocket (what the janitor used before). Interleaved; medians. Not a test:

    .venv/bin/python -m tests.bench.bench_pipe_hop [--runs 200]
"""

import os
import shutil
import statistics
import subprocess
import time

from bp.pytest_plugin import DevTools
from tests import helpers
from tests.bench.rig import arguments

SIZES = {"tiny reply": "1", "1 MB reply": "'x'.repeat(1 << 20)", "8 MB reply": "'x'.repeat(8 << 20)"}


class Socketed:
    """The pipe holder's socket, answering as DevTools does: the call's result."""

    def __init__(self, cdp):
        self.cdp = cdp
        self.next_id = 10

    def call(self, method, params=None, session_id=None):
        self.next_id += 1
        return self.cdp.call(method, params, session_id=session_id, call_id=self.next_id)["result"]


def page_session(client):
    target = client.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    return client.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]


def main():
    args = arguments(200)
    from bp import discovery
    from janitor.unix_cdp import UnixCdp

    chromium = helpers.Chromium(helpers.short_tmpdir("bpc-hop-"))
    home = helpers.short_tmpdir("bph-hop-")
    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    subprocess.run([helpers.BP, "launch", "--headless"], env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        port, path = open(os.path.join(chromium.root, "DevToolsActivePort")).read().split()
        clients = {"pipe holder socket": Socketed(UnixCdp(discovery.launched_socket(home), 30)),
                   "DevTools WebSocket": DevTools(f"ws://127.0.0.1:{port}{path}", timeout=30)}
        sessions = {name: page_session(client) for name, client in clients.items()}
        samples = {}
        for _ in range(args.runs):
            for label, expression in SIZES.items():
                if label == "8 MB reply" and len(samples.get(f"{label}, pipe holder socket", [])) >= args.runs // 10:
                    continue
                for name, client in clients.items():
                    started = time.perf_counter()
                    reply = client.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                        session_id=sessions[name])
                    samples.setdefault(f"{label}, {name}", []).append((time.perf_counter() - started) * 1000)
                    assert "result" in reply, reply  # Runtime.evaluate's own result
        print(f"One Runtime.evaluate round trip (load average {os.getloadavg()[0]:.1f}):")
        for key, values in samples.items():
            print(f"  {key:<36} median {statistics.median(values):8.2f} ms  (n={len(values)})")
    finally:
        subprocess.run([helpers.BP, "launch", "--stop"], env=env, stdout=subprocess.DEVNULL)
        chromium.stop()
        shutil.rmtree(chromium.root, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
