"""Where a command's time goes, phase by phase: for the step-budget benchmark, off by default.

With BROWSER_PILOT_PHASES=1 in the broker's environment, each recorded command writes one JSON
line to `<home>/logs/phases.jsonl` when its reply has gone out: the milliseconds between its
marks (accepted → on its tab's worker → dispatched → settle → observation → finished → sent) and
its CDP calls (how many, and the time spent waiting for them). Times and counts only, never an
argument or a value (BROWSER_PILOT_PHASES=calls adds each CDP call: method, start and wait, ms).
Off, a mark is one attribute test (`record.marks is None`).
"""

import json
import os
import threading
import time

ON = os.environ.get("BROWSER_PILOT_PHASES") in ("1", "calls")
CALLS = os.environ.get("BROWSER_PILOT_PHASES") == "calls"  # also each CDP call: method, start, ms
_lock = threading.Lock()

# The marks a command can pass, in order, and the phase that ends at each.
PHASES = (("worker", "queue"), ("dispatched", "preflight"), ("settle", "action"), ("settled", "settle"),
          ("observe", "evidence"), ("observed", "observation"), ("finished", "reply"), ("sent", "encode_send"))


def new_marks():
    """A new record's marks (None when off: nothing is kept)."""
    return {"accepted": time.perf_counter(), "cdpCalls": 0, "cdpMs": 0.0} if ON else None


def mark(record, name):
    """Note that `record`'s command reached `name` (the first time only)."""
    marks = getattr(record, "marks", None)
    if marks is not None and name not in marks:
        marks[name] = time.perf_counter()


def cdp(record, started, method=""):
    """Count one CDP call of `record`'s command, waited for from `started` (perf_counter) until now."""
    marks = getattr(record, "marks", None)
    if marks is not None:
        marks["cdpCalls"] += 1
        marks["cdpMs"] += (time.perf_counter() - started) * 1000
        if CALLS:
            marks.setdefault("calls", []).append(
                (method, round((started - marks["accepted"]) * 1000, 2), round((time.perf_counter() - started) * 1000, 2)))


def write(home_dir, record):
    """Append the command's line (after its reply went out)."""
    marks = getattr(record, "marks", None)
    if marks is None:
        return
    mark(record, "sent")
    line = {"op": record.op, "cdpCalls": marks["cdpCalls"], "cdpMs": round(marks["cdpMs"], 2)}
    last = marks["accepted"]
    for name, phase in PHASES:
        at = marks.get(name)
        if at is not None:
            line[phase] = round((at - last) * 1000, 2)
            last = at
    line["total"] = round((last - marks["accepted"]) * 1000, 2)
    if "calls" in marks:
        line["calls"] = marks["calls"]
    with _lock, open(os.path.join(home_dir, "logs", "phases.jsonl"), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
