"""Benchmark: Browser Pilot side by side with agent-browser (npm `agent-browser`, its native
binary), same Chromium binary, same pages, interleaved runs, medians.

agent-browser is installed into a temporary folder with npm for this run only (never by the
product) and launches its own headless browser from the same executable (--executable-path);
Browser Pilot connects to a headless Chromium of that executable started here. Prints the
table of issue #19. Not a test:

    .venv/bin/python -m tests.bench.bench_peer [--runs 20] [--agent-browser-version 0.41.2]

If agent-browser cannot be installed or run, it says why and still prints Browser Pilot's figures.
"""

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from tests import helpers
from tests.bench.rig import Rig, arguments

PY = sys.executable
FORM = ("<form>" + "".join(f"<label>Field {i} <input name=f{i}></label>" for i in range(25))
        + "".join(f"<button type=button>Btn {i}</button>" for i in range(25)) + "</form>")
BIG = "".join(f"<button>Item {i}</button>" for i in range(10_000))
# Issue 25: a step whose answer comes from a request (400 ms), rendered as a new button: is the
# answer in the step's own observation? Each click adds "Answer N" (N counts the clicks).
FETCHING = ("<script>let n = 0; function go() { n++; const k = n; fetch('/slow?wait=0.4&group=bench')"
            ".then(r => r.text()).then(() => { const b = document.createElement('button'); b.textContent = 'Answer ' + k;"
            " document.getElementById('out').appendChild(b); }); }</script>"
            + "".join(f"<button>Filler {i}</button>" for i in range(20))
            + "<button onclick='go()'>Fetch</button><div id=out></div>")

# Issue 37: the steps Agents take, each a click whose answer renames a button ("Sync 3" after the
# third Sync click): at once, after a 40 ms timer, in a render scheduled through MessageChannel
# (React's scheduler), or not at all (Noop). Is the answer in the step's own observation?
STEPS = ("<script>const n = {}; function answer(kind) { n[kind] = (n[kind] || 0) + 1;"
         " document.getElementById(kind + '-out').textContent = kind + ' ' + n[kind]; }</script>"
         + "".join(f"<button>Filler {i}</button>" for i in range(20))
         + "<button>Noop</button>"
         + "<button onclick=\"answer('Sync')\">Sync</button><button id=Sync-out>Sync 0</button>"
         + "<button onclick=\"setTimeout(() => answer('Timer'), 40)\">Timer</button><button id=Timer-out>Timer 0</button>"
         + "<button onclick=\"const c = new MessageChannel(); c.port1.onmessage = () => answer('Render');"
           " c.port2.postMessage(0)\">Render</button><button id=Render-out>Render 0</button>")
STEP_KINDS = {"Noop": "click that changes nothing", "Sync": "synchronous DOM change",
              "Timer": "change after a 40 ms timer", "Render": "render scheduled through MessageChannel"}


PHASES = (("queue", "broker: to the tab's worker"), ("preflight", "arm + hit test"),
          ("action", "input dispatch"), ("settle", "settle"), ("evidence", "evidence"),
          ("observation", "observation"), ("reply", "reply"), ("encode_send", "encode + send"))


def broker_phases(home, since):
    """The broker's phase lines (broker/records/phases.py) written since line `since`: (lines, count)."""
    try:
        with open(os.path.join(home, "logs", "phases.jsonl"), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return [], since
    return [json.loads(line) for line in lines[since:]], len(lines)


def client_floor(env, runs):
    """Medians (ms) of the interpreter alone and of the CLI's imports and planning of a click."""
    bare, planned = [], []
    code = "import sys; sys.argv = ['bp', 'click', '1']; from cli import fast; fast.plan(sys.argv[1:])"
    for _ in range(runs):  # from "/": the source tree in the current folder would shadow the installed CLI
        bare.append(run([PY, "-c", "pass"], env, cwd="/")[0])
        planned.append(run([PY, "-c", code], env, cwd="/")[0])
    return statistics.median(bare), statistics.median(planned) - statistics.median(bare)


def run(args, env, capture=False, cwd=None):
    started = time.perf_counter()
    out = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, cwd=cwd)
    return (time.perf_counter() - started) * 1000, (out.stdout if capture else None)


