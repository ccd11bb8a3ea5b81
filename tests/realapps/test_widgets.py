"""A rich-text editor (npm quill) and a combobox library (npm tom-select) on the shop's pages.
Checked against the shop's SQLite database (what the page saved or the form posted)."""

import re
import sqlite3
import urllib.request

import pytest

from tests.realapps.agent import ref_of, refs

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def saved_documents(site):
    with sqlite3.connect(site.db) as conn:
        return [t for (t,) in conn.execute("SELECT text FROM documents ORDER BY id")]


def editor_ref(page):
    """Quill's editing surface: a contenteditable div with role textbox."""
    return str(refs(page, "textbox")[0])


def test_quill_replace_the_draft_and_save(agent, site):
    page = agent.ok("open", site.url(agent.host, "/editor"))
    text = f"Minutes of {agent.host}: ship on Friday."
    typed = agent.act("type", editor_ref(page), text, "--clear")
    agent.act("click", ref_of(typed, "button", "Save document"))
    agent.ok("wait", "--text", "Saved")
    assert text + "\n" in saved_documents(site)


def test_quill_append_to_the_draft_and_save(agent, site):
    page = agent.ok("open", site.url(agent.host, "/editor"))
    typed = agent.act("type", editor_ref(page), f" by {agent.host}")
    agent.act("click", ref_of(typed, "button", "Save document"))
    agent.ok("wait", "--text", "Saved")
    assert f"Draft by {agent.host}\n" in saved_documents(site)


def shipments(site):
    with sqlite3.connect(site.db) as conn:
        return [c for (c,) in conn.execute("SELECT country FROM shipments ORDER BY id")]


def test_tom_select_dropdown_lists_the_countries(agent, site):
    # The shop's own list: the <option>s of the page it serves.
    with urllib.request.urlopen(site.url(agent.host, "/ship").replace(f"{agent.host}.test", "127.0.0.1")) as resp:
        countries = re.findall(r'<option value="([^"]+)">', resp.read().decode())
    assert len(countries) == 18
    page = agent.ok("open", site.url(agent.host, "/ship"))
    combobox = str(refs(page, "combobox")[0])
    listed = agent.ok("dropdown", combobox)
    if listed["requiresOpen"]:  # Tom Select renders its options on open, as documented for bp dropdown
        agent.act("click", combobox)
        listed = agent.ok("dropdown", combobox)
    assert [o["label"] for o in listed["options"]] == countries


def test_tom_select_pick_a_country_and_ship(agent, site):
    page = agent.ok("open", site.url(agent.host, "/ship"))
    before = shipments(site).count("Norway")
    agent.act("select", str(refs(page, "combobox")[0]), "Norway")
    done = agent.act("click", ref_of(agent.ok("snapshot"), "button", "Ship it"))
    assert shipments(site).count("Norway") == before + 1
    assert "Shipping to Norway." in agent.ok("read")["text"] and "/ship/" in done["url"]
