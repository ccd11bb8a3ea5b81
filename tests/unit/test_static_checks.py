"""Static checks of the product packages, in the default run so that CI enforces them: ruff with
the project's rule set (pyproject.toml [tool.ruff]) clean, and pyright (basic, against the
project's venv: pyproject.toml [tool.pyright]) without an error."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ["bp", "cli", "broker", "janitor", "release"]


def tool(name):
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: it is in the test extras (pip install '.[test]')")
    return found


def test_ruff_finds_nothing_in_the_product_packages():
    result = subprocess.run([tool("ruff"), "check", "--output-format", "concise", *PACKAGES, "scripts"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyright_finds_no_error():
    result = subprocess.run([tool("pyright"), "--outputjson", *PACKAGES], cwd=ROOT, capture_output=True, text=True)
    report = json.loads(result.stdout)
    errors = [f"{os.path.relpath(d['file'], ROOT)}:{d['range']['start']['line'] + 1}: {d['message'].splitlines()[0]}"
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert not errors, "pyright errors:\n" + "\n".join(errors[:40])
