"""A trace as one self-contained HTML file a person opens in any browser.

No network and no external asset: the style and the one script are inline, thumbnails are
data: URIs, and a Content-Security-Policy allows nothing else (images only from data:, the
script only by its own SHA-256, so page text that slipped through escaping could not run).
Every string from a page or an Agent is HTML-escaped. Without JavaScript the timeline still
reads; the script only adds the filters (by command, by outcome) and enlarging a thumbnail.
"""

import base64
import hashlib
import html
import json
import time

OUTCOMES = (("ok", "ok"), ("mismatch", "mismatch"), ("failed", "failed"), ("unknown_outcome", "unknown outcome"),
            ("problem", "failed or unknown outcome"))
MARKS = {"ok": ("✓", "succeeded"), "mismatch": ("≠", "succeeded, but the evidence is a mismatch"),
         "failed": ("✗", "failed"), "unknown_outcome": ("?", "unknown outcome: it may or may not have happened")}

STYLE = """
:root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --unknown: #bf8700; --mis: #8250df;
        --line: #d0d7de; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; padding: 0 1.5rem 3rem; }
header { position: sticky; top: 0; background: Canvas; border-bottom: 1px solid var(--line); padding: .8rem 0; z-index: 1; }
h1 { font-size: 1.25rem; margin: 0 0 .3rem; }
.meta { color: var(--muted); margin: 0 0 .5rem; }
.filters label { margin-right: 1rem; }
ol#steps { list-style: none; padding: 0; margin: 1rem 0 0; }
li.step { display: grid; grid-template-columns: 2.2rem 1fr auto; gap: .8rem; padding: .7rem .6rem;
          border: 1px solid var(--line); border-left-width: 6px; border-radius: 6px; margin-bottom: .6rem; }
li.step[hidden] { display: none !important; }
li.outcome-ok { border-left-color: var(--ok); }
li.outcome-mismatch { border-left-color: var(--mis); }
li.outcome-failed { border-left-color: var(--bad); background: rgba(207, 34, 46, .06); }
li.outcome-unknown_outcome { border-left-color: var(--unknown); background: rgba(191, 135, 0, .08); }
.mark { font-size: 1.4rem; font-weight: 700; text-align: center; }
.outcome-ok .mark { color: var(--ok); } .outcome-failed .mark { color: var(--bad); }
.outcome-unknown_outcome .mark { color: var(--unknown); } .outcome-mismatch .mark { color: var(--mis); }
.line { display: flex; flex-wrap: wrap; gap: .6rem; align-items: baseline; }
.seq { color: var(--muted); } .dur, time { color: var(--muted); font-size: .9em; }
code.cmd { font-size: 1em; word-break: break-all; }
.badge { border-radius: 1em; padding: 0 .6em; font-size: .85em; border: 1px solid currentColor; }
.outcome-failed .badge { color: var(--bad); } .outcome-unknown_outcome .badge { color: var(--unknown); }
.outcome-ok .badge { color: var(--ok); } .outcome-mismatch .badge { color: var(--mis); }
.where { color: var(--muted); word-break: break-all; margin-top: .2rem; }
.message { margin: .3rem 0 0; }
details { margin-top: .3rem; } summary { cursor: pointer; color: var(--muted); }
pre { margin: .3rem 0 0; padding: .5rem; background: rgba(127, 127, 127, .1); border-radius: 4px;
      overflow: auto; max-height: 24rem; font-size: .85em; }
img.thumb { width: 200px; height: auto; border: 1px solid var(--line); border-radius: 4px; cursor: zoom-in; }
img.thumb.zoom { width: min(100%, 800px); cursor: zoom-out; }
li.step:has(img.thumb.zoom) { grid-template-columns: 2.2rem 1fr; }
li.step:has(img.thumb.zoom) img.thumb { grid-column: 1 / -1; justify-self: center; }
.noimage { color: var(--muted); font-size: .85em; width: 200px; text-align: center; }
"""

SCRIPT = """(function () {
  var command = document.getElementById("filter-command");
  var outcome = document.getElementById("filter-outcome");
  var shown = document.getElementById("shown");
  function matches(step) {
    var o = step.getAttribute("data-outcome");
    if (command.value && step.getAttribute("data-command") !== command.value) return false;
    if (!outcome.value) return true;
    if (outcome.value === "problem") return o === "failed" || o === "unknown_outcome";
    return o === outcome.value;
  }
  function apply() {
    var steps = document.querySelectorAll("#steps > li.step"), n = 0;
    for (var i = 0; i < steps.length; i++) {
      var keep = matches(steps[i]);
      steps[i].hidden = !keep;
      if (keep) n++;
    }
    shown.textContent = n + " of " + steps.length + " steps shown";
  }
  command.addEventListener("change", apply);
  outcome.addEventListener("change", apply);
  document.getElementById("steps").addEventListener("click", function (event) {
    var t = event.target;
    if (t && t.classList && t.classList.contains("thumb")) t.classList.toggle("zoom");
  });
  apply();
})();"""


def _e(value):
    return html.escape(str(value), quote=True)


