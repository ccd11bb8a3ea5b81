"""The widget kinds every library of the suite has — checkbox, radio, switch, slider, file upload —
one Agent task per kind and library, driven only through `bp` and judged from each app's own
state: localStorage "state" of the component-library pages (React Aria, MUI, Bootstrap), what
the server-side handlers of NiceGUI and Dash recorded. The kinds one library has alone (a data
grid, a tree, a date picker, menus, dialogs, toasts) are in that library's own test module."""

import collections

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.servers import app_changes
from tests.realapps.widgets import app_state, set_slider, upload_file

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]

# server: the session fixture that serves it; path: "{host}" is the task's own; ready: a text
# the page shows once it rendered; values: how the app records each answer.
Library = collections.namedtuple("Library", "server path ready values")
SITE_VALUES = {"terms": True, "size": "large", "wifi": True}
LIBRARIES = {
    "react-aria": Library("site", "/library/aria", "Project settings", SITE_VALUES),
    "mui": Library("site", "/library/mui", "Store settings", SITE_VALUES),
    "bootstrap": Library("site", "/library/bootstrap", "Account settings", SITE_VALUES),
    "nicegui": Library("nicegui", "/w/{host}", "Team settings", {"terms": True, "size": "Large", "wifi": True}),
    # Dash's checklist records the checked labels; it has no switch.
    "dash": Library("dash", "/w/{host}", "Report settings", {"terms": ["Accept the terms"], "size": "Large"}),
}


class App:
    """One library's page for one task: opened as an Agent opens it, and its own state."""

    def __init__(self, request, agent, name):
        self.library = LIBRARIES[name]
        self.server = request.getfixturevalue(self.library.server)
        self.agent = agent
        self.url = self.server.url(agent.host, self.library.path.format(host=agent.host))

    def open(self):
        self.agent.ok("open", self.url)
        self.agent.ok("wait", "--text", self.library.ready)
        return self.agent.ok("snapshot", "--limit", "500")

    def state(self):
        if self.library.server == "site":
            return app_state(self.agent, self.url)
        return app_changes(self.server, self.agent.host)

    def expects(self, key):
        return self.library.values[key]


@pytest.fixture
def app(request, agent):
    return App(request, agent, request.param)


def libraries(key=None):
    """Run a task on every library that has the widget (`key` among its recorded values)."""
    names = [name for name, library in sorted(LIBRARIES.items()) if key is None or key in library.values]
    return pytest.mark.parametrize("app", names, indirect=True)


@libraries("terms")
def test_checkbox_accept_the_terms(app):
    done = app.agent.act("click", ref_of(app.open(), "checkbox", "Accept the terms"))
    assert app.state().get("terms") == app.expects("terms")
    assert [e for e in done["elements"] if e["name"] == "Accept the terms"][0].get("checked") is True


@libraries("size")
def test_radio_pick_large(app):
    app.agent.act("click", ref_of(app.open(), "radio", "Large"))
    assert app.state().get("size") == app.expects("size")


@libraries("wifi")
def test_switch_turn_wifi_on(app):
    app.agent.act("click", ref_of(app.open(), "switch", "Wi-Fi"))
    assert app.state().get("wifi") == app.expects("wifi")


@libraries()
def test_slider_set_volume_to_70(app):
    # Named "Volume", or (an unlabelled slider of NiceGUI and Dash) given it as its context.
    sliders = [e for e in app.open()["elements"] if e["role"] == "slider"]
    assert len(sliders) == 1 and "Volume" in (sliders[0]["name"] + sliders[0].get("context", "")), sliders
    set_slider(app.agent, str(sliders[0]["ref"]), 70)
    assert app.state().get("volume") == 70


@libraries()
def test_file_upload_attach_a_file(app):
    app.open()
    app.agent.act("upload", upload_file(app.agent, "notes.txt"))
    if app.library.server != "site":
        app.agent.ok("wait", "--text", "notes.txt")  # the server recorded it once the page says so
    assert app.state().get("upload") == ["notes.txt"]
