"""Evidence that tells the truth on pages that behave like real apps: a field the app clears
after Enter (TodoMVC), a <details> disclosure, a menu rendered a moment after the click, and the
message of a dialog the input opened."""

import json

from tests.helpers import ok, ref_of


def page_value(home, env, expression):
    return ok(home, env, "eval", expression)["value"]


# Like TodoMVC: Enter adds the todo (stored like the app stores it) and clears the field.
TODOS = """<input class="new-todo" aria-label="What needs to be done?" autofocus>
<ul class="todo-list"></ul>
<script>
const todos = [];
document.querySelector(".new-todo").addEventListener("keydown", (e) => {
  if (e.key !== "Enter" || !e.target.value.trim()) return;
  todos.push(e.target.value.trim());
  localStorage.setItem("todos-vanilla", JSON.stringify(todos));
  const li = document.createElement("li"); li.textContent = e.target.value.trim();
  document.querySelector(".todo-list").append(li);
  e.target.value = "";
});
</script>"""


def test_submit_into_a_field_the_app_clears_is_verified_and_never_repeated(home, connected, pages):
    page = ok(home, connected, "open", pages.page(TODOS, title="todos"))
    page_value(home, connected, "localStorage.clear()")
    for todo in ("Buy milk", "Walk dog", "Read book"):
        result = ok(home, connected, "type", ref_of(page, "textbox", "What needs to be done?"), todo, "--submit")
        evidence = result["evidence"]
        assert evidence["status"] == "verified", evidence
        assert evidence["effects"] == ["value_cleared"]
        assert (evidence["expectedLength"], evidence["afterLength"]) == (len(todo), 0)
        assert not [h for h in result["hints"] if h["code"] == "repeated_action"], result["hints"]
        page = result
    # The app's own state: exactly three todos, none duplicated.
    assert json.loads(page_value(home, connected, "localStorage.getItem('todos-vanilla')")) == \
        ["Buy milk", "Walk dog", "Read book"]


def test_keyboard_submit_into_a_field_the_app_clears_is_verified(home, connected, pages):
    ok(home, connected, "open", pages.page(TODOS, title="todos"))
    result = ok(home, connected, "keyboard", "Buy milk", "--submit", "--click", ".new-todo")
    assert result["evidence"]["status"] == "verified", result["evidence"]
    assert result["evidence"]["effects"] == ["value_cleared"]
    assert page_value(home, connected, "document.querySelectorAll('.todo-list li').length") == 1


def test_a_details_summary_click_reports_it_expanded(home, connected, pages):
    page = ok(home, connected, "open", pages.page("<details><summary>Advanced</summary><p>More options</p></details>"))
    opened = ok(home, connected, "click", ref_of(page, "button", "Advanced"))
    assert opened["evidence"]["expanded"] is True, opened["evidence"]
    assert "expanded_changed" in opened["evidence"]["effects"]
    assert page_value(home, connected, "document.querySelector('details').open") is True
    closed = ok(home, connected, "click", ref_of(opened, "button", "Advanced"))
    assert closed["evidence"]["expanded"] is False


# A settings cog whose menu the app renders a few ms after the click (a framework's next tick).
COG = """<button id="cog" aria-label="Settings">&#9881;</button><div id="menu"></div>
<script>
document.getElementById("cog").addEventListener("click", () => setTimeout(() => {
  const menu = document.getElementById("menu");
  menu.setAttribute("role", "menu");
  for (const label of ["Profile", "Sign out"]) {
    const item = document.createElement("div"); item.setAttribute("role", "menuitem"); item.tabIndex = -1;
    item.textContent = label; menu.append(item);
  }
}, 40));
</script>"""


def test_a_menu_rendered_after_the_click_is_an_effect_and_in_the_observation(home, connected, pages):
    page = ok(home, connected, "open", pages.page(COG))
    result = ok(home, connected, "click", ref_of(page, "button", "Settings"))
    assert result["evidence"]["status"] == "verified", result["evidence"]
    assert "content_changed" in result["evidence"]["effects"]
    names = {(e["role"], e["name"]) for e in result["elements"]}
    assert {("menuitem", "Profile"), ("menuitem", "Sign out")} <= names, result["elements"]


def test_a_click_that_opens_a_confirm_carries_its_message_as_wait_dialog_does(home, connected, pages):
    page = ok(home, connected, "open", pages.page(
        "<button onclick=\"window.answer = confirm('Delete 3 rows?')\">Delete</button>"))
    result = ok(home, connected, "click", ref_of(page, "button", "Delete"))
    assert result["evidence"]["effects"] == ["dialog_opened"]
    assert result["dialog"]["message"] == "Delete 3 rows?"
    assert result["dialog"]["type"] == "confirm"
    waited = ok(home, connected, "wait", "--dialog")["matched"]
    assert (waited["dialogId"], waited["message"], waited["type"]) == \
        (result["dialog"]["dialogId"], "Delete 3 rows?", "confirm")
    ok(home, connected, "dialog", waited["dialogId"], "--accept")
    assert page_value(home, connected, "window.answer") is True
