"""Plotly Dash (PyPI dash 4: its own React components, Python callbacks on the server): one Agent
task per widget kind Dash's component libraries have, on /w/<task> (source: apps/dash_app.py;
Dash has no switch, menu or tree). Judged from what the app's callbacks recorded
(servers.app_changes), never from bp. The kinds every library has (checkbox,
radio, switch, slider, file upload) are in test_widget_kinds.py."""

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.servers import app_changes
from tests.realapps.widgets import code_in

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def open_page(agent, dash):
    agent.ok("open", dash.url(agent.host, f"/w/{agent.host}"))
    agent.ok("wait", "--text", "Report settings")
    return agent.ok("snapshot", "--limit", "500")


def state(agent, dash):
    return app_changes(dash, agent.host)


def test_dropdown_plan_pro(agent, dash):
    page = open_page(agent, dash)
    agent.act("select", ref_of(page, "button", "Free"), "Pro")
    assert state(agent, dash).get("plan") == "Pro"


def test_searchable_dropdown_choose_a_country(agent, dash):
    page = open_page(agent, dash)
    agent.act("select", ref_of(page, "button", "Choose a country"), "Norway")
    assert state(agent, dash).get("country") == "Norway"


def test_tabs_open_billing(agent, dash):
    page = open_page(agent, dash)
    agent.act("click", [str(e["ref"]) for e in page["elements"] if e["name"] == "Billing"][0])
    assert state(agent, dash).get("tab") == "billing"
    assert "Invoices are sent monthly." in agent.ok("read")["text"]


def test_date_picker_choose_march_14(agent, dash):
    page = open_page(agent, dash)
    agent.act("click", ref_of(page, "textbox", "Select Date"))
    calendar = agent.ok("snapshot", "--limit", "500")
    # Dash's calendar days are focusable table cells: offered as grid cells (Chromium: cells).
    agent.act("click", ref_of(calendar, "gridcell", "14"))
    assert state(agent, dash).get("date") == "2026-03-14"


def test_confirm_dialog_delete_the_draft(agent, dash):
    page = open_page(agent, dash)
    clicked = agent.ok("click", ref_of(page, "button", "Delete draft"))
    pending = clicked.get("dialog") or agent.ok("dialogs")["dialogs"][0]
    assert pending["message"] == "Delete the draft for good?"
    agent.ok("dialog", pending["dialogId"], "--accept")
    agent.ok("wait", "--text", "Draft deleted.")
    assert state(agent, dash).get("draft") == "deleted"


def test_data_table_edit_the_price_of_tea(agent, dash):
    page = open_page(agent, dash)
    cells = [e for e in page["elements"] if e["name"] == "3" and e["role"] in ("gridcell", "cell", "textbox", "button")]
    assert len(cells) == 1, [(e["ref"], e["role"], e["name"]) for e in page["elements"]]
    editing = agent.act("click", str(cells[0]["ref"]))
    editor = [e["ref"] for e in editing["elements"] if e["role"] in ("spinbutton", "textbox") and e.get("value") == "3"]
    assert len(editor) == 1, editing["elements"]
    agent.act("type", str(editor[0]), "6", "--clear", "--submit")
    assert {r["product"]: r["price"] for r in state(agent, dash).get("products")}["Tea"] == 6


def test_live_region_read_the_code_and_confirm_it(agent, dash):
    page = open_page(agent, dash)
    agent.act("click", ref_of(page, "button", "Send code"))
    agent.ok("wait", "--text", "Your code is")
    code = code_in(agent.ok("read")["text"], "Your code is")
    agent.act("type", ref_of(agent.ok("snapshot", "--limit", "500"), "textbox", "Confirmation code"), code)
    assert state(agent, dash).get("confirmation") == state(agent, dash).get("code") == code
