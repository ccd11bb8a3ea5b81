"""Benchmark: what failing closed costs the audit journal (broker/policy/audit.py): per audited
command, the pre-dispatch check (`ready`: the file still ours, nothing pending, room on disk)
plus the append (the line, then the head record rewritten in place). No service, no browser:
the Journal on a fresh private directory, 2,000 commands per run, the median of the runs.

With --compare DIR (another tree's source, e.g. an export of main), that tree's Journal is
timed the same way, interleaved (it has no `ready`: append only). Not a test.

    .venv/bin/python -m tests.bench.bench_audit [--runs 9] [--compare /tmp/main-src]
"""

import os
import statistics
import subprocess
import sys

from tests.bench.rig import arguments

COMMANDS = 2000
PROBE = r"""
import os, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from broker.policy import audit
d = tempfile.mkdtemp(); os.chmod(d, 0o700)
j = audit.Journal(d)
ready = getattr(j, "ready", lambda: None)
t = time.perf_counter()
for n in range(int(sys.argv[2])):
    ready()
    j.append(key="k", operation="click", capability="action.input", origin="http://x", outcome="ok",
             command_id="cmd-%d" % n)
print((time.perf_counter() - t) / int(sys.argv[2]) * 1e6)
import shutil; shutil.rmtree(d)
"""


def once(tree):
    out = subprocess.run([sys.executable, "-c", PROBE, tree, str(COMMANDS)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main():
    args = arguments(runs=9, compare={"default": None})
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    trees = [("this tree", here)] + ([("compare", args.compare)] if args.compare else [])
    times = {name: [] for name, _ in trees}
    for _ in range(args.runs):
        for name, tree in trees:
            times[name].append(once(tree))
    for name, _ in trees:
        print(f"{name}: median {statistics.median(times[name]):.1f} us per audited command "
              f"(ready + append, {COMMANDS} per run, {args.runs} runs)")


if __name__ == "__main__":
    main()
