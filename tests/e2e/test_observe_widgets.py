"""Issue 38 on real Chromium: what a widget's own markup leaves to the walker.
- A focusable or clickable element with no role inside a menu, menubar, listbox, tree or toolbar
  (an <li tabindex=0 aria-haspopup> opening a submenu: Chromium's tree ignores it) is offered with
  the role its container implies, named by its own text (not its submenu's), and says it opens a
  popup and whether it is open.
- Two nested controls of one target (a link around a button, a role=button around a
  role=button of the same name) are offered once, as the innermost; two controls of different
  names nested (a card link holding a Buy button) stay two."""

from tests.helpers import bp, ok

MENUS = """<ul role=menubar aria-label=Main>
 <li tabindex=0 aria-haspopup=true aria-expanded=false id=file>File
   <ul role=menu hidden><li role=menuitem tabindex=-1>New</li></ul></li>
 <li role=menuitem tabindex=-1>Help</li></ul>
<ul role=menu aria-label=Context>
 <li tabindex=0 aria-haspopup=true>Share <ul role=menu><li role=menuitem tabindex=-1>Email</li></ul></li>
 <li tabindex=-1 onclick="document.title = 'copied'">Copy</li></ul>
<div role=listbox aria-label=Fruit><div tabindex=0>Pear</div></div>
<div role=tree aria-label=Files><div tabindex=0>src</div></div>
<script>document.getElementById('file').onclick = (e) => { const f = e.currentTarget;
  f.setAttribute('aria-expanded', 'true'); f.querySelector('ul').hidden = false; };</script>"""

NESTED = """<a href="#go"><button>Go</button></a>
<div role=button tabindex=0 aria-label=Bold><span role=button aria-label=Bold>B</span></div>
<div role=button tabindex=0><div role=button tabindex=-1>Zoom</div></div>
<a href="#tea" style="display:block">Green tea <button>Buy</button></a>"""


def offered(observation):
    return [{k: v for k, v in e.items() if k not in ("ref", "context")} for e in observation["elements"]]


def test_entries_without_a_role_take_their_widget_s(home, connected, pages):
    page = ok(home, connected, "open", pages.page(MENUS))
    assert offered(page) == [
        {"role": "menuitem", "name": "File", "haspopup": "menu", "expanded": False},
        {"role": "menuitem", "name": "Help"},
        # No aria-expanded: the submenu it holds shows, so it is expanded.
        {"role": "menuitem", "name": "Share", "haspopup": "menu", "expanded": True},
        {"role": "menuitem", "name": "Email"},
        {"role": "menuitem", "name": "Copy"},
        {"role": "listbox", "name": "Fruit"},
        {"role": "option", "name": "Pear"},
        {"role": "treeitem", "name": "src"},
    ], page["elements"]
    file_ref = page["elements"][0]["ref"]
    clicked = bp(home, "click", str(file_ref), env=connected)
    assert clicked.rc == 0, clicked
    after = {e["name"]: e for e in clicked.json["snapshot"]["elements"]} if "snapshot" in clicked.json else \
        {e["name"]: e for e in ok(home, connected, "snapshot")["elements"]}
    assert after["File"]["expanded"] is True and after["File"]["ref"] == file_ref
    assert after["New"]["role"] == "menuitem"


def test_nested_controls_of_one_target_are_offered_once(home, connected, pages):
    page = ok(home, connected, "open", pages.page(NESTED))
    assert offered(page) == [
        {"role": "button", "name": "Go"},
        {"role": "button", "name": "Bold"},
        {"role": "button", "name": "Zoom"},
        {"role": "link", "name": "Green tea Buy"},
        {"role": "button", "name": "Buy"},
    ], page["elements"]
