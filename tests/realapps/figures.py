"""Closing figures of the real-app suite: tasks passed, `bp` calls and bytes of bp output read per
task. Each task's Agent leaves its counts in the test report's user_properties (they cross xdist's
worker boundary), and the session's terminal summary adds them up."""

_outcomes = {}
_costs = {}


def collect(report):
    if "tests/realapps/" not in report.nodeid.replace("\\", "/"):
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            _outcomes[report.nodeid] = "xfailed" if report.skipped else "xpassed"
        else:
            _outcomes[report.nodeid] = report.outcome
    for name, value in report.user_properties:
        if name == "realapps_cost":
            _costs[report.nodeid] = value


def summary(terminalreporter):
    if not _outcomes:
        return
    counts = {}
    for outcome in _outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    passed = [n for n, o in _outcomes.items() if o == "passed" and n in _costs]
    write = terminalreporter.write_line
    terminalreporter.section("real-app suite figures")
    write(f"tasks: {len(_outcomes)}; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if passed:
        calls = sorted(_costs[n]["calls"] for n in passed)
        read = sorted(_costs[n]["bytes"] for n in passed)
        write(f"passed tasks: bp calls per task mean {sum(calls) / len(calls):.1f}, median {calls[len(calls) // 2]}, "
              f"max {calls[-1]}; bytes of bp output read per task mean {sum(read) / len(read):,.0f}, "
              f"median {read[len(read) // 2]:,}, max {read[-1]:,}")
    for nodeid in sorted(_costs):
        cost = _costs[nodeid]
        write(f"  {_outcomes.get(nodeid, '?'):8} {cost['calls']:3} calls {cost['bytes']:8,} B  {nodeid.split('::')[-1]}")
