"""The real-app screens the agreement check measures (issue 26 item 7): one page of every app of
the suite, each with a text or selector that says it finished rendering."""

import contextlib
import shutil

from tests import helpers
from tests.agreement.measure import BP_LIMIT, bp_json
from tests.realapps import servers
from tests.realapps.widgets import LIBRARY_PAGES

# (label, server, path, ready: "text:..." or "selector:...")
SCREENS = [
    ("shop order form", "site", "/orders/new", "text:Place order"),
    ("quill editor", "site", "/editor", "selector:.ql-editor"),
    ("tom-select ship form", "site", "/ship", "selector:.ts-control"),
    ("todomvc", "site", "/todomvc/index.html", "text:todos"),
    ("mkdocs-material", "site", "/mkdocs/", "text:Calibration"),
    ("swagger-ui", "site", "/swagger/", "selector:.opblock-summary-control"),
    ("python docs json", "site", "/pydocs/library/json.html", "text:JSON encoder and decoder"),
    ("datasette cities", "datasette", "/atlas/cities", "text:cities"),
]
# The component libraries' pages, as their tasks open them (widgets.LIBRARY_PAGES), on a host
# named "agreement"; labelled by library, two of them with what they are built on.
LABELS = {"react-aria": "react-aria-components", "nicegui": "nicegui (quasar)"}
SCREENS += [(LABELS.get(name, name), page.server, page.path.format(host="agreement"), f"text:{page.ready}")
            for name, page in LIBRARY_PAGES.items()]
# Menus open, submenu too: their entries show only then (issue 38). "click:NAME" clicks the one
# element whose name starts with NAME in the observation before it.
SCREENS += [
    ("jquery-ui menus open", "site", "/library/jquery-ui", "text:Workspace settings|click:More|click:Export"),
    ("react-menu open", "site", "/library/react-menu", "text:Document settings|click:Actions|click:Share"),
    ("mui menu open", "site", "/library/mui", "text:Store settings|click:ACTIONS|click:Share"),
    ("react-aria menu open", "site", "/library/aria", "text:Project settings|click:Actions|click:Share"),
]


def installed():
    try:
        servers.installed()
        return True
    except RuntimeError:
        return False


def open_screen(bp, env, url, ready):
    """Open a screen, wait until it rendered, and take the whole observation."""
    opened = bp_json(bp, env, "open", url)
    if not opened.get("ok"):
        raise RuntimeError(f"bp open {url}: {opened}")
    first, *steps = ready.split("|")
    kind, _, what = first.partition(":")
    waited = bp_json(bp, env, "wait", f"--{kind}", what)
    if not waited.get("ok"):
        raise RuntimeError(f"bp wait --{kind} {what} on {url}: {waited}")
    seen = bp_json(bp, env, "snapshot", "--limit", BP_LIMIT)
    for step in steps:
        _, _, name = step.partition(":")
        refs = [e["ref"] for e in seen.get("elements", []) if (e.get("name") or "").startswith(name)]
        if len(refs) != 1:
            raise RuntimeError(f"{url}: {len(refs)} elements named {name!r} to click: {seen}")
        clicked = bp_json(bp, env, "click", str(refs[0]))
        if not clicked.get("ok"):
            raise RuntimeError(f"bp click {name!r} on {url}: {clicked}")
        seen = bp_json(bp, env, "snapshot", "--limit", BP_LIMIT)
    return seen


class Servers(contextlib.AbstractContextManager):
    """Every server the screens need, for a script (the tests use the session fixtures)."""

    def __init__(self):
        self.dir = helpers.short_tmpdir("bpra-agree-")
        self.running = {}
        self.running["site"] = servers.start_site(self.dir)
        self.running["datasette"] = servers.start_datasette(self.dir)
        self.running["nicegui"] = servers.start_python_app(self.dir, "nicegui", "nicegui_app.py")
        self.running["dash"] = servers.start_python_app(self.dir, "dash", "dash_app.py")

    def screens(self):
        for n, (label, server, path, ready) in enumerate(SCREENS):
            yield label, self.running[server].url(f"agree{n}", path), ready

    def __exit__(self, *exc):
        for server in self.running.values():
            server.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
