"""React Aria Components (npm react-aria-components, bundled by scripts/ensure-realapps.sh): one
Agent task per widget kind the library has, on its page /library/aria (source:
apps/components/aria.jsx). Judged from the app's own state (localStorage "state"). The library
has no editable table cell, so no task for one. Its checkbox, radio, switch and slider are the
"visually hidden input" pattern of issue 26. The kinds every library has (checkbox, radio, switch,
slider, file upload), and the tasks React Aria shares with other libraries (select, autocomplete, menu,
tabs, date picker, tree: the same moves but for its roles and names), are in test_widget_kinds.py."""

import pytest

from tests.realapps.widgets import COUNTRY, Named, confirm_the_announced_code, rename_in_a_dialog

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]
LIBRARY = "react-aria"


def test_combobox_type_and_click_the_listed_option(app):
    """The option the observation lists after typing, clicked by its ref."""
    app.open().act("type", COUNTRY, "Nor").click(Named("option", "Norway")).expect(country="Norway")


def test_dialog_rename_the_project(app):
    rename_in_a_dialog(app, Named("button", "Rename project"), Named("button", "Save name"))


def test_toast_read_the_code_and_confirm_it(app):
    confirm_the_announced_code(app, Named("button", "Send code"))
