"""MUI (npm @mui/material with its MIT X packages: date picker, data grid, tree view; bundled by
scripts/ensure-realapps.sh): one Agent task per widget kind on its page /library/mui (source:
apps/components/mui.jsx). Judged from the app's own state (localStorage "state"). Names are as
Chromium gives them: MUI's buttons and tabs show their labels in capitals (CSS text-transform). The kinds every library has (checkbox,
radio, switch, slider, file upload) are in test_widget_kinds.py."""

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.widgets import app_state, code_in, ref_in_roles

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def open_page(agent, site):
    agent.url = site.url(agent.host, "/library/mui")
    agent.ok("open", agent.url)
    agent.ok("wait", "--text", "Store settings")
    return agent.ok("snapshot", "--limit", "500")


def state(agent):
    return app_state(agent, agent.url)


def test_select_plan_pro(agent, site):
    page = open_page(agent, site)
    agent.act("select", ref_of(page, "combobox", "Plan"), "Pro")
    assert state(agent).get("plan") == "pro"


def test_autocomplete_type_and_select_a_country(agent, site):
    page = open_page(agent, site)
    typed = agent.act("type", ref_of(page, "combobox", "Country"), "Nor")
    agent.act("select", ref_of(typed, "combobox", "Country"), "Norway")
    assert state(agent).get("country") == "Norway"


def test_menu_share_by_email_through_the_submenu(agent, site):
    page = open_page(agent, site)
    menu = agent.act("click", ref_of(page, "button", "ACTIONS"))
    submenu = agent.act("click", ref_of(menu, "menuitem", contains="Share"))
    agent.act("click", ref_of(submenu, "menuitem", "Email"))
    assert state(agent).get("action") == "share-email"


def test_tabs_open_billing(agent, site):
    page = open_page(agent, site)
    agent.act("click", ref_of(page, "tab", "BILLING"))
    assert state(agent).get("tab") == "billing"
    assert "Invoices are sent monthly." in agent.ok("read")["text"]


def test_date_picker_choose_march_14(agent, site):
    page = open_page(agent, site)
    calendar = agent.act("click", ref_of(page, "button", contains="Choose date"))
    # MUI's day is a <button role="gridcell">: Chromium calls it a gridcell.
    agent.act("click", ref_in_roles(calendar, ("gridcell", "button"), "14"))
    assert state(agent).get("date") == "2026-03-14"


def test_dialog_rename_the_store(agent, site):
    page = open_page(agent, site)
    dialog = agent.act("click", ref_of(page, "button", "RENAME STORE"))
    typed = agent.act("type", ref_of(dialog, "textbox", "New name"), "Hermes", "--clear")
    agent.act("click", ref_of(typed, "button", "SAVE NAME"))
    assert state(agent).get("project") == "Hermes"


def test_data_grid_edit_the_price_of_tea(agent, site):
    page = open_page(agent, site)
    # The price cell of the row whose product is Tea (3), edited as a person does: double-click,
    # type, Enter.
    editing = agent.act("click", ref_in_roles(page, ("gridcell",), "3"), "--double")
    # The editor is the field that appeared with the value (the date picker's Month shows 3 too).
    before = {e["ref"] for e in page["elements"]}
    editor = [e["ref"] for e in editing["elements"]
              if e["role"] in ("spinbutton", "textbox") and e.get("value") == "3" and e["ref"] not in before]
    assert len(editor) == 1, [e for e in editing["elements"] if e.get("value") == "3"]
    agent.act("type", str(editor[0]), "6", "--clear", "--submit")
    assert {r["product"]: r["price"] for r in state(agent).get("products")}["Tea"] == 6


def test_tree_select_a_file_inside_a_folder(agent, site):
    page = open_page(agent, site)
    expanded = agent.act("click", ref_of(page, "treeitem", "Documents"))
    agent.act("click", ref_of(expanded, "treeitem", "Report.pdf"))
    assert state(agent).get("file") == "report"


def test_snackbar_read_the_code_and_confirm_it(agent, site):
    page = open_page(agent, site)
    agent.act("click", ref_of(page, "button", "SEND CODE"))
    agent.ok("wait", "--text", "Your code is")
    code = code_in(agent.ok("read")["text"], "Your code is")
    agent.act("type", ref_of(agent.ok("snapshot"), "textbox", "Confirmation code"), code)
    assert state(agent).get("confirmation") == state(agent).get("code") == code
