"""bp batch on real Chromium: steps in the CLI's vocabulary run in order on the selected tab, each
with its own command record, stopping at the first failure, with one observation at the end."""

import json
import os
import subprocess

from tests import helpers
from tests.helpers import bp, ok, ref_of

FORM = """
<label>Title <input id=t aria-label=Title></label>
<label>Notes <input id=n aria-label=Notes></label>
<button onclick="document.getElementById('out').textContent = 'saved ' + t.value + '/' + n.value">Save</button>
<p id=out>nothing</p>
"""


def run_batch(home, env, steps, *args):
    path = os.path.join(home, "steps.json")
    with open(path, "w") as fh:
        fh.write(steps if isinstance(steps, str) else json.dumps(steps))
    return bp(home, *args, "batch", "--file", path, env=env)


def test_steps_run_in_order_with_one_observation_at_the_end(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    title, notes = ref_of(observation, "textbox", "Title"), ref_of(observation, "textbox", "Notes")
    save = ref_of(observation, "button", "Save")
    steps = [{"cmd": "type", "args": [title, "Poetry"]}, {"cmd": "type", "args": [str(notes), "odes", "--clear"]},
             {"cmd": "click", "args": [save]}, {"cmd": "read", "args": ["#out"]},
             {"cmd": "wait", "args": ["--text", "saved Poetry/odes"]}]
    result = run_batch(home, connected, steps)
    assert result.rc == 0, result
    reply = result.json
    assert reply["ok"] is True and reply["completed"] == 5 and "stoppedAt" not in reply
    assert [s["cmd"] for s in reply["steps"]] == ["type", "type", "click", "read", "wait"]
    assert all(s["ok"] for s in reply["steps"])
    assert reply["steps"][0]["evidence"]["action"] == "type" and reply["steps"][2]["evidence"]["action"] == "click"
    assert "saved Poetry/odes" in reply["steps"][3]["result"]["text"]
    assert "elements" not in reply["steps"][0]  # no observation per step: one at the end
    assert ref_of(reply, "button", "Save") == save and reply["url"] == observation["url"]
    assert ok(home, connected, "eval", "document.getElementById('out').textContent")["value"] == "saved Poetry/odes"
    # One command record for the batch and one per step.
    methods = [c["method"] for c in ok(home, connected, "commands", "--limit", "50")["commands"]]
    assert methods.count("browser.batch") == 1 and methods.count("browser.type") == 2
    step_record = ok(home, connected, "command", reply["steps"][2]["commandId"])
    assert step_record["command"]["method"] == "browser.click" and step_record["command"]["status"] == "completed"


def test_stdin_and_the_human_view(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    steps = json.dumps([{"cmd": "click", "args": [ref_of(observation, "button", "Save")]}])
    proc = subprocess.run([helpers.BP, "batch"], input=steps, env=connected, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc
    assert json.loads(proc.stdout)["completed"] == 1
    proc = subprocess.run([helpers.BP, "--human", "batch"], input=steps, env=connected, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "[step 0] click: click: " in proc.stdout and "[batch] 1 of 1" in proc.stdout, proc


def test_the_first_failure_stops_the_batch(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    title, save = ref_of(observation, "textbox", "Title"), ref_of(observation, "button", "Save")
    steps = [{"cmd": "type", "args": [title, "first"]}, {"cmd": "type", "args": [save, "not a field"]},
             {"cmd": "click", "args": [save]}]
    result = run_batch(home, connected, steps)
    assert result.rc == 1, result  # a stopped batch exits 1, with the whole answer on stdout
    reply = result.json
    assert reply["ok"] is True and reply["completed"] == 1 and reply["stoppedAt"] == 1 and len(reply["steps"]) == 2
    assert reply["steps"][1]["ok"] is False and reply["steps"][1]["error"]["code"] == "action_not_verified"
    assert reply["steps"][1]["error"]["context"]["reason"] == "not_editable"
    assert "elements" in reply  # the observation after the stop
    # The third step never ran: the button was not clicked.
    assert ok(home, connected, "eval", "document.getElementById('out').textContent")["value"] == "nothing"


def test_each_step_keeps_its_own_unknown_outcome_rule(home, connected, pages):
    marker = f"never-submitted-{os.path.basename(home)}"
    html = (f"<form action='/page'><input name=title aria-label=Field "
            f"oninput=\"location.href='/page?title=replaced'\"><input type=hidden name=m value={marker}></form>")
    observation = ok(home, connected, "open", pages.page(html))
    field = ref_of(observation, "textbox", "Field")
    result = run_batch(home, connected, [{"cmd": "type", "args": [field, "x", "--submit"]},
                                         {"cmd": "press", "args": ["Enter"]}])
    assert result.rc == 1, result
    step = result.json["steps"][0]
    assert result.json["stoppedAt"] == 0 and step["error"]["code"] == "unknown_outcome"
    assert step["error"]["context"]["commandId"] == step["commandId"]  # the step's own record, not the batch's
    assert ok(home, connected, "command", step["commandId"])["command"]["status"] == "unknown_outcome"
    assert not any(marker in path for path, _, _ in pages.log)


def test_a_stale_ref_fails_its_step_after_a_navigation(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    save = ref_of(observation, "button", "Save")
    result = run_batch(home, connected, [{"cmd": "open", "args": [pages.page("<button>Other</button>")]},
                                         {"cmd": "click", "args": [save]}])
    assert result.json["stoppedAt"] == 1 and result.json["steps"][1]["error"]["code"] == "stale_ref", result
    assert result.json["steps"][0]["result"]["title"] == "page" and result.json["steps"][0]["result"]["count"] == 1
    assert ref_of(result.json, "button", "Other")


def test_bad_steps_are_refused_before_anything_runs(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    save = ref_of(observation, "button", "Save")
    first = {"cmd": "click", "args": [save]}
    cases = [
        ([first, {"cmd": "frobnicate", "args": []}], "steps.1.cmd"),
        ([first, {"cmd": "click", "args": ["--nope"]}], "steps.1.args"),
        ([first, {"cmd": "type", "args": [1]}], "steps.1.args"),
        ([first, {"cmd": "status", "args": []}], "steps.1.cmd"),  # not a command on the tab
        ([first, {"cmd": "open", "args": ["--new", pages.url("/page")]}], "steps.1.args.new"),
        ([first, {"cmd": "wait", "args": []}], "steps.1.args.condition"),
        ([first, {"cmd": "type", "args": [1, "-"]}], "steps.1.args"),  # stdin is the batch itself
        ([first, {"cmd": "click", "args": [True]}], "steps.1.args"),
        ([first] * 51, "steps"),
        ([], "steps"),
        ("{not json", "steps"),
    ]
    for steps, field in cases:
        result = run_batch(home, connected, steps)
        assert result.code == "invalid_argument", (steps, result)
        assert result.json["context"]["field"] == field, (steps, result)
    assert ok(home, connected, "eval", "document.getElementById('out').textContent")["value"] == "nothing"
    assert "browser.batch" not in [c["method"] for c in ok(home, connected, "commands")["commands"]]


def test_fifty_steps_are_allowed(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    result = run_batch(home, connected, [{"cmd": "hover", "args": [ref_of(observation, "button", "Save")]}] * 50)
    assert result.rc == 0 and result.json["completed"] == 50, result


def test_the_global_timeout_bounds_the_whole_batch(home, connected, pages):
    ok(home, connected, "open", pages.page(FORM))
    steps = [{"cmd": "wait", "args": ["--text", "never shown"]}, {"cmd": "read", "args": []}]
    result = run_batch(home, connected, steps, "--timeout", "1500")
    assert result.rc == 1, result
    assert result.json["stoppedAt"] == 0 and result.json["steps"][0]["error"]["code"] == "wait_timeout"
    assert len(result.json["steps"]) == 1


def test_a_request_id_covers_the_whole_batch(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(
        FORM + "<script>window.clicks = 0; document.querySelector('button').addEventListener('click', () => clicks++)</script>"))
    steps = [{"cmd": "click", "args": [ref_of(observation, "button", "Save")]}] * 2
    first = run_batch(home, connected, steps, "--request-id", "batch-once-1")
    assert first.rc == 0 and first.json["completed"] == 2, first
    again = run_batch(home, connected, steps, "--request-id", "batch-once-1")
    assert again.rc == 0 and again.json["recovered"] is True, again
    assert again.json["commandId"] == first.json.get("commandId", again.json["commandId"])
    assert again.json["steps"] == first.json["steps"]
    assert ok(home, connected, "eval", "window.clicks")["value"] == 2  # not clicked again
    other = run_batch(home, connected, steps[:1], "--request-id", "batch-once-1")
    assert other.code == "invalid_argument" and other.json["context"]["reason"] == "request_id_reused", other


def test_cancelling_the_batch_stops_its_running_step_and_sends_no_further_one(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(FORM))
    steps = [{"cmd": "wait", "args": ["--text", "never shown"]},
             {"cmd": "click", "args": [ref_of(observation, "button", "Save")]}]
    path = os.path.join(home, "steps.json")
    with open(path, "w") as fh:
        json.dump(steps, fh)
    running = subprocess.Popen([helpers.BP, "--timeout", "30000", "batch", "--file", path], env=connected,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def active_batch():
        rows = ok(home, connected, "commands")["commands"]
        return next((r["id"] for r in rows if r["method"] == "browser.batch" and r["status"] == "accepted"), None)

    assert helpers.wait_until(lambda: active_batch() is not None, timeout=15)
    ok(home, connected, "cancel", active_batch())
    out, _ = running.communicate(timeout=30)
    reply = json.loads(out)
    # Nothing had reached the browser: the batch is certainly cancelled, and says where it stopped.
    assert reply["code"] == "command_cancelled", reply
    context = reply["context"]
    assert context["stoppedAt"] == 0 and context["steps"][0]["error"]["code"] == "command_cancelled"
    assert len(context["steps"]) == 1 and context["completed"] == 0
    assert ok(home, connected, "eval", "document.getElementById('out').textContent")["value"] == "nothing"


def test_each_step_goes_through_the_policy_check_of_its_own_op(home, env_for, pages):
    from tests.e2e.test_policy import start

    env = start(home, env_for, {"version": 1, "deny": ["developer.eval"]})
    marker = os.urandom(4).hex()
    observation = ok(home, env, "open", pages.page(FORM))
    steps = [{"cmd": "type", "args": [ref_of(observation, "textbox", "Title"), "allowed"]},
             {"cmd": "eval", "args": [f"fetch('/html?id=eval-{marker}')"]},
             {"cmd": "click", "args": [ref_of(observation, "button", "Save")]}]
    result = run_batch(home, env, steps)
    assert result.rc == 1, result
    reply = result.json
    assert reply["completed"] == 1 and reply["stoppedAt"] == 1, reply
    error = reply["steps"][1]["error"]
    assert error["code"] == "capability_denied" and error["context"]["operation"] == "eval", error
    assert not any(f"eval-{marker}" in path for path, _, _ in pages.log)  # the script never ran
    assert ok(home, env, "read", "#out")["text"].strip() == "nothing"  # the click after it neither
