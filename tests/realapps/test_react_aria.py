"""React Aria Components (npm react-aria-components, bundled by scripts/ensure-realapps.sh): one
Agent task per widget kind the library has, on its page /library/aria (source:
apps/components/aria.jsx). Judged from the app's own state (localStorage "state"). The library
has no editable table cell, so no task for one. Its checkbox, radio, switch and slider are the
"visually hidden input" pattern of issue 26. The kinds every library has (checkbox,
radio, switch, slider, file upload) are in test_widget_kinds.py."""

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.widgets import app_state, code_in, ref_in_roles

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def open_page(agent, site):
    agent.url = site.url(agent.host, "/library/aria")
    agent.ok("open", agent.url)
    agent.ok("wait", "--text", "Project settings")
    return agent.ok("snapshot", "--limit", "500")


def state(agent):
    return app_state(agent, agent.url)


def test_select_plan_pro(agent, site):
    page = open_page(agent, site)
    agent.act("select", ref_of(page, "button", contains="Plan"), "Pro")
    assert state(agent).get("plan") == "pro"


def test_combobox_type_and_select_a_country(agent, site):
    """As the autocomplete hint says: type, then select."""
    page = open_page(agent, site)
    typed = agent.act("type", ref_of(page, "combobox", "Country"), "Nor")
    agent.act("select", ref_of(typed, "combobox", "Country"), "Norway")
    assert state(agent).get("country") == "Norway"


def test_combobox_type_and_click_the_listed_option(agent, site):
    """The option the observation lists after typing, clicked by its ref."""
    page = open_page(agent, site)
    typed = agent.act("type", ref_of(page, "combobox", "Country"), "Nor")
    agent.act("click", ref_of(typed, "option", "Norway"))
    assert state(agent).get("country") == "Norway"


def test_menu_share_by_email_through_the_submenu(agent, site):
    page = open_page(agent, site)
    menu = agent.act("click", ref_of(page, "button", "Actions"))
    submenu = agent.act("click", ref_of(menu, "menuitem", "Share"))
    agent.act("click", ref_of(submenu, "menuitem", "Email"))
    assert state(agent).get("action") == "share-email"


def test_tabs_open_billing(agent, site):
    page = open_page(agent, site)
    agent.act("click", ref_of(page, "tab", "Billing"))
    assert state(agent).get("tab") == "billing"
    assert "Invoices are sent monthly." in agent.ok("read")["text"]


def test_date_picker_choose_march_14(agent, site):
    page = open_page(agent, site)
    calendar = agent.act("click", ref_of(page, "button", contains="Calendar"))
    agent.act("click", ref_of(calendar, "button", contains="March 14, 2026"))
    assert state(agent).get("date") == "2026-03-14"


def test_dialog_rename_the_project(agent, site):
    page = open_page(agent, site)
    dialog = agent.act("click", ref_of(page, "button", "Rename project"))
    typed = agent.act("type", ref_of(dialog, "textbox", "New name"), "Hermes", "--clear")
    agent.act("click", ref_of(typed, "button", "Save name"))
    assert state(agent).get("project") == "Hermes"


def test_tree_select_a_file_inside_a_folder(agent, site):
    page = open_page(agent, site)
    expanded = agent.act("click", ref_of(page, "button", "Expand Documents"))
    # Chromium calls a tree grid's item a row; a tree's, treeitem.
    agent.act("click", ref_in_roles(expanded, ("row", "treeitem"), "Report.pdf"))
    assert state(agent).get("file") == "report"


def test_toast_read_the_code_and_confirm_it(agent, site):
    page = open_page(agent, site)
    agent.act("click", ref_of(page, "button", "Send code"))
    agent.ok("wait", "--text", "Your code is")
    code = code_in(agent.ok("read")["text"], "Your code is")
    agent.act("type", ref_of(agent.ok("snapshot"), "textbox", "Confirmation code"), code)
    assert state(agent).get("confirmation") == state(agent).get("code") == code
