"""NiceGUI (PyPI nicegui: Vue and Quasar in the page, Python handlers on the server): one Agent
task per widget kind on /w/<task> (source: apps/nicegui_app.py). Judged from what the app's
server-side handlers recorded (servers.app_changes), never from bp. The kinds every library has (checkbox,
radio, switch, slider, file upload) are in test_widget_kinds.py."""

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.servers import app_changes
from tests.realapps.widgets import code_in

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def open_page(agent, nicegui):
    agent.ok("open", nicegui.url(agent.host, f"/w/{agent.host}"))
    agent.ok("wait", "--text", "Team settings")
    return agent.ok("snapshot", "--limit", "500")


def state(agent, nicegui):
    return app_changes(nicegui, agent.host)


def one(observation, roles, name=None, contains=None):
    """The one element of any of `roles` named `name` (or whose name contains `contains`): Quasar's
    menu entries and dialog parts have roles that differ with the observation's source."""
    found = [e["ref"] for e in observation["elements"] if e["role"] in roles
             and (name is None or e["name"] == name) and (contains is None or contains in (e["name"] or ""))]
    assert len(found) == 1, (roles, name, contains, [(e["ref"], e["role"], e["name"]) for e in observation["elements"]])
    return str(found[0])


def test_select_plan_pro(agent, nicegui):
    page = open_page(agent, nicegui)
    agent.act("select", ref_of(page, "combobox", "Plan"), "Pro")
    assert state(agent, nicegui).get("plan") == "Pro"


def test_autocomplete_type_and_select_a_country(agent, nicegui):
    page = open_page(agent, nicegui)
    typed = agent.act("type", ref_of(page, "combobox", "Country"), "Nor")
    agent.act("select", ref_of(typed, "combobox", "Country"), "Norway")
    assert state(agent, nicegui).get("country") == "Norway"


def test_menu_share_by_email_through_the_submenu(agent, nicegui):
    page = open_page(agent, nicegui)
    agent.act("click", ref_of(page, "button", "ACTIONS"))
    menu = agent.ok("snapshot", "--limit", "500")
    agent.act("click", one(menu, ("menuitem", "button"), contains="Share"))
    submenu = agent.ok("snapshot", "--limit", "500")
    agent.act("click", one(submenu, ("menuitem", "button"), "Email"))
    assert state(agent, nicegui).get("action") == "share-email"


def test_tabs_open_billing(agent, nicegui):
    page = open_page(agent, nicegui)
    agent.act("click", ref_of(page, "tab", "BILLING"))
    assert state(agent, nicegui).get("tab") == "Billing"
    assert "Invoices are sent monthly." in agent.ok("read")["text"]


def test_date_choose_march_14(agent, nicegui):
    page = open_page(agent, nicegui)
    agent.act("click", one(page, ("button", "gridcell"), "14"))
    assert state(agent, nicegui).get("date") == "2026-03-14"


def test_dialog_rename_the_team(agent, nicegui):
    page = open_page(agent, nicegui)
    dialog = agent.act("click", ref_of(page, "button", "RENAME TEAM"))
    # Quasar's input carries autocomplete: the role an Agent sees varies, the field is the same.
    typed = agent.act("type", one(dialog, ("textbox", "combobox"), "New name"), "Hermes", "--clear")
    agent.act("click", ref_of(typed, "button", "SAVE NAME"))
    assert state(agent, nicegui).get("project") == "Hermes"


def test_aggrid_edit_the_price_of_tea(agent, nicegui):
    page = open_page(agent, nicegui)
    editing = agent.act("click", one(page, ("gridcell",), "3"), "--double")
    editor = [e["ref"] for e in editing["elements"] if e["role"] in ("spinbutton", "textbox") and e.get("value") == "3"]
    assert len(editor) == 1, editing["elements"]
    agent.act("type", str(editor[0]), "6", "--clear", "--submit")
    assert {r["product"]: r["price"] for r in state(agent, nicegui).get("products")}["Tea"] == 6


def test_tree_select_a_file_inside_a_folder(agent, nicegui):
    page = open_page(agent, nicegui)
    agent.act("click", one(page, ("treeitem",), contains="Documents"))
    expanded = agent.ok("snapshot", "--limit", "500")
    agent.act("click", one(expanded, ("treeitem",), "Report.pdf"))
    assert state(agent, nicegui).get("file") == "Report.pdf"


def test_notification_read_the_code_and_confirm_it(agent, nicegui):
    page = open_page(agent, nicegui)
    agent.act("click", ref_of(page, "button", "SEND CODE"))
    agent.ok("wait", "--text", "Your code is")
    code = code_in(agent.ok("read")["text"], "Your code is")
    field = [e["ref"] for e in agent.ok("snapshot", "--limit", "500")["elements"] if e["name"] == "Confirmation code"]
    assert len(field) == 1
    agent.act("type", str(field[0]), code)
    assert state(agent, nicegui).get("confirmation") == state(agent, nicegui).get("code") == code
