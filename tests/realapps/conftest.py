"""Fixtures of the real-app suite: the installed apps' servers on 127.0.0.1 (one of each per
session), and an Agent per task (its own client key, so its tab and state are its own).

The apps are installed by scripts/ensure-realapps.sh (scripts/test.sh runs it); nothing is
downloaded here."""

import itertools
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys

import pytest

from tests import helpers
from tests.realapps.agent import Agent

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APPS_ROOT = os.environ.get("BROWSER_PILOT_REALAPPS") or os.path.join(REPO, ".realapps")
_task_numbers = itertools.count(1)


def _installed():
    python = os.path.join(APPS_ROOT, "venv", "bin", "python")
    if not os.path.exists(os.path.join(APPS_ROOT, "installed")) or not os.path.exists(python):
        raise RuntimeError(f"the real apps are not installed in {APPS_ROOT}: run scripts/ensure-realapps.sh")
    return python


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, name, args, env, port, log):
        self.name = name
        self.port = port
        self.log = log
        self._out = open(log + ".out", "w")
        self.proc = subprocess.Popen(args, env={**os.environ, **env}, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        if not helpers.wait_until(self._listening, 60, 0.1):
            self.stop()
            raise RuntimeError(f"{name} did not start: {open(log + '.out').read()[-2000:]}")

    def _listening(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited: {open(self.log + '.out').read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", self.port), 0.5).close()
            return True
        except OSError:
            return False

    def url(self, host, path):
        """A URL on a host of its own (*.test maps to 127.0.0.1): a task's own origin, so its
        localStorage and cookies are its own."""
        return f"http://{host}.test:{self.port}{path}"

    def stop(self):
        try:
            os.killpg(self.proc.pid, 9)
        except ProcessLookupError:
            pass
        self.proc.wait(10)
        self._out.close()


@pytest.fixture(scope="session")
def realapps_dir():
    path = helpers.short_tmpdir("bpra-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def site(realapps_dir):
    """The Flask shop and the static apps (TodoMVC, MkDocs-Material, Swagger UI, Python docs)."""
    python = _installed()
    db, log, port = os.path.join(realapps_dir, "site.db"), os.path.join(realapps_dir, "site.log"), _free_port()
    open(log, "w").close()
    server = Server("site", [python, os.path.join(os.path.dirname(__file__), "apps", "site.py")],
                    {"REALAPPS_ROOT": APPS_ROOT, "REALAPPS_DB": db, "REALAPPS_LOG": log, "REALAPPS_PORT": str(port)},
                    port, log)
    server.db = db
    yield server
    server.stop()


COUNTRIES = ["Norway", "Peru", "Japan", "Kenya", "Chile", "Spain", "Canada", "Egypt", "India", "Fiji"]


def make_atlas(path, rows=2000):
    """Datasette's database: a 2,000-row table (its page is the listener-heavy table that crashes
    a renderer today), and a notes table a writable canned query inserts into."""
    rng = random.Random(15)
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE cities (id INTEGER PRIMARY KEY, name TEXT, country TEXT, population INTEGER);"
                       "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT);")
    syllables = ["ka", "lo", "mi", "ra", "to", "ven", "sul", "dor", "an", "is", "el", "um"]
    names = set()
    while len(names) < rows:
        names.add("".join(rng.choice(syllables) for _ in range(3)).capitalize() + rng.choice(["", " Bay", " Hill"]))
    conn.executemany("INSERT INTO cities (name, country, population) VALUES (?, ?, ?)",
                     [(n, rng.choice(COUNTRIES), rng.randrange(1000, 9_000_000)) for n in sorted(names)])
    conn.commit()
    conn.close()


@pytest.fixture(scope="session")
def datasette(realapps_dir):
    python = _installed()
    db, log, port = os.path.join(realapps_dir, "atlas.db"), os.path.join(realapps_dir, "datasette.log"), _free_port()
    make_atlas(db)
    metadata = os.path.join(realapps_dir, "metadata.json")
    with open(metadata, "w") as fh:
        json.dump({"databases": {"atlas": {"queries": {"add_note": {
            "sql": "INSERT INTO notes (title) VALUES (:title)", "write": True,
            "on_success_message": "Note added"}}}}}, fh)
    server = Server("datasette", [os.path.join(os.path.dirname(python), "datasette"), "serve", db, "-m", metadata,
                                  "-h", "127.0.0.1", "-p", str(port), "--setting", "default_page_size", "2000",
                                  "--setting", "max_returned_rows", "2000"], {}, port, log)
    server.db = db
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


def read_log(server):
    """The site's request log (one JSON object a line)."""
    with open(server.log) as fh:
        return [json.loads(line) for line in fh if line.strip()]
