"""The widget kinds every library of the suite has — checkbox, radio, switch, slider, file upload —
one Agent task per kind and library, driven only through `bp` and judged from each app's own
state: localStorage "state" of the component-library pages (React Aria, MUI, Bootstrap), what
the server-side handlers of NiceGUI and Dash recorded. Then the tasks several libraries share,
the same moves on each but for the library's own roles and names (a table per task): select a
plan, an autocomplete, a submenu, tabs, a date picker, a tree. The kinds one library has alone (a
data grid, a dialog, a toast) or names its own way are in that library's own test module."""

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.widgets import Named, open_billing, set_slider, type_and_select_a_country, upload_file

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]

# How each library's app records each answer (its page: widgets.LIBRARY_PAGES; the `app` fixture,
# conftest.py, opens it and reads its state).
SITE_VALUES = {"terms": True, "size": "large", "wifi": True}
VALUES = {
    "react-aria": SITE_VALUES,
    "mui": SITE_VALUES,
    "bootstrap": SITE_VALUES,
    "nicegui": {"terms": True, "size": "Large", "wifi": True},
    # Dash's checklist records the checked labels; it has no switch.
    "dash": {"terms": ["Accept the terms"], "size": "Large"},
}


def expects(app, key):
    return VALUES[app.name][key]


def libraries(key=None):
    """Run a task on every library that has the widget (`key` among its recorded values)."""
    names = [name for name, values in sorted(VALUES.items()) if key is None or key in values]
    return pytest.mark.parametrize("app", names, indirect=True)


@libraries("terms")
def test_checkbox_accept_the_terms(app):
    done = app.agent.act("click", ref_of(app.open().seen, "checkbox", "Accept the terms"))
    assert app.state().get("terms") == expects(app, "terms")
    assert [e for e in done["elements"] if e["name"] == "Accept the terms"][0].get("checked") is True


@libraries("size")
def test_radio_pick_large(app):
    app.agent.act("click", ref_of(app.open().seen, "radio", "Large"))
    assert app.state().get("size") == expects(app, "size")


@libraries("wifi")
def test_switch_turn_wifi_on(app):
    app.agent.act("click", ref_of(app.open().seen, "switch", "Wi-Fi"))
    assert app.state().get("wifi") == expects(app, "wifi")


@libraries()
def test_slider_set_volume_to_70(app):
    # Named "Volume", or (an unlabelled slider of NiceGUI and Dash) given it as its context.
    sliders = [e for e in app.open().seen["elements"] if e["role"] == "slider"]
    assert len(sliders) == 1 and "Volume" in (sliders[0]["name"] + sliders[0].get("context", "")), sliders
    set_slider(app.agent, str(sliders[0]["ref"]), 70)
    assert app.state().get("volume") == 70


@libraries()
def test_file_upload_attach_a_file(app):
    app.open()
    app.agent.act("upload", upload_file(app.agent, "notes.txt"))
    if app.page.server != "site":
        app.agent.ok("wait", "--text", "notes.txt")  # the server recorded it once the page says so
    assert app.state().get("upload") == ["notes.txt"]


def over(table):
    """Run a task on each library of `table`: {library: the task's targets there}."""
    return pytest.mark.parametrize("app,task", sorted(table.items()), indirect=["app"], ids=sorted(table))


def clicks(*targets, fresh=False, **recorded):
    """Targets clicked in turn (`fresh`: each found in a snapshot taken after the click before, not
    in the click's answer), then what the app records."""
    return targets, fresh, recorded


def click_through(app, task, **recorded):
    targets, fresh, recorded_here = task
    app.open().click(*targets, fresh=fresh).expect(**recorded, **recorded_here)


# The Plan select, and how the app records Pro.
PLAN = {
    "mui": (Named("combobox", "Plan"), "pro"),
    "react-aria": (Named("button", contains="Plan"), "pro"),
    "nicegui": (Named("combobox", "Plan"), "Pro"),
    "dash": (Named("button", "Free"), "Pro"),  # Dash's dropdown is a button named by its value
}
# NiceGUI: Quasar's menu entries have roles that differ with the observation's source.
QUASAR_ENTRY = ("menuitem", "button")
MENU = {
    "mui": clicks(Named("button", "ACTIONS"), Named("menuitem", contains="Share"), Named("menuitem", "Email")),
    "react-aria": clicks(Named("button", "Actions"), Named("menuitem", "Share"), Named("menuitem", "Email")),
    "nicegui": clicks(Named("button", "ACTIONS"), Named(QUASAR_ENTRY, contains="Share"), Named(QUASAR_ENTRY, "Email"),
                      fresh=True),
    # The two menu libraries (issue 38): jQuery UI's entries are the <div>s it gives role=menuitem
    # inside each <li>; react-menu's are <li role=menuitem>, its submenu's entry aria-haspopup.
    "jquery-ui": clicks(Named("button", "Actions"), Named("menuitem", "Share"), Named("menuitem", "Email")),
    "react-menu": clicks(Named("button", "Actions"), Named("menuitem", "Share"), Named("menuitem", "Email")),
}
# The Billing tab, and how the app records it. Dash's tab is offered in a role of its own.
BILLING = {
    "mui": (Named("tab", "BILLING"), "billing"),
    "react-aria": (Named("tab", "Billing"), "billing"),
    "nicegui": (Named("tab", "BILLING"), "Billing"),
    "dash": (Named(None, "Billing"), "billing"),
}
DATE = {
    # MUI's day is a <button role="gridcell">: Chromium calls it a gridcell.
    "mui": clicks(Named("button", contains="Choose date"), Named(("gridcell", "button"), "14")),
    "react-aria": clicks(Named("button", contains="Calendar"), Named("button", contains="March 14, 2026")),
    # Dash's calendar days are focusable table cells: offered as grid cells (Chromium: cells).
    "dash": clicks(Named("textbox", "Select Date"), Named("gridcell", "14"), fresh=True),
}
TREE = {
    "mui": clicks(Named("treeitem", "Documents"), Named("treeitem", "Report.pdf"), file="report"),
    # Chromium calls a tree grid's item a row; a tree's, treeitem.
    "react-aria": clicks(Named("button", "Expand Documents"), Named(("row", "treeitem"), "Report.pdf"), file="report"),
    "nicegui": clicks(Named("treeitem", contains="Documents"), Named("treeitem", "Report.pdf"), fresh=True,
                      file="Report.pdf"),
}


@over(PLAN)
def test_select_plan_pro(app, task):
    plan, recorded = task
    app.open().act("select", plan, "Pro").expect(plan=recorded)


@pytest.mark.parametrize("app", ["mui", "nicegui", "react-aria"], indirect=True)
def test_autocomplete_type_and_select_a_country(app):
    type_and_select_a_country(app)


@over(MENU)
def test_menu_share_by_email_through_the_submenu(app, task):
    click_through(app, task, action="share-email")


@over(BILLING)
def test_tabs_open_billing(app, task):
    open_billing(app, *task)


@over(DATE)
def test_date_picker_choose_march_14(app, task):
    click_through(app, task, date="2026-03-14")


@over(TREE)
def test_tree_select_a_file_inside_a_folder(app, task):
    click_through(app, task)
