"""Code and rich-text editors as one textbox each: CodeMirror 5 (a hidden textarea, as in
Datasette's SQL box), Ace (likewise) and Quill (contenteditable), the real libraries' built JS installed from npm
at pinned versions when this module sets up. `type --clear` replaces the whole content, checked
against the editor's own model (its instance's value), never against Browser Pilot's word."""

import os
import shutil
import subprocess

import pytest

from tests.helpers import bp

PACKAGES = ("codemirror@5.65.18", "quill@2.0.3", "ace-builds@1.45.2")


@pytest.fixture(scope="module")
def editors(pages):
    """npm-installs the pinned editors once per machine (a cache under ~/.cache) and serves them."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is required for the editor tests (apt-get install npm)")
    root = os.path.join(os.path.expanduser("~"), ".cache", "browser-pilot-tests", "editors-" + "-".join(PACKAGES))
    modules = os.path.join(root, "node_modules")
    files = {"codemirror.js": os.path.join(modules, "codemirror", "lib", "codemirror.js"),
             "codemirror.css": os.path.join(modules, "codemirror", "lib", "codemirror.css"),
             "quill.js": os.path.join(modules, "quill", "dist", "quill.js"),
             "quill.snow.css": os.path.join(modules, "quill", "dist", "quill.snow.css"),
             "ace.js": os.path.join(modules, "ace-builds", "src-min-noconflict", "ace.js")}
    if not all(os.path.exists(path) for path in files.values()):
        os.makedirs(root, exist_ok=True)
        subprocess.run([npm, "install", "--prefix", root, "--no-audit", "--no-fund", "--no-save", *PACKAGES],
                       check=True, capture_output=True, timeout=600)
    pages.files.update(files)
    return pages


def ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    return result.json


def textboxes(observation):
    return [e for e in observation["elements"] if e["role"] == "textbox"]


def model(home, env, expression):
    return ok(home, env, "eval", expression)["value"]


PAGE = """<link rel="stylesheet" href="/static/codemirror.css"><link rel="stylesheet" href="/static/quill.snow.css">
<script src="/static/codemirror.js"></script><script src="/static/quill.js"></script>
<form><label for="sql">SQL query</label><textarea id="sql" name="sql">select * from notes</textarea></form>
<div id="notes" aria-label="Notes"><p>Hello <b>world</b></p></div>
<script>
window.cm = CodeMirror.fromTextArea(document.getElementById("sql"), {lineNumbers: true});
window.quill = new Quill("#notes", {theme: "snow"});
</script>"""


def test_codemirror_is_one_textbox_and_type_clear_replaces_its_model(home, connected, editors):
    page = ok(home, connected, "open", editors.page(PAGE, title="editors"))
    sql = [e for e in textboxes(page) if e["name"] == "SQL query"]
    assert len(sql) == 1, textboxes(page)
    assert sql[0]["value"] == "select * from notes"
    result = ok(home, connected, "type", str(sql[0]["ref"]), "select count(*) from notes", "--clear")
    evidence = result["evidence"]
    assert (evidence["kind"], evidence["status"], evidence["readFrom"]) == ("code_editor", "verified", "editor_model")
    assert model(home, connected, "cm.getValue()") == "select count(*) from notes"
    appended = ok(home, connected, "type", str(sql[0]["ref"]), " where id > 1")
    assert appended["evidence"]["status"] == "verified", appended["evidence"]
    assert model(home, connected, "cm.getValue()") == "select count(*) from notes where id > 1"


def test_a_model_that_disagrees_is_a_mismatch(home, connected, editors):
    # An editor that drops what is typed (a read-only-like change handler): the model says so.
    page = ok(home, connected, "open", editors.page(
        PAGE + "<script>cm.on('beforeChange', (c, change) => { if (change.origin !== 'setValue') change.cancel(); });</script>",
        title="editors"))
    sql = [e for e in textboxes(page) if e["name"] == "SQL query"][0]
    result = ok(home, connected, "type", str(sql["ref"]), "drop table notes", "--clear")
    assert result["evidence"]["status"] == "mismatch", result["evidence"]
    assert model(home, connected, "cm.getValue()") == "select * from notes"


def test_quill_is_one_textbox_and_type_clear_replaces_its_content(home, connected, editors):
    page = ok(home, connected, "open", editors.page(PAGE, title="editors"))
    notes = [e for e in textboxes(page) if e.get("value") == "Hello world"]
    assert len(notes) == 1, textboxes(page)
    result = ok(home, connected, "type", str(notes[0]["ref"]), "Fresh start", "--clear")
    assert result["evidence"]["status"] == "verified", result["evidence"]
    assert model(home, connected, "quill.getText()") == "Fresh start\n"


ACE = """<script src="/static/ace.js"></script>
<div id="code" aria-label="Script" style="width: 500px; height: 120px">print("hi")</div>
<script>window.editor = ace.edit("code");</script>"""


def test_ace_is_one_textbox_and_type_clear_replaces_its_model(home, connected, editors):
    page = ok(home, connected, "open", editors.page(ACE, title="ace"))
    boxes = textboxes(page)
    assert [(e["name"], e.get("value")) for e in boxes] == [("Script", 'print("hi")')], boxes
    result = ok(home, connected, "type", str(boxes[0]["ref"]), "x = 1", "--clear")
    assert (result["evidence"]["status"], result["evidence"]["readFrom"]) == ("verified", "editor_model"), result
    assert model(home, connected, "editor.getValue()") == "x = 1"
