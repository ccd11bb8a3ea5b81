"""The real-app suite's servers on 127.0.0.1: the installed apps (scripts/ensure-realapps.sh),
started for a session by tests/realapps/conftest.py and by the agreement bench."""

import json
import os
import random
import socket
import sqlite3
import subprocess

from tests import helpers

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APPS_ROOT = os.environ.get("BROWSER_PILOT_REALAPPS") or os.path.join(REPO, ".realapps")
APPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apps")


def installed():
    python = os.path.join(APPS_ROOT, "venv", "bin", "python")
    if not os.path.exists(os.path.join(APPS_ROOT, "installed")) or not os.path.exists(python):
        raise RuntimeError(f"the real apps are not installed in {APPS_ROOT}: run scripts/ensure-realapps.sh")
    return python


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, name, args, env, port, log):
        self.name = name
        self.port = port
        self.log = log
        self._out = open(log + ".out", "w")
        # Without pytest's variables: NiceGUI takes PYTEST_CURRENT_TEST for its own test mode.
        clean = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        self.proc = subprocess.Popen(args, env={**clean, **env}, stdin=subprocess.DEVNULL, stdout=self._out,
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


def start_site(directory):
    """The Flask shop and the static apps (TodoMVC, MkDocs-Material, Swagger UI, Python docs, the
    component-library pages)."""
    python = installed()
    db, log, port = os.path.join(directory, "site.db"), os.path.join(directory, "site.log"), free_port()
    open(log, "w").close()
    server = Server("site", [python, os.path.join(APPS, "site.py")],
                    {"REALAPPS_ROOT": APPS_ROOT, "REALAPPS_DB": db, "REALAPPS_LOG": log, "REALAPPS_PORT": str(port)},
                    port, log)
    server.db = db
    return server


def start_datasette(directory):
    python = installed()
    db, log, port = os.path.join(directory, "atlas.db"), os.path.join(directory, "datasette.log"), free_port()
    make_atlas(db)
    metadata = os.path.join(directory, "metadata.json")
    with open(metadata, "w") as fh:
        json.dump({"databases": {"atlas": {"queries": {"add_note": {
            "sql": "INSERT INTO notes (title) VALUES (:title)", "write": True,
            "on_success_message": "Note added"}}}}}, fh)
    server = Server("datasette", [os.path.join(os.path.dirname(python), "datasette"), "serve", db, "-m", metadata,
                                  "-h", "127.0.0.1", "-p", str(port), "--setting", "default_page_size", "2000",
                                  "--setting", "max_returned_rows", "2000"], {}, port, log)
    server.db = db
    return server


def start_python_app(directory, name, script):
    """A Python web-UI framework's app (apps/<script>) in the apps' venv; its state is the JSON
    lines file server.state (see app_changes)."""
    python = installed()
    state, log, port = (os.path.join(directory, f"{name}.state.jsonl"), os.path.join(directory, f"{name}.log"),
                        free_port())
    open(state, "w").close()
    server = Server(name, [python, os.path.join(APPS, script)],
                    {"REALAPPS_STATE": state, "REALAPPS_PORT": str(port), "REALAPPS_ROOT": APPS_ROOT}, port, log)
    server.state = state
    return server


def app_changes(server, task):
    """{key: last value} of what the app's server-side handlers recorded for one task."""
    latest = {}
    with open(server.state) as fh:
        for line in fh:
            if line.strip():
                entry = json.loads(line)
                if entry["task"] == task:
                    latest[entry["key"]] = entry["value"]
    return latest
