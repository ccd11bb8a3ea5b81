import json
import os
import shutil

import pytest

from tests import helpers
from tests.realapps import figures as realapps_figures


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    """One real Chromium per xdist worker: the 'user browser' the tests connect to."""
    browser = helpers.Chromium(helpers.short_tmpdir("bpc-"))
    yield browser
    browser.stop()
    shutil.rmtree(browser.root, ignore_errors=True)


@pytest.fixture
def home():
    """A private BROWSER_PILOT_HOME per test; any broker it started is stopped afterwards."""
    path = helpers.short_tmpdir("bph-")
    yield path
    helpers.stop_brokers(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def env_for(chromium):
    """Environment that makes the worker's Chromium the only viable candidate."""

    def make(home, **extra):
        extra.setdefault("BROWSER_PILOT_BROWSER_DATA_DIRS", chromium.root)
        return helpers.bp_env(home, **extra)

    return make


@pytest.fixture
def connected(home, env_for):
    env = env_for(home)
    result = helpers.bp(home, "connect", env=env)
    assert result.rc == 0, result
    return env


@pytest.fixture(scope="session")
def pages():
    from tests.pages import PageServer

    with PageServer() as server:
        yield server


@pytest.fixture(scope="module")
def corpus():
    """The settle corpus's server (tests/settle_corpus.py)."""
    from tests.settle_corpus import SettleServer

    with SettleServer() as server:
        yield server


@pytest.fixture
def pending_browser(tmp_path):
    """A running 'browser' whose debugging endpoint never completes the handshake (a pending
    Allow dialog). Yields an object with .root (its user-data dir) and .held (connections)."""
    from types import SimpleNamespace

    listener, held = helpers.stalling_endpoint()
    root = str(tmp_path / "pending")
    helpers.write_endpoint(root, listener.getsockname()[1])
    proc = helpers.process_with_data_dir(root)
    yield SimpleNamespace(root=root, held=held)
    proc.kill()
    listener.close()


def pytest_collection_modifyitems(items):
    from tests.known_gaps import GAPS

    for item in items:
        reason = GAPS.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def pytest_runtest_logreport(report):
    realapps_figures.collect(report)


def pytest_terminal_summary(terminalreporter):
    realapps_figures.summary(terminalreporter)


@pytest.fixture(scope="module")
def download_browser():
    """A Chromium whose profile has its own download directory configured (as a person's
    Chrome has), so Chrome's default behaviour saves there without asking."""
    root = helpers.short_tmpdir("bpd-")
    saved = helpers.short_tmpdir("bpdl-")
    os.makedirs(os.path.join(root, "Default"))
    with open(os.path.join(root, "Default", "Preferences"), "w") as fh:
        json.dump({"download": {"default_directory": saved, "prompt_for_download": False}}, fh)
    browser = helpers.Chromium(root)
    browser.saved = saved
    yield browser
    browser.stop()
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(saved, ignore_errors=True)
