"""TodoMVC, vanilla JS (npm todomvc, examples/vanillajs): its state is localStorage
'todos-vanillajs', read through the test's own DevTools connection."""

import pytest

from tests.realapps.agent import local_storage, ref_of, refs

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]

STORE = "todos-vanillajs"


def todos(chromium, site, agent):
    stored = local_storage(chromium, site.url(agent.host, "/"), STORE)
    return [(t["title"], t["completed"]) for t in (stored or {}).get("todos", [])]


def add(agent, page, *titles):
    """Type a todo and press Enter (the app adds it on the field's change and clears it)."""
    for title in titles:
        agent.act("type", ref_of(page, "textbox", "What needs to be done?"), title)
        page = agent.ok("press", "Enter")
    return page


def open_app(agent, site):
    return agent.ok("open", site.url(agent.host, "/todomvc/index.html"))


def test_type_submit_adds_three_todos_once_each(agent, site, chromium):
    page = open_app(agent, site)
    for title in ("Buy milk", "Walk the dog", "Water plants"):
        page = agent.act("type", ref_of(page, "textbox", "What needs to be done?"), title, "--submit")
    assert todos(chromium, site, agent) == [("Buy milk", False), ("Walk the dog", False), ("Water plants", False)]


def test_type_then_enter_adds_todos(agent, site, chromium):
    add(agent, open_app(agent, site), "Buy milk", "Walk the dog")
    assert todos(chromium, site, agent) == [("Buy milk", False), ("Walk the dog", False)]


def test_toggle_completes_one_todo(agent, site, chromium):
    page = add(agent, open_app(agent, site), "Buy milk", "Walk the dog")
    page = agent.ok("snapshot")
    toggles = refs(page, "checkbox", "")
    assert len(toggles) == 2
    agent.act("click", str(toggles[1]))
    assert todos(chromium, site, agent) == [("Buy milk", False), ("Walk the dog", True)]


def test_mark_all_as_complete(agent, site, chromium):
    add(agent, open_app(agent, site), "Buy milk", "Walk the dog", "Water plants")
    page = agent.ok("snapshot")
    agent.act("click", ref_of(page, "checkbox", "Mark all as complete"))
    assert todos(chromium, site, agent) == [("Buy milk", True), ("Walk the dog", True), ("Water plants", True)]


def test_clear_completed_removes_only_completed(agent, site, chromium):
    add(agent, open_app(agent, site), "Buy milk", "Walk the dog")
    page = agent.ok("snapshot")
    page = agent.act("click", str(refs(page, "checkbox", "")[0]))
    agent.act("click", ref_of(page, "button", contains="Clear completed"))
    assert todos(chromium, site, agent) == [("Walk the dog", False)]


def test_active_filter_link_shows_active_todos(agent, site, chromium):
    from tests.realapps.agent import page_eval

    add(agent, open_app(agent, site), "Buy milk", "Walk the dog")
    page = agent.ok("snapshot")
    page = agent.act("click", str(refs(page, "checkbox", "")[0]))
    agent.act("click", ref_of(page, "link", "Active"))
    shown = page_eval(chromium, site.url(agent.host, "/"),
                      "[location.hash, [...document.querySelectorAll('#todo-list li')].map(li => li.innerText.trim())]")
    assert shown == ["#/active", ["Walk the dog"]]
    assert todos(chromium, site, agent) == [("Buy milk", True), ("Walk the dog", False)]


def test_double_click_edits_a_todo(agent, site, chromium):
    add(agent, open_app(agent, site), "Buy milk")
    label = agent.ok("find", "#todo-list li label")["elements"][0]
    # The title's text is no control (Chromium: static text; the app listens on the list), so the
    # double-click goes to where it shows; the editor it opens is in the answer, with a ref.
    editing = agent.act("click", "--xy", f"{label['x'] + label['width'] // 2},{label['y'] + label['height'] // 2}",
                        "--double")
    editor = [e["ref"] for e in editing["elements"] if e["role"] == "textbox" and e.get("value") == "Buy milk"]
    assert len(editor) == 1, editing["elements"]
    agent.act("type", str(editor[0]), "Buy oat milk", "--clear", "--submit")
    assert todos(chromium, site, agent) == [("Buy oat milk", False)]


def test_unnamed_toggles_carry_their_todos_title_and_the_one_picked_by_it_completes(agent, site, chromium):
    page = add(agent, open_app(agent, site), "Buy milk", "Walk the dog")
    page = agent.ok("snapshot")
    toggles = [e for e in page["elements"] if e["role"] == "checkbox" and e["name"] == ""]
    assert [e.get("context") for e in toggles] == ["Buy milk", "Walk the dog"]
    agent.act("click", str([e["ref"] for e in toggles if e["context"] == "Walk the dog"][0]))
    assert todos(chromium, site, agent) == [("Buy milk", False), ("Walk the dog", True)]
