"""docs/design.md's worked example, done for real: a flag added to `bp click` in a scratch copy
of the source tree, in the three places the example names — the command (its declaration and
its request builder), the request's schema, the broker's logic — and nowhere else. Both parsers
(the fast path and click) send it, and the scratch tree's broker, on real Chromium, presses the
middle button with it."""

import os
import shutil
import subprocess
import sys

import pytest

from tests import helpers
from tests.helpers import ref_of

pytestmark = pytest.mark.chromium

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (file, what is there, what it becomes): each new text is shown in docs/design.md as it is here.
EDITS = [
    ("cli/commands/actions.py",
     '@option("--right", is_flag=True, help="Right-click.")\n',
     '@option("--right", is_flag=True, help="Right-click.")\n'
     '@option("--middle", is_flag=True, help="Middle-click (a link opens in a new tab).")\n'),
    ("cli/commands/actions.py",
     '    if v["right"]:\n        args["button"] = "right"\n',
     '    if v["right"]:\n        args["button"] = "right"\n'
     '    if v["middle"]:\n        args["button"] = "middle"\n'),
    ("bp/schemas.py",
     'button = fields.String(validate=validate.OneOf(["left", "right"]))',
     'button = fields.String(validate=validate.OneOf(["left", "right", "middle"]))'),
    ("broker/actions/inputs.py",
     'BUTTONS = {"left": 1, "right": 2}',
     'BUTTONS = {"left": 1, "right": 2, "middle": 4}'),
]
PAGE = """<p id=out>not pressed</p>
<button onauxclick="document.getElementById('out').textContent = 'pressed with button ' + event.button">Press</button>"""


def _scratch_tree(into, edits=EDITS, parts=("bp", "cli", "broker", "janitor")):
    for part in parts:
        shutil.copytree(os.path.join(ROOT, part), os.path.join(into, part),
                        ignore=shutil.ignore_patterns("__pycache__"))
    _apply(into, edits)


def _apply(into, edits):
    """Each (path, old, new): the one `old` of the file under `into` becomes `new`."""
    for path, old, new in edits:
        full = os.path.join(into, path)
        with open(full, encoding="utf-8") as fh:
            text = fh.read()
        assert text.count(old) == 1, (path, old)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text.replace(old, new))


def test_the_docs_show_the_example_as_the_test_does_it():
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as fh:
        design = fh.read()
    for path, old, new in EDITS:
        assert path in design
        added = [line.strip() for line in new.splitlines() if line.strip() and line not in old.splitlines()]
        assert all(line in design for line in added), (path, added)


def test_a_flag_added_in_three_places_reaches_the_browser(home, env_for, pages):
    with helpers.scratch_dir("bpw-") as scratch:
        _scratch_tree(scratch)
        changed = subprocess.run(["diff", "-rq", "-x", "__pycache__", os.path.join(ROOT, "cli"),
                                  os.path.join(scratch, "cli")], capture_output=True, text=True).stdout.splitlines()
        assert sorted(line.split()[1].rsplit("/", 1)[1] for line in changed) == ["actions.py"]
        env = dict(env_for(home), PYTHONPATH=scratch)  # the CLI, its broker and janitor: all the scratch tree's

        def bp(*args, fast=True):
            entry = "cli.fast" if fast else "cli.main"  # the fast path, or click for every argv
            code = f"import sys; from {entry} import main; sys.exit(main())"
            return helpers.Result(subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=scratch,
                                                 capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL))

        assert bp("connect").rc == 0
        for fast in (True, False):
            opened = bp("open", pages.page(PAGE), fast=fast)
            assert opened.rc == 0, opened
            clicked = bp("click", str(ref_of(opened.json, "button", "Press")), "--middle", fast=fast)
            assert clicked.rc == 0, clicked
            assert "pressed with button 1" in bp("read", fast=fast).json["text"]  # DOM's middle button is 1


# The drift the fast path once had (issue 28): a flag declared on `bp click` that its builder
# never sends. Made in a scratch copy, as a developer would make it by mistake.
DRIFT = [("cli/commands/actions.py",
          '@option("--right", is_flag=True, help="Right-click.")\n',
          '@option("--right", is_flag=True, help="Right-click.")\n'
          '@option("--force", is_flag=True, help="Click even when covered.")\n')]


def test_a_flag_declared_but_never_built_fails_the_fast_path_test():
    """The scratch tree's own fast-path test fails on the drift, naming the flag; the unchanged
    tree's passes (the first run of the two)."""
    with helpers.scratch_dir("bpd-") as scratch:
        _scratch_tree(scratch, edits=[], parts=("bp", "bin", "cli", "broker", "janitor", "tests"))

        def fast_path_test():
            return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                   "-p", "no:randomly", "tests/unit/test_fast_path.py"],
                                  cwd=scratch, env=dict(os.environ, PYTHONPATH=scratch),
                                  capture_output=True, text=True, timeout=300)

        clean = fast_path_test()
        assert clean.returncode == 0, clean.stdout[-3000:]
        _apply(scratch, DRIFT)
        drifted = fast_path_test()
        assert drifted.returncode != 0
        assert "click_request does not read ['force']" in drifted.stdout, drifted.stdout[-3000:]
