"""MUI (npm @mui/material with its MIT X packages: date picker, data grid, tree view; bundled by
scripts/ensure-realapps.sh): one Agent task per widget kind on its page /library/mui (source:
apps/components/mui.jsx). Judged from the app's own state (localStorage "state"). Names are as
Chromium gives them: MUI's buttons and tabs show their labels in capitals (CSS text-transform).
The kinds every library has (checkbox, radio, switch, slider, file upload), and the tasks MUI
shares with other libraries (select, autocomplete, menu, tabs, date picker, tree: the same moves
but for MUI's names), are in test_widget_kinds.py."""

import pytest

from tests.realapps.widgets import Named, confirm_the_announced_code, edit_the_price_of_tea, rename_in_a_dialog

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]
LIBRARY = "mui"


def test_dialog_rename_the_store(app):
    rename_in_a_dialog(app, Named("button", "RENAME STORE"), Named("button", "SAVE NAME"))


def test_data_grid_edit_the_price_of_tea(app):
    # Double-click, as a person does. The date picker's Month shows 3 too: the editor is the field
    # that appeared with the value.
    edit_the_price_of_tea(app.open(), Named("gridcell", "3"), "--double", new_only=True)


def test_snackbar_read_the_code_and_confirm_it(app):
    confirm_the_announced_code(app, Named("button", "SEND CODE"))
