"""The pytest plugin shipped in the wheel (bp/pytest_plugin.py, docs/pytest-plugin.md): its worked
example, taken verbatim from the docs page, passes under pytest's own `pytester` and in a fresh
virtual environment that has only the release's wheel and pytest installed; loading the plugin
starts nothing and imports nothing heavy."""

import os
import re
import subprocess
import sys

import pytest

from tests import distribution

pytest_plugins = ("pytester",)

DOC = os.path.join(distribution.ROOT, "docs", "pytest-plugin.md")
EXAMPLE_NAME = "test_product_with_browser_pilot.py"


def example_text():
    with open(DOC, encoding="utf-8") as fh:
        blocks = re.findall(r"```python\n(.*?)```", fh.read(), re.DOTALL)
    found = [b for b in blocks if b.startswith(f"# {EXAMPLE_NAME}\n")]
    assert len(found) == 1, "docs/pytest-plugin.md must hold exactly one worked example"
    return found[0]


def _clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("BROWSER_PILOT_", "PYTEST_", "PYTHON")) and k != "VIRTUAL_ENV"}


def test_worked_example_passes_under_pytester(pytester, monkeypatch):
    for name in [k for k in os.environ if k.startswith(("BROWSER_PILOT_", "PYTEST_XDIST"))]:
        monkeypatch.delenv(name)
    pytester.makepyfile(**{EXAMPLE_NAME[:-3]: example_text()})
    # A subprocess: the plugin is found through its pytest11 entry point, as in a product's run.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", timeout=300)
    result.assert_outcomes(passed=4)


def test_loading_the_plugin_starts_nothing_and_imports_nothing_heavy(pytester):
    pytester.makepyfile(test_inert="""
        import sys

        def test_inert(pytestconfig):
            assert pytestconfig.pluginmanager.has_plugin("browser_pilot")
            heavy = {"zmq", "websocket", "psutil", "marshmallow", "click", "orjson", "urllib.request"}
            assert not heavy & set(sys.modules), heavy & set(sys.modules)
            import psutil
            assert psutil.Process().children(recursive=True) == []  # no browser, no broker
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-q")
    result.assert_outcomes(passed=1)
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:browser_pilot", "-q")
    off.assert_outcomes(failed=1)  # really its entry point that loaded it


@pytest.fixture(scope="module")
def plugin_venv(tmp_path_factory):
    """A fresh venv outside the source tree with the release's wheel and this run's pytest
    version, installed offline from a wheelhouse `pip download` filled (once per test run)."""
    dist = distribution.release_dir(tmp_path_factory)
    wheel = os.path.join(dist, distribution.release_index(dist)["python"]["wheel"])

    def make(directory):
        wheelhouse = os.path.join(directory, "wheelhouse")
        distribution.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d",
                          wheelhouse, wheel, f"pytest=={pytest.__version__}"])
        venv = os.path.join(directory, "venv")
        distribution.run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=directory)
        distribution.run([sys.executable, "-m", "pip", "--python", os.path.join(venv, "bin", "python"), "install",
                          "-q", "--disable-pip-version-check", "--no-index", "--find-links", wheelhouse, wheel,
                          f"pytest=={pytest.__version__}"], cwd=directory)

    return os.path.join(distribution._once(distribution.shared_root(tmp_path_factory), "plugin-venv", make), "venv")


def test_worked_example_passes_against_the_installed_wheel(plugin_venv, tmp_path):
    (tmp_path / EXAMPLE_NAME).write_text(example_text())
    python = os.path.join(plugin_venv, "bin", "python")
    where = subprocess.run([python, "-c", "import bp.pytest_plugin as m; print(m.__file__)"], cwd=tmp_path,
                           env=_clean_env(), capture_output=True, text=True)
    assert where.stdout.strip().startswith(plugin_venv + os.sep), where  # the wheel's copy, not this tree
    run = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", EXAMPLE_NAME], cwd=tmp_path,
                         env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and re.search(r"\b4 passed\b", run.stdout), run.stdout[-4000:] + run.stderr[-2000:]