class AgentBrowser:
    """agent-browser from npm in a temporary folder, with its own HOME and one session."""

    def __init__(self, version, chromium):
        if not shutil.which("npm"):
            raise RuntimeError("npm is not installed")
        self.root = tempfile.mkdtemp(prefix="bp-peer-")
        install = subprocess.run(["npm", "install", "--prefix", self.root, "--no-audit", "--no-fund",
                                  f"agent-browser@{version}"], capture_output=True, text=True, timeout=600)
        if install.returncode != 0:
            raise RuntimeError(f"npm install agent-browser@{version} failed: {install.stderr.strip()[-300:]}")
        machine = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
        self.bin = os.path.join(self.root, "node_modules", "agent-browser", "bin", f"agent-browser-linux-{machine}")
        if not os.path.exists(self.bin):
            raise RuntimeError(f"the package has no native binary for linux-{machine}")
        os.chmod(self.bin, 0o755)
        home = os.path.join(self.root, "home")
        os.makedirs(home)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
                    "AGENT_BROWSER_EXECUTABLE_PATH": chromium}
        self.args = ["--args", "--no-sandbox"] if os.geteuid() == 0 else []
        self.version = subprocess.run([self.bin, "--version"], capture_output=True, text=True).stdout.strip()

    def __call__(self, session, *args, capture=False):
        """One command in `session` (each session has a browser of its own, with one page)."""
        return run([self.bin, "--session", session, *self.args, *args], self.env, capture)

    def ref(self, session, name):
        _, out = self(session, "snapshot", "-i", capture=True)
        found = re.search(rf'"{re.escape(name)}" \[ref=(e[0-9]+)\]', out or "")
        if not found:
            raise RuntimeError(f"agent-browser's snapshot has no {name!r}: {(out or '')[:300]!r}")
        return "@" + found.group(1)

    def http_port(self, session):
        _, out = self(session, "get", "cdp-url", capture=True)
        found = re.search(r"127\.0\.0\.1:([0-9]+)|localhost:([0-9]+)", out or "")
        return int(found.group(1) or found.group(2)) if found else None

    def close(self):
        run([self.bin, "close", "--all"], self.env)
        shutil.rmtree(self.root, ignore_errors=True)


FRONT_SETTLE_S = 0.3


def tab_in_front(port, url="about:blank"):
    """Open a tab in front of the one being driven (DevTools HTTP API of that browser), and let
    the browser finish starting it (FRONT_SETTLE_S): on 2 cores, the new tab's renderer start-up
    competes with the step for the CPU (agent-browser's step doubled with it), which is not the
    cost of driving a tab in the background."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{url}", method="PUT")
    with urllib.request.urlopen(request, timeout=10) as resp:
        target = json.loads(resp.read())["id"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/activate/{target}", timeout=10) as resp:
        resp.read()
    time.sleep(FRONT_SETTLE_S)
    return target


def to_front(port, url_end):
    """Make the tab whose URL ends so the active tab of its window (DevTools HTTP API, untimed):
    the peer drives the page in front of its window; Browser Pilot opens its tabs behind the
    Pilot window's first, where Chromium draws ~1 frame a second after input (docs/step-budget.md)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
        target = [t["id"] for t in json.loads(resp.read()) if t.get("url", "").endswith(url_end)][0]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/activate/{target}", timeout=10) as resp:
        resp.read()


def bp_ref(env, name, *args):
    out = json.loads(subprocess.run([helpers.BP, "snapshot", *args], env=env, capture_output=True, text=True).stdout)
    return str([e["ref"] for e in out["elements"] if e["name"] == name][0])


