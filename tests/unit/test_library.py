"""The in-page library (broker/observe/worlds.py): sent whole once per world, named after that;
a world that lost it is sent it again; every entry point and helper is in it."""

import json
import shutil
import subprocess

from broker.observe import worlds


class RecordingSession:
    """What call_in_world sends, and the answers a world would give (its library kept or not)."""

    def __init__(self, answers):
        self.scripts_sent = set()
        self.sent = []
        self.answers = list(answers)

    def call(self, method, params=None, timeout_s=None, abort=None):
        self.sent.append(params["expression"])
        return {"result": {"value": self.answers.pop(0)}}

    def dialog_open(self):
        return False


def test_the_library_crosses_once_per_world_and_is_named_after():
    session = RecordingSession([{"n": 1}, {"n": 2}, {"n": 3}])
    observe = worlds.script("observe.js")
    assert worlds.call_in_world(session, 7, observe, {"limit": 5}) == {"n": 1}
    assert worlds.library() in session.sent[0]
    assert worlds.call_in_world(session, 7, observe, {"limit": 5}) == {"n": 2}
    assert worlds.library() not in session.sent[1] and len(session.sent[1]) < 300
    # Another world (a frame, a new document) gets its own copy.
    worlds.call_in_world(session, 8, observe, {"limit": 5})
    assert worlds.library() in session.sent[2]


def test_a_world_that_lost_the_library_is_sent_it_again():
    session = RecordingSession([{"n": 1}, json.loads(worlds.MISSING), {"n": 3}])
    resolve, scroll = worlds.script("resolve.js"), worlds.script("scroll.js")
    worlds.call_in_world(session, 7, resolve, {"mode": "call"}, fn=scroll)
    # A script handed as another's argument is the library's entry too, not its text.
    assert worlds.call_in_world(session, 7, resolve, {"mode": "call"}, fn=scroll) == {"n": 3}
    assert scroll not in session.sent[1] and '["scroll.js"]' in session.sent[1]
    assert worlds.library() in session.sent[2]


def test_a_session_that_keeps_no_record_gets_the_script_whole():
    session = RecordingSession([{"n": 1}])
    session.scripts_sent = None
    source = worlds.helper("underPoint")
    worlds.call_in_world(session, 7, source, {"x": 1, "y": 2})
    assert session.sent[0].startswith(f"({source})(")


def test_every_entry_and_helper_is_in_the_library():
    # node (installed with npm by scripts/test.sh) evaluates the library's text outside a browser.
    probe = ("const L = eval(require('fs').readFileSync(0, 'utf8'));"
             "console.log(JSON.stringify([Object.keys(L), Object.keys(L['helpers.js'])]))")
    out = subprocess.run([shutil.which("node") or "node", "-e", probe], input=worlds.library(), capture_output=True, text=True, check=True)
    entries, helpers = json.loads(out.stdout)
    assert entries == [*worlds.LIBRARY_ENTRIES, "helpers.js"]
    assert {"underPoint", "fill", "readValue", "slider", "markListeners", "slotsOf", "bySelector",
            "onSlot"} <= set(helpers)
