"""Code and rich-text editors as one textbox each: CodeMirror 5 (a hidden textarea, as in
Datasette's SQL box), Ace and Monaco (likewise), Quill, CodeMirror 6, TipTap (ProseMirror) and
Lexical (contenteditable), the real libraries installed from npm at pinned versions when this
module sets up (the ES-module ones bundled into one IIFE file by esbuild, also from npm).
`type --clear` replaces the whole content, checked against the editor's own model (its
instance's value or state), never against Browser Pilot's word."""

import fcntl
import hashlib
import os
import shutil
import subprocess

import pytest

from tests.helpers import bp, wait_until

PACKAGES = ("codemirror@5.65.18", "quill@2.0.3", "ace-builds@1.45.2")
# CodeMirror 6, TipTap and Lexical ship ES modules only: esbuild bundles MODERN_ENTRY for the page.
MODERN_PACKAGES = ("codemirror@6.0.2", "@codemirror/view@6.43.15", "@codemirror/state@6.7.6",
                   "@tiptap/core@3.35.0", "@tiptap/starter-kit@3.35.0", "@tiptap/pm@3.35.0",
                   "lexical@0.52.0", "@lexical/rich-text@0.52.0", "monaco-editor@0.57.0", "esbuild@0.28.2")
MODERN_ENTRY = """import {basicSetup, EditorView} from "codemirror";
import {EditorState} from "@codemirror/state";
import {Editor} from "@tiptap/core";
import StarterKit from "@tiptap/starter-kit";
import {createEditor, $getRoot, $createParagraphNode, $createTextNode} from "lexical";
import {registerRichText} from "@lexical/rich-text";
window.Editors = {basicSetup, EditorView, EditorState, Editor, StarterKit, createEditor, registerRichText,
  $getRoot, $createParagraphNode, $createTextNode};
"""


def npm_install(name, packages, ready, ignore_scripts=False):
    """npm-installs pinned packages once per machine (a cache under ~/.cache); answers its node_modules."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is required for the editor tests (apt-get install npm)")
    root = os.path.join(os.path.expanduser("~"), ".cache", "browser-pilot-tests", name)
    modules = os.path.join(root, "node_modules")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers set up this module at once; one installs
        if not all(os.path.exists(os.path.join(modules, path)) for path in ready):
            flags = ["--ignore-scripts"] if ignore_scripts else []
            subprocess.run([npm, "install", "--prefix", root, "--no-audit", "--no-fund", "--no-save", *flags, *packages],
                           check=True, capture_output=True, timeout=600)
    return modules


@pytest.fixture(scope="module")
def editors(pages):
    """Serves the pinned editors (CodeMirror 5, Quill, Ace) installed from npm."""
    root = os.path.join(os.path.expanduser("~"), ".cache", "browser-pilot-tests", "editors-" + "-".join(PACKAGES))
    modules = os.path.join(root, "node_modules")
    files = {"codemirror.js": os.path.join(modules, "codemirror", "lib", "codemirror.js"),
             "codemirror.css": os.path.join(modules, "codemirror", "lib", "codemirror.css"),
             "quill.js": os.path.join(modules, "quill", "dist", "quill.js"),
             "quill.snow.css": os.path.join(modules, "quill", "dist", "quill.snow.css"),
             "ace.js": os.path.join(modules, "ace-builds", "src-min-noconflict", "ace.js")}
    npm_install("editors-" + "-".join(PACKAGES), PACKAGES, [os.path.relpath(path, modules) for path in files.values()])
    pages.files.update(files)
    return pages


@pytest.fixture(scope="module")
def modern_editors(pages):
    """Serves CodeMirror 6, TipTap and Lexical as one esbuild IIFE bundle, and Monaco's AMD build."""
    name = "editors-" + hashlib.sha256(" ".join(MODERN_PACKAGES).encode()).hexdigest()[:12]
    # No install scripts: esbuild's binary comes in its platform package, which npm installs.
    modules = npm_install(name, MODERN_PACKAGES, ["esbuild/package.json", "monaco-editor/min/vs/loader.js"],
                          ignore_scripts=True)
    root = os.path.dirname(modules)
    bundle = os.path.join(root, "modern-editors-" + hashlib.sha256(MODERN_ENTRY.encode()).hexdigest()[:12] + ".js")
    if not os.path.exists(bundle):  # written whole under a private name, then renamed
        entry = os.path.join(root, f"entry-{os.getpid()}.js")
        with open(entry, "w") as fh:
            fh.write(MODERN_ENTRY)
        subprocess.run([os.path.join(modules, ".bin", "esbuild"), entry, "--bundle", "--format=iife", "--minify",
                        "--log-level=warning", f"--outfile={bundle}.{os.getpid()}"], check=True, capture_output=True,
                       timeout=300, cwd=root)
        os.replace(f"{bundle}.{os.getpid()}", bundle)
    pages.files["modern-editors.js"] = bundle
    vs = os.path.join(modules, "monaco-editor", "min", "vs")
    for folder, _, names in os.walk(vs):
        for file in names:
            path = os.path.join(folder, file)
            pages.files["vs/" + os.path.relpath(path, vs)] = path
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


