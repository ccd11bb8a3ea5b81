"""What the component-library tasks share: each library's page, the Agent's moves an Agent makes
the same way on every library, and the page's own state (judged, never bp's word)."""

import collections
import os
import re

from tests.realapps.agent import local_storage
from tests.realapps.servers import app_changes

STATE_KEY = "state"
INVOICES = "Invoices are sent monthly."

# Each library's page: the session fixture that serves it, its path ("{host}" is the task's own)
# and a text the page shows once it rendered. The "site" pages keep their state in localStorage;
# the Python apps' server-side handlers record theirs (servers.app_changes).
LibraryPage = collections.namedtuple("LibraryPage", "server path ready")
LIBRARY_PAGES = {
    "react-aria": LibraryPage("site", "/library/aria", "Project settings"),
    "mui": LibraryPage("site", "/library/mui", "Store settings"),
    "bootstrap": LibraryPage("site", "/library/bootstrap", "Account settings"),
    "jquery-ui": LibraryPage("site", "/library/jquery-ui", "Workspace settings"),
    "react-menu": LibraryPage("site", "/library/react-menu", "Document settings"),
    "tabulator": LibraryPage("site", "/library/tabulator", "Inventory settings"),
    "nicegui": LibraryPage("nicegui", "/w/{host}", "Team settings"),
    "dash": LibraryPage("dash", "/w/{host}", "Report settings"),
}


def app_state(agent, url_prefix):
    """The React pages' state: localStorage "state", written by the app on every change, read
    through the test's own DevTools connection."""
    return local_storage(agent.chromium, url_prefix, STATE_KEY) or {}


def open_library_page(agent, url, ready):
    """Open a page as an Agent does: open it, wait until it shows `ready`, take its observation."""
    agent.ok("open", url)
    agent.ok("wait", "--text", ready)
    return agent.ok("snapshot", "--limit", "500")


class Named(collections.namedtuple("Named", "roles name contains", defaults=(None, None))):
    """The one element of `roles` (a role, a tuple of the roles libraries and observation sources
    differ on, or None for any) named `name`, or whose name contains `contains`."""

    def ref(self, observation):
        roles = (self.roles,) if isinstance(self.roles, str) else self.roles
        found = [e["ref"] for e in observation["elements"] if (roles is None or e["role"] in roles)
                 and (self.name is None or e["name"] == self.name)
                 and (self.contains is None or self.contains in (e["name"] or ""))]
        assert len(found) == 1, (self, [(e["ref"], e["role"], e["name"]) for e in observation["elements"]])
        return str(found[0])


class LibraryApp:
    """One library's page for one task, driven as an Agent drives it: each move finds its target in
    the observation the previous move answered with (`seen`; `snapshot()` takes a fresh one), and
    the task is judged from the app's own state."""

    def __init__(self, request, agent, name):
        self.name = name
        self.page = LIBRARY_PAGES[name]
        self.server = request.getfixturevalue(self.page.server)
        self.agent = agent
        self.url = self.server.url(agent.host, self.page.path.format(host=agent.host))
        self.seen = None

    def open(self):
        self.seen = open_library_page(self.agent, self.url, self.page.ready)
        return self

    def snapshot(self):
        self.seen = self.agent.ok("snapshot", "--limit", "500")
        return self

    def act(self, verb, target, *args):
        """`bp <verb> <ref> <args>` on a target (a Named found in `seen`, or a ref)."""
        ref = target.ref(self.seen) if isinstance(target, Named) else target
        self.seen = self.agent.act(verb, ref, *args)
        return self

    def click(self, *targets, fresh=False):
        """Click each target in turn, found in what the click before answered with (or, `fresh`,
        in a snapshot taken after it)."""
        for n, target in enumerate(targets):
            if fresh and n:
                self.snapshot()
            self.act("click", target)
        return self

    def read(self):
        return self.agent.ok("read")["text"]

    def state(self):
        if self.page.server == "site":
            return app_state(self.agent, self.url)
        return app_changes(self.server, self.agent.host)

    def expect(self, **recorded):
        """The app recorded these values (and the task is done)."""
        state = self.state()
        assert {key: state.get(key) for key in recorded} == recorded, state
        return self


COUNTRY = Named("combobox", "Country")
NEW_NAME = Named("textbox", "New name")
CONFIRMATION_CODE = Named("textbox", "Confirmation code")


def type_and_select_a_country(app, field=COUNTRY):
    """As the autocomplete hint says: type, then select."""
    app.open().act("type", field, "Nor").act("select", field, "Norway").expect(country="Norway")


def open_billing(app, tab, recorded="billing"):
    app.open().click(tab).expect(tab=recorded)
    assert INVOICES in app.read()


def rename_in_a_dialog(app, rename, save, field=NEW_NAME):
    app.open().click(rename).act("type", field, "Hermes", "--clear").click(save).expect(project="Hermes")


def edit_the_price_of_tea(app, cell, *click_flags, new_only=False):
    """Edit the price cell of the row whose product is Tea (3) as a person does: click it (or
    double-click), type the new price in the editor that shows the value, Enter. `new_only`: the
    editor is an element the page did not offer before (another field may show 3 too)."""
    before = {e["ref"] for e in app.seen["elements"]} if new_only else set()
    editing = app.act("click", cell, *click_flags).seen
    editor = [e["ref"] for e in editing["elements"]
              if e["role"] in ("spinbutton", "textbox") and e.get("value") == "3" and e["ref"] not in before]
    assert len(editor) == 1, [e for e in editing["elements"] if e.get("value") == "3"]
    app.act("type", str(editor[0]), "6", "--clear", "--submit")
    assert {r["product"]: r["price"] for r in app.state().get("products")}["Tea"] == 6


def confirm_the_announced_code(app, send, field=CONFIRMATION_CODE):
    """Have a code announced (a toast, snackbar or live region), read it, and type it back."""
    app.open().click(send)
    app.agent.ok("wait", "--text", "Your code is")
    code = code_in(app.read(), "Your code is")
    app.snapshot().act("type", field, code).expect(confirmation=code, code=code)


def set_slider(agent, ref, value):
    """Set a slider to a value in one command (issue 26 item 2): `bp select <ref> <number>`, the
    verb the ax-truth branch documents for sliders (docs/commands.md, bp select)."""
    return agent.act("select", ref, str(value))


def upload_file(agent, name, text="attached by a real-app task\n"):
    """A file of the Agent's own, in its output directory, uploaded to the page's file input."""
    os.makedirs(agent.out_dir, exist_ok=True)
    path = os.path.join(agent.out_dir, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def code_in(text, prefix):
    """The code a toast or live region announced ("Your code is K1234")."""
    found = re.search(re.escape(prefix) + r"\s*([A-Z]\d{4})", text)
    assert found, text[-2000:]
    return found.group(1)
