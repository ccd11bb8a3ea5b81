import json
import pytest
from tests.realapps.agent import ref_of
from tests.realapps.test_nicegui import open_page, state, one
pytestmark = [pytest.mark.realapps, pytest.mark.chromium]

def show(tag, obs):
    print(tag, json.dumps([(e["ref"], e["role"], e["name"]) for e in obs["elements"] if e["role"] in ("menuitem", "button", "menu")])[:1500])

def test_debug(agent, nicegui):
    page = open_page(agent, nicegui)
    c = agent.act("click", ref_of(page, "button", "ACTIONS"))
    show("CLICK1", c)
    menu = agent.ok("snapshot", "--limit", "500")
    show("MENU", menu)
    print("DOM0", agent.ok("eval", "[...document.querySelectorAll('.q-menu')].map(m => [m.outerHTML.slice(0, 900), getComputedStyle(m).opacity, JSON.stringify(m.getBoundingClientRect())])"))
    c2 = agent.ok("click", one(menu, ("menuitem", "button"), contains="Share"))
    print("EV2", c2.get("evidence"))
    show("CLICK2", c2)
    submenu = agent.ok("snapshot", "--limit", "500")
    show("SUB", submenu)
    print("DOM", agent.ok("eval", "[...document.querySelectorAll('.q-menu')].map(m => m.outerHTML.slice(0, 600))"))
