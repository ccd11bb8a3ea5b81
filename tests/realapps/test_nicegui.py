"""NiceGUI (PyPI nicegui: Vue and Quasar in the page, Python handlers on the server): one Agent
task per widget kind on /w/<task> (source: apps/nicegui_app.py). Judged from what the app's
server-side handlers recorded (servers.app_changes), never from bp. The kinds every library has
(checkbox, radio, switch, slider, file upload), and the tasks NiceGUI shares with other libraries
(select, autocomplete, menu, tabs, tree: the same moves but for its roles and names), are in
test_widget_kinds.py."""

import pytest

from tests.realapps.widgets import Named, confirm_the_announced_code, edit_the_price_of_tea, rename_in_a_dialog

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]
LIBRARY = "nicegui"


def test_date_choose_march_14(app):
    app.open().click(Named(("button", "gridcell"), "14")).expect(date="2026-03-14")


def test_dialog_rename_the_team(app):
    # Quasar's input carries autocomplete: the role an Agent sees varies, the field is the same.
    rename_in_a_dialog(app, Named("button", "RENAME TEAM"), Named("button", "SAVE NAME"),
                       field=Named(("textbox", "combobox"), "New name"))


def test_aggrid_edit_the_price_of_tea(app):
    edit_the_price_of_tea(app.open(), Named("gridcell", "3"), "--double")


def test_notification_read_the_code_and_confirm_it(app):
    # The field is found by its name alone, whatever its role.
    confirm_the_announced_code(app, Named("button", "SEND CODE"), field=Named(None, "Confirmation code"))
