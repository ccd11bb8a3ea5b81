"""Bootstrap (npm bootstrap, plain CSS and JS bundle): one Agent task per widget kind it has, on
its page /library/bootstrap (source: apps/components/bootstrap.html; Bootstrap styles native
controls and has no tree, editable table or submenu). Judged from the page's own state
(localStorage "state"). The kinds every library has (checkbox,
radio, switch, slider, file upload) are in test_widget_kinds.py."""

import pytest

from tests.realapps.agent import ref_of
from tests.realapps.widgets import app_state, code_in

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def open_page(agent, site):
    agent.url = site.url(agent.host, "/library/bootstrap")
    agent.ok("open", agent.url)
    return agent.ok("snapshot", "--limit", "500")


def state(agent):
    return app_state(agent, agent.url)


def test_select_plan_pro(agent, site):
    agent.act("select", ref_of(open_page(agent, site), "combobox", "Plan"), "Pro")
    assert state(agent).get("plan") == "pro"


def test_datalist_type_a_country(agent, site):
    agent.act("type", ref_of(open_page(agent, site), "combobox", "Country"), "Norway")
    assert state(agent).get("country") == "Norway"


def test_date_type_march_14(agent, site):
    agent.act("type", ref_of(open_page(agent, site), "textbox", "Launch date"), "2026-03-14", "--clear")
    assert state(agent).get("date") == "2026-03-14"


def test_dropdown_menu_archive(agent, site):
    menu = agent.act("click", ref_of(open_page(agent, site), "button", "Actions"))
    agent.act("click", ref_of(menu, "button", "Archive"))
    assert state(agent).get("action") == "archive"


def test_tabs_open_billing(agent, site):
    agent.act("click", ref_of(open_page(agent, site), "tab", "Billing"))
    assert state(agent).get("tab") == "billing"
    assert "Invoices are sent monthly." in agent.ok("read")["text"]


def test_modal_rename_the_account(agent, site):
    # Bootstrap's modal fades in (0.15 s backdrop, then 0.3 s for the dialog) and moves focus into
    # itself when the fade ends. The click's settle waits for that motion (it moves the dialog's
    # fields), so its answer lists the fields, and typing is not overtaken by the focus move.
    dialog = agent.act("click", ref_of(open_page(agent, site), "button", "Rename account"))
    typed = agent.act("type", ref_of(dialog, "textbox", "New name"), "Hermes", "--clear")
    agent.act("click", ref_of(typed, "button", "Save name"))
    assert state(agent).get("project") == "Hermes"


def test_toast_read_the_code_and_confirm_it(agent, site):
    agent.act("click", ref_of(open_page(agent, site), "button", "Send code"))
    agent.ok("wait", "--text", "Your code is")
    code = code_in(agent.ok("read")["text"], "Your code is")
    agent.act("type", ref_of(agent.ok("snapshot", "--limit", "500"), "textbox", "Confirmation code"), code)
    assert state(agent).get("confirmation") == state(agent).get("code") == code
