"""An action's answer leads with what the action changed (issue 25 item 8): a menu a click opened
at the end of a long page, or a button typing re-enabled, is in the answer even when the page has
more elements than the limit; the evidence says how many changed elements did not fit."""

from tests.helpers import ok, ref_of

# Eighty links before the menu's place: with the default limit (50) a menu appended at the end of
# the body would fall outside the answer in page order.
LINKS = "".join(f'<a href="#l{i}">Link {i}</a> ' for i in range(80))
MENU = """
<button id=open aria-haspopup=menu aria-expanded=false onclick="
  this.setAttribute('aria-expanded', 'true');
  const menu = document.createElement('div');
  menu.setAttribute('role', 'menu');
  for (const name of ['Rename', 'Share', 'Archive']) {
    const item = document.createElement('div');
    item.setAttribute('role', 'menuitem'); item.tabIndex = -1; item.textContent = name;
    menu.appendChild(item);
  }
  document.body.appendChild(menu);">Actions</button>
<button onclick="void 0">Nothing</button>
<button onclick="
  const box = document.createElement('div');
  for (let i = 0; i < 70; i++) { const b = document.createElement('button'); b.textContent = 'New ' + i; box.appendChild(b); }
  document.body.appendChild(box);">Add seventy</button>
"""


def names(observation):
    return [(e["role"], e["name"]) for e in observation["elements"]]


def test_a_menu_opened_past_the_limit_leads_the_answer(home, connected, pages):
    page = ok(home, connected, "open", pages.page(MENU + LINKS, title="lead"))
    assert len(page["elements"]) == 50 and page["truncated"]
    clicked = ok(home, connected, "click", ref_of(page, "button", "Actions"))
    listed = names(clicked)
    # The opened button (aria-expanded changed) and the three entries first, then the page in order.
    assert listed[:4] == [("button", "Actions"), ("menuitem", "Rename"), ("menuitem", "Share"),
                          ("menuitem", "Archive")], listed[:6]
    assert listed[4:6] == [("button", "Nothing"), ("button", "Add seventy")], listed[4:8]
    assert len(listed) == 50 and clicked["truncated"]
    assert "changedLeftOut" not in clicked["evidence"]
    # The refs are the elements' own: the menu entry acts.
    ok(home, connected, "click", ref_of(clicked, "menuitem", "Share"))


def test_an_action_that_changes_nothing_answers_in_page_order(home, connected, pages):
    page = ok(home, connected, "open", pages.page(MENU + LINKS, title="lead"))
    clicked = ok(home, connected, "click", ref_of(page, "button", "Nothing"))
    assert [e["ref"] for e in clicked["elements"]] == [e["ref"] for e in page["elements"]]


def test_changed_elements_that_do_not_fit_are_counted(home, connected, pages):
    page = ok(home, connected, "open", pages.page(MENU + LINKS, title="lead"))
    clicked = ok(home, connected, "click", ref_of(page, "button", "Add seventy"), "--limit", "30")
    listed = names(clicked)
    assert listed[:30] == [("button", f"New {i}") for i in range(30)], listed[:3]
    assert clicked["evidence"]["changedLeftOut"] == 40, clicked["evidence"]


def test_every_element_fits_so_the_page_order_stays(home, connected, pages):
    page = ok(home, connected, "open", pages.page(MENU, title="lead"))
    clicked = ok(home, connected, "click", ref_of(page, "button", "Actions"))
    assert names(clicked)[:3] == [("button", "Actions"), ("button", "Nothing"), ("button", "Add seventy")]
    assert ("menuitem", "Archive") in names(clicked)
