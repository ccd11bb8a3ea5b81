"""Plotly Dash (PyPI dash 4: its own React components, Python callbacks on the server): one Agent
task per widget kind Dash's component libraries have, on /w/<task> (source: apps/dash_app.py;
Dash has no switch, menu or tree). Judged from what the app's callbacks recorded
(servers.app_changes), never from bp. The kinds every library has (checkbox, radio, switch, slider,
file upload), and the tasks Dash shares with other libraries (select, tabs, date picker: the same moves
but for its roles and names), are in test_widget_kinds.py."""

import pytest

from tests.realapps.widgets import Named, confirm_the_announced_code, edit_the_price_of_tea

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]
LIBRARY = "dash"


def test_searchable_dropdown_choose_a_country(app):
    app.open().act("select", Named("button", "Choose a country"), "Norway").expect(country="Norway")


def test_confirm_dialog_delete_the_draft(app):
    clicked = app.agent.ok("click", Named("button", "Delete draft").ref(app.open().seen))
    pending = clicked.get("dialog") or app.agent.ok("dialogs")["dialogs"][0]
    assert pending["message"] == "Delete the draft for good?"
    app.agent.ok("dialog", pending["dialogId"], "--accept")
    app.agent.ok("wait", "--text", "Draft deleted.")
    app.expect(draft="deleted")


def test_data_table_edit_the_price_of_tea(app):
    edit_the_price_of_tea(app.open(), Named(("gridcell", "cell", "textbox", "button"), "3"))


def test_live_region_read_the_code_and_confirm_it(app):
    confirm_the_announced_code(app, Named("button", "Send code"))