def main():
    args = arguments(20, agent_browser_version={"default": "0.41.2"},
                     as_launched={"action": "store_true", "help": "the browser as `bp launch` starts it (its flags: Chromium "
                                  "does not hold the page's tasks after input), not as a person's"})
    chromium_path = helpers.chromium_path()
    extra = ["--disable-features=DeferRendererTasksAfterInput"] if args.as_launched else []
    with Rig("peer", extra_args=extra) as rig:
        chromium, pages = rig.chromium, rig.pages
        home, env = rig.home(connect=False)
        env = dict(env, BROWSER_PILOT_PHASES="1")  # the broker writes each command's phases
        form, big = pages.page(FORM, title="form50"), pages.page(BIG, title="big10k")
        fetching = pages.page(FETCHING, title="fetching")
        steps_page = pages.page(STEPS, title="steps")
        peer = None
        try:
            try:
                peer = AgentBrowser(args.agent_browser_version, chromium_path)
                peer("form", "open", form)
                peer("big", "open", big)
                peer("fetching", "open", fetching)
                peer("steps", "open", steps_page)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                print(f"agent-browser not measured: {exc}")
                peer = None
            subprocess.run([helpers.BP, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
            subprocess.run([helpers.BP, "open", "--new", big], env=env, stdout=subprocess.DEVNULL, check=True)
            subprocess.run([helpers.BP, "open", "--new", fetching], env=env, stdout=subprocess.DEVNULL, check=True)
            bp_fetch = bp_ref(env, "Fetch")
            subprocess.run([helpers.BP, "open", "--new", steps_page], env=env, stdout=subprocess.DEVNULL, check=True)
            bp_steps = {kind: bp_ref(env, kind) for kind in STEP_KINDS}
            subprocess.run([helpers.BP, "open", "--new", form], env=env, stdout=subprocess.DEVNULL, check=True)
            tabs = json.loads(subprocess.run([helpers.BP, "tabs"], env=env, capture_output=True, text=True).stdout)["tabs"]
            form_tab = str([t["index"] for t in tabs if t["url"].endswith("title=form50")][0])
            big_tab = str([t["index"] for t in tabs if t["url"].endswith("title=big10k")][0])
            fetch_tab = str([t["index"] for t in tabs if t["url"].endswith("title=fetching")][0])
            steps_tab = str([t["index"] for t in tabs if t["url"].endswith("title=steps")][0])
            step_clicks = {side: {kind: 0 for kind in STEP_KINDS} for side in ("peer", "bp")}
            step_shown = {side: {kind: 0 for kind in STEP_KINDS} for side in ("peer", "bp")}
            behind_clicks = {"peer": 0, "bp": 0}  # Sync clicks of the background row (the page counts them)
            step_rows = {kind: {"peer": [], "bp": []} for kind in STEP_KINDS}
            step_phases = {kind: [] for kind in STEP_KINDS}  # the broker's phases of each counted step
            _, phase_lines = broker_phases(home, 0)
            answered = {"peer": 0, "bp": 0}  # fetch-caused steps whose own observation shows the answer
            clicks = {"peer": 0, "bp": 0}
            bp_button = bp_ref(env, "Btn 3")
            rows = {name: {"peer": [], "bp": []} for name in (
                "Agent step: click + fresh observation, 50-element page", "snapshot, 50-element form",
                "the same step with another tab in front", "synchronous DOM change with another tab in front",
                "snapshot, 10,000 elements, all listed",
                "the same at the default limit", "bp status / python -I -c 'import json'",
                "fetch-caused step: click + observation (answer after 400 ms)")}
            for index in range(args.runs + 1):  # the first round warms up and is not counted
                sample = {}
                if peer:
                    ref = peer.ref("form", "Btn 3")
                    click, _ = peer("form", "click", ref)
                    observe, _ = peer("form", "snapshot", "-i")
                    sample[("Agent step: click + fresh observation, 50-element page", "peer")] = click + observe
                    sample[("snapshot, 50-element form", "peer")] = peer("form", "snapshot", "-i")[0]
                subprocess.run([helpers.BP, "tab", form_tab], env=env, stdout=subprocess.DEVNULL)
                to_front(chromium.port, "title=form50")
                sample[("Agent step: click + fresh observation, 50-element page", "bp")] = run(
                    [helpers.BP, "click", bp_button], env)[0]
                sample[("snapshot, 50-element form", "bp")] = run([helpers.BP, "snapshot"], env)[0]
                sample[("bp status / python -I -c 'import json'", "bp")] = run([helpers.BP, "status"], env)[0]
                sample[("bp status / python -I -c 'import json'", "peer")] = run([PY, "-I", "-c", "import json"], env)[0]
                front = tab_in_front(chromium.port)
                sample[("the same step with another tab in front", "bp")] = run([helpers.BP, "click", bp_button], env)[0]
                chromium.close_tab(front)
                if peer:
                    port = peer.http_port("form")
                    if port:
                        ref = peer.ref("form", "Btn 3")
                        front = tab_in_front(port)
                        click, _ = peer("form", "click", ref)
                        observe, _ = peer("form", "snapshot", "-i")
                        sample[("the same step with another tab in front", "peer")] = click + observe
                        urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{front}", timeout=10).read()
                    sample[("snapshot, 10,000 elements, all listed", "peer")] = peer("big", "snapshot", "-i")[0]
                for kind in STEP_KINDS:
                    if peer:
                        ref = peer.ref("steps", kind)
                        click, _ = peer("steps", "click", ref)
                        observe, out = peer("steps", "snapshot", "-i", capture=True)
                        step_clicks["peer"][kind] += kind != "Noop"
                        step_shown["peer"][kind] += f'"{kind} {step_clicks["peer"][kind] + behind_clicks["peer"] * (kind == "Sync")}"' in (out or "")
                        if index:
                            step_rows[kind]["peer"].append(click + observe)
                    subprocess.run([helpers.BP, "tab", steps_tab], env=env, stdout=subprocess.DEVNULL)
                    to_front(chromium.port, "title=steps")
                    _, phase_lines = broker_phases(home, phase_lines)
                    ms, out = run([helpers.BP, "click", bp_steps[kind]], env, capture=True)
                    step_clicks["bp"][kind] += kind != "Noop"
                    step_shown["bp"][kind] += f'"{kind} {step_clicks["bp"][kind] + behind_clicks["bp"] * (kind == "Sync")}"' in (out or "")
                    lines, phase_lines = broker_phases(home, phase_lines)
                    if index:
                        step_rows[kind]["bp"].append(ms)
                        step_phases[kind] += [dict(line, wall=ms) for line in lines if line["op"] == "click"]
                behind = "synchronous DOM change with another tab in front"
                front = tab_in_front(chromium.port)
                subprocess.run([helpers.BP, "tab", steps_tab], env=env, stdout=subprocess.DEVNULL)
                sample[(behind, "bp")] = run([helpers.BP, "click", bp_steps["Sync"]], env)[0]
                behind_clicks["bp"] += 1
                chromium.close_tab(front)
                port = peer.http_port("steps") if peer else None
                if port:
                    ref = peer.ref("steps", "Sync")
                    front = tab_in_front(port)
                    click, _ = peer("steps", "click", ref)
                    observe, _ = peer("steps", "snapshot", "-i")
                    sample[(behind, "peer")] = click + observe
                    behind_clicks["peer"] += 1
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{front}", timeout=10).read()
                step = "fetch-caused step: click + observation (answer after 400 ms)"
                if peer:
                    ref = peer.ref("fetching", "Fetch")
                    click, _ = peer("fetching", "click", ref)
                    observe, out = peer("fetching", "snapshot", "-i", capture=True)
                    sample[(step, "peer")] = click + observe
                    clicks["peer"] += 1
                    answered["peer"] += f'"Answer {clicks["peer"]}"' in (out or "")
                subprocess.run([helpers.BP, "tab", fetch_tab], env=env, stdout=subprocess.DEVNULL)
                ms, out = run([helpers.BP, "click", bp_fetch], env, capture=True)
                sample[(step, "bp")] = ms
                clicks["bp"] += 1
                answered["bp"] += f'"Answer {clicks["bp"]}"' in (out or "")
                subprocess.run([helpers.BP, "tab", big_tab], env=env, stdout=subprocess.DEVNULL)
                sample[("snapshot, 10,000 elements, all listed", "bp")] = run([helpers.BP, "snapshot", "--limit", "10000"],
                                                                              env)[0]
                sample[("the same at the default limit", "bp")] = run([helpers.BP, "snapshot"], env)[0]
                if index:
                    for (row, side), ms in sample.items():
                        rows[row][side].append(ms)
            who = f"agent-browser {peer.version.split()[-1]} (native)" if peer else "agent-browser (not measured)"
            print(f"Medians of {args.runs} interleaved runs, same Chromium binary ({chromium_path}), pages on 127.0.0.1;"
                  + (" Browser Pilot's browser with `bp launch`'s flags" if args.as_launched
                     else " Browser Pilot's browser as a person's (no flags of ours)"))
            print(f"| step | {who} | Browser Pilot | ratio |")
            print("|---|---|---|---|")
            for row, sides in rows.items():
                ours = statistics.median(sides["bp"]) if sides["bp"] else None
                theirs = statistics.median(sides["peer"]) if sides["peer"] else None
                ratio = f"{ours / theirs:.2f}×" if ours and theirs else "—"
                left = f"{theirs:,.0f} ms" if theirs else "—"
                if row.startswith("bp status"):
                    left = f"floor {theirs:,.0f} ms" if theirs else "—"
                    ratio = f"{ours - theirs:+.0f} ms" if ours and theirs else "—"
                print(f"| {row} | {left} | {ours:,.0f} ms | {ratio} |")
            print()
            print("The steps Agents take (issue 37): bp click with its observation against the peer's click +"
                  " snapshot -i; 'shown' counts the steps whose own observation showed the answer")
            print(f"| step | {who} | Browser Pilot | ratio | shown (peer / bp) |")
            print("|---|---|---|---|---|")
            for kind, label in STEP_KINDS.items():
                ours = statistics.median(step_rows[kind]["bp"])
                theirs = statistics.median(step_rows[kind]["peer"]) if step_rows[kind]["peer"] else None
                ratio = f"{ours / theirs:.2f}×" if theirs else "—"
                shown = "—" if kind == "Noop" else (f"{step_shown['peer'][kind]}/{step_clicks['peer'][kind]} / "
                                                    f"{step_shown['bp'][kind]}/{step_clicks['bp'][kind]}")
                print(f"| {label} | {f'{theirs:,.0f} ms' if theirs else '—'} | {ours:,.0f} ms | {ratio} | {shown} |")
            interpreter, imports = client_floor(env, args.runs)
            print()
            print("Browser Pilot's step, phase by phase (medians, ms; docs/step-budget.md): the interpreter and the"
                  " CLI's imports measured alone; request = the rest of the wall time outside the broker (connect,"
                  " send, receive, print); the broker's phases from BROWSER_PILOT_PHASES=1")
            print("| step | wall | interpreter | imports + plan | request | " + " | ".join(n for _, n in PHASES)
                  + " | CDP calls | CDP wait |")
            print("|---" * (len(PHASES) + 8) + "|")
            for kind, label in STEP_KINDS.items():
                lines = step_phases[kind]
                if not lines:
                    continue
                med = {name: statistics.median(line.get(name, 0.0) for line in lines)
                       for name in [p for p, _ in PHASES] + ["total", "wall", "cdpCalls", "cdpMs"]}
                request = med["wall"] - interpreter - imports - med["total"]
                print(f"| {label} | {med['wall']:.0f} | {interpreter:.1f} | {imports:.1f} | {request:.1f} | "
                      + " | ".join(f"{med[p]:.1f}" for p, _ in PHASES) + f" | {med['cdpCalls']:.0f} | {med['cdpMs']:.1f} |")
            fg = statistics.median(rows["Agent step: click + fresh observation, 50-element page"]["bp"])
            bg = statistics.median(rows["the same step with another tab in front"]["bp"])
            print(f"Browser Pilot background-tab step / foreground step: {bg / fg:.2f}")
            snap = statistics.median(rows["snapshot, 50-element form"]["bp"])
            print(f"Browser Pilot no-op click + observation / bp snapshot: {fg / snap:.2f} (goal <= 1.2)")
            if rows["Agent step: click + fresh observation, 50-element page"]["peer"]:
                peer_step = statistics.median(rows["Agent step: click + fresh observation, 50-element page"]["peer"])
                print(f"Browser Pilot no-op step / agent-browser click + snapshot -i: {fg / peer_step:.2f} (goal <= 1.5)")
            for side, name in (("bp", "Browser Pilot"), ("peer", "agent-browser")):
                if clicks[side]:
                    print(f"{name}: the fetch-caused step's own observation showed the answer in "
                          f"{answered[side]} of {clicks[side]} runs (warm-up included)")
        finally:
            if peer:
                peer.close()


if __name__ == "__main__":
    main()
