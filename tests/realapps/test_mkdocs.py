"""MkDocs-Material (PyPI mkdocs-material; the small site under apps/mkdocs, built by
scripts/ensure-realapps.sh): a search box that listens for key events, content tabs, the
palette toggle, a collapsible note. Checked against the site's request log, its source and the
theme's own state in localStorage and the DOM (read through the test's DevTools connection)."""

import os

import pytest

from tests.realapps.agent import page_eval, ref_of, refs
from tests.realapps.conftest import read_log

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]

SOURCE = os.path.join(os.path.dirname(__file__), "apps", "mkdocs", "docs")


def theme_store(chromium, site, agent, suffix):
    return page_eval(chromium, site.url(agent.host, "/"),
                     f"Object.keys(localStorage).filter(k => k.endsWith('{suffix}')).map(k => JSON.parse(localStorage[k]))")


def test_nav_link_loads_the_page_and_read_gives_its_text(agent, site):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/"))
    # The navigation drawer is off-screen at this width: the link in the text.
    agent.act("click", str(refs(page, "link", "Calibration")[-1]))
    assert any(e["path"] == "/mkdocs/calibration/" and e["status"] == 200 for e in read_log(site))
    text = " ".join(agent.ok("read", "article")["text"].split())
    with open(os.path.join(SOURCE, "calibration.md")) as fh:
        paragraph = fh.read().split("\n\n")[2]
    assert " ".join(paragraph.split()) in text


def test_palette_toggle_switches_to_dark_mode(agent, site, chromium):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/"))
    agent.act("click", ref_of(page, "button", "Switch to dark mode"))
    stored = theme_store(chromium, site, agent, "__palette")
    assert [p["color"]["scheme"] for p in stored] == ["slate"]
    assert page_eval(chromium, site.url(agent.host, "/"), "document.body.dataset.mdColorScheme") == "slate"


def test_content_tab_selects_macos(agent, site, chromium):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/install/"))
    # Material's content tabs are hidden radio inputs behind their labels: Chromium exposes them
    # as radios, and the observation offers them so (clicked through the label).
    agent.act("click", ref_of(page, "radio", "macOS"))
    shown = page_eval(chromium, site.url(agent.host, "/"),
                      "(s => s.querySelectorAll('.tabbed-labels > label')[[...s.querySelectorAll(':scope > input')]"
                      ".findIndex(i => i.checked)].innerText.trim())(document.querySelector('.tabbed-set'))")
    assert shown == "macOS"
    assert theme_store(chromium, site, agent, "__tabs") == [["macOS"]]
    assert "brew install widget-tools" in agent.ok("read", ".tabbed-set")["text"]


def test_collapsible_note_opens(agent, site, chromium):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/install/"))
    agent.act("click", ref_of(page, "button", "Why a reboot?"))
    assert page_eval(chromium, site.url(agent.host, "/"), "document.querySelector('details').open") is True


def test_collapsible_note_evidence_says_expanded(agent, site, chromium):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/install/"))
    clicked = agent.act("click", ref_of(page, "button", "Why a reboot?"))
    assert page_eval(chromium, site.url(agent.host, "/"), "document.querySelector('details').open") is True
    assert "expanded_changed" in clicked["evidence"]["effects"], clicked["evidence"]
    assert [e.get("expanded") for e in clicked["elements"] if e["name"] == "Why a reboot?"] != [False]


def test_search_finds_the_page_and_opens_it(agent, site, chromium):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/"))
    # The header's search toggle: the unnamed icon button after the logo and the palette toggle.
    opened = agent.act("click", str([e["ref"] for e in page["elements"] if e["role"] == "button" and not e["name"]][-1]))
    agent.act("type", ref_of(opened, "textbox", contains="Search"), "zebrafinch")
    # Material searches in a Web Worker: its answer is no cause the type's settle sees (a known
    # gap, issue 25), so the Agent waits for the result as for any late content.
    agent.ok("wait", "--text", "flux capacitor")
    results = agent.ok("snapshot")
    agent.act("click", ref_of(results, "link", contains="flux capacitor"))
    assert any(e["path"] == "/mkdocs/search/search_index.json" for e in read_log(site))
    assert page_eval(chromium, site.url(agent.host, "/"), "location.pathname") == "/mkdocs/calibration/"


def test_links_of_the_off_screen_drawer_are_not_listed(agent, site):
    page = agent.ok("open", site.url(agent.host, "/mkdocs/"))
    # At this width the navigation drawer is translated off-screen: only the text's links.
    assert refs(page, "link", "Home") == []
    assert len(refs(page, "link", "Calibration")) == 1
    agent.act("click", str(refs(page, "link", "Calibration")[0]))
    assert agent.ok("snapshot")["url"].endswith("/mkdocs/calibration/")