def _when(ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) + f".{int(ms) % 1000:03d}Z"


def _command_line(step):
    words = ["bp", step["op"].replace(".", " ")]
    for key, value in (step.get("args") or {}).items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        words.append(f"{key}={shown}")
    return " ".join(words)


def _pre(label, value, open_=False):
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
    return (f'<details class="{_e(label)}"{" open" if open_ else ""}><summary>{_e(label)}</summary>'
            f"<pre>{_e(text)}</pre></details>")


def _step(step, image):
    outcome = step["outcome"]
    mark, mark_title = MARKS.get(outcome, ("•", outcome))
    badge = step.get("code") or ("mismatch" if outcome == "mismatch" else "ok")
    parts = [f'<li class="step outcome-{_e(outcome)}" id="step-{step["seq"]}" data-seq="{step["seq"]}" '
             f'data-command="{_e(step["op"])}" data-outcome="{_e(outcome)}">',
             f'<div class="mark" title="{_e(mark_title)}" aria-label="{_e(mark_title)}">{mark}</div>',
             '<div class="body"><div class="line">',
             f'<span class="seq">#{step["seq"]}</span>',
             f'<code class="cmd">{_e(_command_line(step))}</code>',
             f'<span class="badge">{_e(badge)}</span>',
             f'<span class="dur">{step.get("durationMs", 0):.0f} ms</span>',
             f'<time>{_e(_when(step.get("startedAt", 0)))}</time></div>']
    if step.get("title") or step.get("url"):
        parts.append(f'<div class="where"><span class="title">{_e(step.get("title", ""))}</span>'
                     f'{" · " if step.get("title") and step.get("url") else ""}'
                     f'<span class="url">{_e(step.get("url", ""))}</span></div>')
    if step.get("message"):
        parts.append(f'<p class="message">{_e(step["message"])}</p>')
    notes = []
    if step.get("hints"):
        notes.append("hints: " + ", ".join(step["hints"]))
    if step.get("dialog"):
        notes.append(f"dialog opened: {step['dialog']}")
    if step.get("counts"):
        notes.append(", ".join(f"{k}: {v}" for k, v in step["counts"].items()))
    if notes:
        parts.append(f'<p class="message notes">{_e(" · ".join(notes))}</p>')
    if "evidence" in step:
        parts.append(_pre("evidence", step["evidence"], open_=outcome != "ok"))
    if "settle" in step:
        parts.append(_pre("settle", step["settle"]))
    if "context" in step:
        parts.append(_pre("context", step["context"], open_=True))
    if "batch" in step:
        parts.append(_pre("batch steps", step["batch"]))
    parts.append("</div>")
    if isinstance(image, bytes):
        data = base64.b64encode(image).decode("ascii")
        took = f' data-image-ms="{step["imageMs"]}"' if "imageMs" in step else ""
        parts.append(f'<img class="thumb" src="data:image/jpeg;base64,{data}" alt="The tab after step {step["seq"]}" '
                     f'title="click to enlarge"{took}>')
    elif image:
        parts.append(f'<div class="noimage">no image: {_e(image)}</div>')
    else:
        parts.append("<div></div>")
    parts.append("</li>")
    return "".join(parts)


def render(meta, steps, images):
    """The HTML bytes. meta: {key, startedAt, recording, screenshots, dropped, imagesDropped};
    steps: the trace's step dicts, oldest first; images: seq -> JPEG bytes or a note."""
    failed = sum(1 for s in steps if s["outcome"] == "failed")
    unknown = sum(1 for s in steps if s["outcome"] == "unknown_outcome")
    commands = sorted({s["op"] for s in steps})
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; "
           "base-uri 'none'; form-action 'none'")
    summary = [f"{len(steps)} steps", f"{failed} failed", f"{unknown} unknown outcome",
               f"started {_when(meta['startedAt'])}", f"Agent key {meta['key']}"]
    if meta.get("dropped"):
        summary.append(f"{meta['dropped']} older steps dropped (bounded trace)")
    if meta.get("recording"):
        summary.append("still recording when exported")
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<meta name="referrer" content="no-referrer">',
           f"<title>Browser Pilot trace: {len(steps)} steps</title>", f"<style>{STYLE}</style></head><body>",
           "<header><h1>Browser Pilot trace</h1>", f'<p class="meta" id="summary">{_e(" · ".join(summary))}</p>',
           '<div class="filters"><label>Command <select id="filter-command"><option value="">all</option>']
    out += [f'<option value="{_e(c)}">{_e(c)}</option>' for c in commands]
    out.append('</select></label><label>Outcome <select id="filter-outcome"><option value="">all</option>')
    out += [f'<option value="{_e(v)}">{_e(label)}</option>' for v, label in OUTCOMES]
    out.append(f'</select></label><span id="shown">{len(steps)} of {len(steps)} steps shown</span></div></header>')
    out.append('<ol id="steps">')
    out += [_step(step, images.get(step["seq"])) for step in steps]
    out.append("</ol>")
    if not steps:
        out.append('<p class="meta">No command was recorded.</p>')
    out.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(out).encode("utf-8", "replace")
