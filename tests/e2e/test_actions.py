"""`bp type` on real Chromium: readback evidence, clearing, secrets, submit, and a composite
action that stops when the page changes under it."""

import os
import subprocess

from tests import helpers
from tests.helpers import bp, ref_of


FORM = """<form action="/page"><input name=title aria-label=Title value="old"><button>Go</button></form>
<div contenteditable=true aria-label=Editor><p>draft text</p></div>
<input aria-label=Controlled oninput="this.value=''">
<label for=pw>Password</label><input id=pw type=password>"""


def test_type_reads_back_what_was_typed(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "textbox", "Title")), " and new", env=connected)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert helpers.without_settle(evidence) == {"action": "type", "kind": "input", "sensitive": False, "beforeLength": 3,
                        "expectedLength": 11, "afterLength": 11, "status": "verified", "method": "keys"}
    assert [e for e in result.json["elements"] if e["name"] == "Title"][0]["value"] == "old and new"


def test_clear_empties_inputs_and_rich_editors_first(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "textbox", "Title")), "fresh", "--clear", env=connected)
    assert result.json["evidence"]["status"] == "verified", result
    assert [e for e in result.json["elements"] if e["name"] == "Title"][0]["value"] == "fresh"
    editor = ref_of(result.json, "textbox", "Editor")
    rich = bp(home, "type", str(editor), "rewritten", "--clear", env=connected)
    assert rich.json["evidence"]["kind"] == "contenteditable"
    assert rich.json["evidence"]["status"] == "verified", rich
    assert [e for e in rich.json["elements"] if e["name"] == "Editor"][0]["value"] == "rewritten"


def test_controlled_input_that_rolls_back_is_a_mismatch(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "textbox", "Controlled")), "abc", env=connected)
    assert result.json["evidence"]["status"] == "mismatch"
    assert result.json["evidence"]["reason"] == "value_mismatch"


def test_passwords_are_lengths_only_everywhere(home, connected, pages):
    secret = "correct-horse-" + os.urandom(4).hex()
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    proc = subprocess.run([helpers.BP, "type", str(ref_of(observation, "textbox", "Password")), "-"],
                          input=secret, env=connected, capture_output=True, text=True, timeout=60)
    reply = helpers.Result(proc)
    assert reply.rc == 0, reply
    assert reply.json["evidence"]["sensitive"] is True
    assert reply.json["evidence"]["afterLength"] == len(secret)
    assert reply.json["evidence"]["status"] == "verified"
    logs = os.path.join(home, "logs")
    text = "".join(open(os.path.join(logs, name), errors="replace").read() for name in os.listdir(logs))
    for where in (proc.stdout, proc.stderr, text):
        assert secret not in where


def test_submit_presses_enter_and_reports_the_navigation(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "textbox", "Title")), "Submitted", "--clear", "--submit",
                env=connected)
    assert result.rc == 0, result
    assert result.json["title"] == "Submitted"
    assert result.json["evidence"]["reason"] == "navigation"


def test_document_replaced_while_typing_stops_before_enter(home, connected, pages):
    marker = f"never-submitted-{os.path.basename(home)}"
    html = (f"<form action='/page'><input name=title aria-label=Field "
            f"oninput=\"location.href='/page?title=replaced'\"><input type=hidden name=m value={marker}></form>")
    observation = bp(home, "open", pages.page(html), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "textbox", "Field")), "x", "--submit", env=connected)
    assert result.code == "unknown_outcome", result
    context = result.json["context"]
    assert (context["action"], context["step"], context["dispatchedSteps"], context["remainingStepsStopped"]) == \
        ("type", "submit", 1, True)
    assert context["reason"] in ("loader_changed", "document_changed")
    assert any("title=replaced" in path for path, _, _ in pages.log)  # the page did replace itself
    assert not any(marker in path for path, _, _ in pages.log)  # and Enter never submitted the form


def test_typing_into_something_not_editable_is_refused_before_input(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "button", "Go")), "x", env=connected)
    assert result.code == "action_not_verified"
    assert result.json["context"]["reason"] == "not_editable"


def test_type_usage_errors(home, connected):
    assert bp(home, "type", env=connected).code == "invalid_argument"
    assert bp(home, "type", "1", env=connected).code == "invalid_argument"
    assert bp(home, "type", "x", "text", env=connected).code == "invalid_argument"
