import shutil

import pytest

from tests import helpers


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

    server = PageServer()
    yield server
    server.stop()