def in_page(chromium, title, expression):
    """The page's own answer, over the test's own DevTools connection (not Browser Pilot's)."""
    targets = [t for t in chromium.pages().values() if t["title"] == title]
    assert len(targets) == 1, targets
    reply = chromium.evaluate(targets[0]["id"], expression)
    assert "exceptionDetails" not in reply["result"], reply
    return reply["result"]["result"].get("value")


def types_into_the_one_textbox(home, env, chromium, title, name, before, model):
    """The editor is exactly one textbox named NAME showing BEFORE; type --clear replaces its
    model's whole text and a plain type appends to it."""
    page = ok(home, env, "snapshot")
    boxes = textboxes(page)
    assert [(e["name"], e.get("value")) for e in boxes] == [(name, before)], boxes
    ref = str(boxes[0]["ref"])
    result = ok(home, env, "type", ref, "Fresh start", "--clear")
    assert (result["evidence"]["status"], result["evidence"].get("readFrom")) == ("verified", "editor_model"), result
    assert in_page(chromium, title, model) == "Fresh start"
    appended = ok(home, env, "type", ref, " again")
    assert (appended["evidence"]["status"], appended["evidence"].get("readFrom")) == ("verified", "editor_model"), appended
    assert in_page(chromium, title, model) == "Fresh start again"
    return ref


MODERN = '<script src="/static/modern-editors.js"></script>'


def test_codemirror6_is_one_textbox_and_type_clear_replaces_its_state(home, connected, chromium, modern_editors):
    ok(home, connected, "open", modern_editors.page(MODERN + """<div id="host"></div><script>
window.view = new Editors.EditorView({doc: "select 1", parent: document.getElementById("host"),
  extensions: [Editors.basicSetup, Editors.EditorView.contentAttributes.of({"aria-label": "Query"})]});
</script>""", title="codemirror6"))
    types_into_the_one_textbox(home, connected, chromium, "codemirror6", "Query", "select 1",
                               "view.state.doc.toString()")


def test_tiptap_is_one_textbox_and_type_clear_replaces_its_document(home, connected, chromium, modern_editors):
    ok(home, connected, "open", modern_editors.page(MODERN + """<div id="doc"></div><script>
window.tiptap = new Editors.Editor({element: document.getElementById("doc"), extensions: [Editors.StarterKit],
  content: "<p>Hello <b>world</b></p>", editorProps: {attributes: {"aria-label": "Document"}}});
</script>""", title="tiptap"))
    ref = types_into_the_one_textbox(home, connected, chromium, "tiptap", "Document", "Hello world",
                                     "tiptap.state.doc.textContent")
    # A typed line break is a new paragraph: the model's blocks, one a line, are what was typed.
    result = ok(home, connected, "type", ref, "one\ntwo", "--clear")
    assert (result["evidence"]["status"], result["evidence"].get("readFrom")) == ("verified", "editor_model"), result
    assert in_page(chromium, "tiptap", "JSON.stringify(tiptap.getJSON().content.map((p) => p.content[0].text))") == '["one","two"]'


