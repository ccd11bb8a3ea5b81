"""Static checks of the product packages, in the default run so that CI enforces them: ruff with
the project's rule set (pyproject.toml [tool.ruff]) clean, and pyright (basic) never worse than
its baseline file by file (issue 28 item 3 is not done: the baseline is what remains to type;
lower a file's count in tests/unit/pyright_baseline.json when you fix its errors)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ["bp", "cli", "broker", "janitor", "release"]
BASELINE = pathlib.Path(__file__).with_name("pyright_baseline.json")


def tool(name):
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: it is in the test extras (pip install '.[test]')")
    return found


def test_ruff_finds_nothing_in_the_product_packages():
    result = subprocess.run([tool("ruff"), "check", "--output-format", "concise", *PACKAGES, "scripts"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyright_finds_no_error_a_file_did_not_have():
    result = subprocess.run([tool("pyright"), "--outputjson", *PACKAGES], cwd=ROOT, capture_output=True, text=True)
    report = json.loads(result.stdout)
    counts = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            path = os.path.relpath(diagnostic["file"], ROOT)
            counts[path] = counts.get(path, 0) + 1
    baseline = json.loads(BASELINE.read_text())
    worse = {path: (n, baseline.get(path, 0)) for path, n in counts.items() if n > baseline.get(path, 0)}
    assert not worse, f"pyright errors (now, baseline) grew in: {worse}; run pyright {' '.join(PACKAGES)}"
