"""Fixtures of the real-app suite: the installed apps' servers on 127.0.0.1 (one of each per
session), and an Agent per task (its own client key, so its tab and state are its own).

The apps are installed by scripts/ensure-realapps.sh (scripts/test.sh runs it); nothing is
downloaded here."""

import itertools
import json
import os
import shutil

import pytest

from tests import helpers
from tests.realapps import servers
from tests.realapps.agent import Agent
from tests.realapps.widgets import LibraryApp

_task_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def realapps_dir():
    path = helpers.short_tmpdir("bpra-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def site(realapps_dir):
    """The Flask shop and the static apps (TodoMVC, MkDocs-Material, Swagger UI, Python docs, the
    component-library pages)."""
    server = servers.start_site(realapps_dir)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def datasette(realapps_dir):
    server = servers.start_datasette(realapps_dir)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def nicegui(realapps_dir):
    server = servers.start_python_app(realapps_dir, "nicegui", "nicegui_app.py")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def dash(realapps_dir):
    server = servers.start_python_app(realapps_dir, "dash", "dash_app.py")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def realapps_home(chromium):
    """One service for the session's Agents (a task is an Agent with its own key)."""
    path = helpers.short_tmpdir("bpra-h-")
    yield path
    helpers.stop_brokers(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def agent(request, realapps_home, chromium, realapps_dir):
    n = next(_task_numbers)
    env = helpers.bp_env(realapps_home, BROWSER_PILOT_BROWSER_DATA_DIRS=chromium.root,
                         BROWSER_PILOT_CLIENT_KEY=f"realapps-{os.getpid()}-{n}",
                         BROWSER_PILOT_OUTPUT_DIR=os.path.join(realapps_dir, f"out-{os.getpid()}-{n}"))
    bot = Agent(realapps_home, env)
    bot.host = f"t{os.getpid()}-{n}"
    bot.out_dir = env["BROWSER_PILOT_OUTPUT_DIR"]
    bot.chromium = chromium
    bot.ok("connect")
    yield bot
    request.node.user_properties.append(("realapps_cost", {"calls": bot.calls, "bytes": bot.bytes_read}))
    # Closes this Agent's tabs, a renderer that stopped answering included.
    helpers.bp(realapps_home, "disconnect", env=env, timeout=120)


@pytest.fixture
def app(request, agent):
    """A component library's page for one task (widgets.LibraryApp): the library the test is
    parametrized with, else its module's LIBRARY."""
    return LibraryApp(request, agent, getattr(request, "param", None) or request.module.LIBRARY)


def read_log(server):
    """The site's request log (one JSON object a line)."""
    with open(server.log) as fh:
        return [json.loads(line) for line in fh if line.strip()]