def test_codemirror6_long_document_appends_at_the_end_of_its_model(home, connected, chromium, modern_editors):
    # CodeMirror 6 draws only the lines in view: its drawn text is not its value.
    ok(home, connected, "open", modern_editors.page(MODERN + """<div id="host"></div><script>
window.view = new Editors.EditorView({parent: document.getElementById("host"),
  doc: Array.from({length: 3000}, (_, i) => "line " + i).join("\\n"),
  extensions: [Editors.basicSetup, Editors.EditorView.contentAttributes.of({"aria-label": "Log"})]});
</script>""", title="codemirror6-long"))
    ref = str(textboxes(ok(home, connected, "snapshot"))[0]["ref"])
    before = in_page(chromium, "codemirror6-long", "view.state.doc.length")
    result = ok(home, connected, "type", ref, " tail")
    evidence = result["evidence"]
    assert (evidence["status"], evidence.get("readFrom"), evidence["beforeLength"]) == ("verified", "editor_model", before), result
    assert in_page(chromium, "codemirror6-long", "view.state.doc.toString().slice(-14)") == "line 2999 tail"


def test_lexical_is_one_textbox_and_type_clear_replaces_its_state(home, connected, chromium, modern_editors):
    ok(home, connected, "open", modern_editors.page(MODERN + """
<div id="lexical" contenteditable="true" aria-label="Comment"></div><script>
const E = Editors;
window.lexical = E.createEditor({namespace: "test", onError: (error) => { throw error; }});
lexical.setRootElement(document.getElementById("lexical"));
E.registerRichText(lexical);
lexical.update(() => E.$getRoot().append(E.$createParagraphNode().append(E.$createTextNode("Hello world"))),
  {discrete: true});
window.lexicalText = () => lexical.getEditorState().read(() => E.$getRoot().getTextContent());
</script>""", title="lexical"))
    types_into_the_one_textbox(home, connected, chromium, "lexical", "Comment", "Hello world", "lexicalText()")


def test_monaco_is_one_textbox_and_type_clear_replaces_its_model(home, connected, chromium, modern_editors):
    ok(home, connected, "open", modern_editors.page("""<link rel="stylesheet" href="/static/vs/editor/editor.main.css">
<div id="code" style="width: 600px; height: 200px"></div>
<script src="/static/vs/loader.js"></script><script>
require.config({paths: {vs: "/static/vs"}});
require(["vs/editor/editor.main"], () => {
  window.monacoEditor = monaco.editor.create(document.getElementById("code"),
    {value: "let x = 1;", language: "plaintext", ariaLabel: "Script", automaticLayout: false});
});
</script>""", title="monaco"))
    # The editor builds itself after its AMD modules load (after the page's load event).
    assert wait_until(lambda: in_page(chromium, "monaco", "!!(window.monacoEditor && document.querySelector('.view-line'))"))
    types_into_the_one_textbox(home, connected, chromium, "monaco", "Script", "let x = 1;", "monacoEditor.getValue()")


def test_a_codemirror6_model_that_refuses_the_change_is_a_mismatch(home, connected, chromium, modern_editors):
    # A filter drops every change to the document: the model, not the keys sent, decides.
    ok(home, connected, "open", modern_editors.page(MODERN + """<div id="host"></div><script>
window.view = new Editors.EditorView({doc: "select 1", parent: document.getElementById("host"),
  extensions: [Editors.basicSetup, Editors.EditorView.contentAttributes.of({"aria-label": "Query"}),
    Editors.EditorState.transactionFilter.of((tr) => tr.docChanged ? [] : tr)]});
</script>""", title="codemirror6-refusing"))
    ref = str(textboxes(ok(home, connected, "snapshot"))[0]["ref"])
    result = ok(home, connected, "type", ref, "drop table notes", "--clear")
    assert (result["evidence"]["status"], result["evidence"].get("readFrom")) == ("mismatch", "editor_model"), result
    assert in_page(chromium, "codemirror6-refusing", "view.state.doc.toString()") == "select 1"
