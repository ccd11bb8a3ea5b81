"""Evidence that never overclaims (issue 25 item 9), on real Chromium: a coordinate click on
empty space is never `verified`, and says what was under the point; a menu item that closes its
menu is not a `mismatch`."""

from tests.helpers import bp, ok, ref_of

# Any click anywhere adds a line: a coordinate click on empty space still "changes the page".
LOGGING = """<style>body{margin:0} #b{position:absolute;left:20px;top:20px;width:120px;height:40px}</style>
<button id=b onclick="this.textContent='Saved'">Save</button><div id=log></div>
<script>document.addEventListener('click', () => { const p = document.createElement('p');
p.textContent = 'clicked'; document.getElementById('log').appendChild(p); });</script>"""


def test_a_coordinate_click_on_empty_space_is_not_verified(home, connected, pages):
    ok(home, connected, "open", pages.page(LOGGING))
    result = bp(home, "click", "--xy", "300,200", env=connected)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert "content_changed" in evidence["effects"], evidence  # the page did change...
    assert evidence["status"] == "unavailable" and evidence["reason"] == "coordinate_target", evidence
    assert evidence["under"]["before"]["tag"] in ("html", "body"), evidence  # ...but nothing was there


def test_a_coordinate_click_on_a_control_is_verified_and_names_it(home, connected, pages):
    ok(home, connected, "open", pages.page(LOGGING))
    result = bp(home, "click", "--xy", "60,40", env=connected)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert evidence["status"] == "verified", evidence
    assert evidence["under"]["before"] == {"tag": "button", "name": "Save"}, evidence
    assert evidence["under"]["after"] == {"tag": "button", "name": "Saved"}, evidence


MENU = """<button id=sort aria-haspopup=menu aria-expanded=false onclick="
  document.getElementById('menu').hidden = false; this.setAttribute('aria-expanded', 'true')">Sort</button>
<div role=menu id=menu hidden>
  <div role=menuitemcheckbox aria-checked=false tabindex=-1 onclick="
    document.getElementById('menu').hidden = true; document.getElementById('sort').setAttribute('aria-expanded', 'false');
    document.getElementById('sort').textContent = 'Sort: by name'">By name</div>
</div>"""


def test_a_menu_item_that_closes_its_menu_is_not_a_mismatch(home, connected, pages):
    page = ok(home, connected, "open", pages.page(MENU))
    opened = bp(home, "click", ref_of(page, "button", "Sort"), env=connected)
    assert opened.rc == 0, opened
    chosen = bp(home, "click", ref_of(opened.json, "menuitemcheckbox", "By name"), env=connected)
    assert chosen.rc == 0, chosen
    evidence = chosen.json["evidence"]
    assert evidence["status"] != "mismatch", evidence
    assert evidence["status"] == "unavailable" and evidence["reason"] == "control_closed", evidence
    assert "Sort: by name" in [e["name"] for e in chosen.json["elements"]]


def test_a_press_another_element_took_is_a_mismatch_that_names_it(home, connected, pages):
    """The button runs from the pointer (it moves on mouseover, before the press): the press lands
    on the panel beneath, which the evidence names instead of claiming the button's effects."""
    page = ok(home, connected, "open", pages.page(
        '<div id=panel role=region aria-label=Panel style="position:relative;height:200px">'
        '<button id=run style="position:absolute;top:20px;left:20px" '
        'onmouseover="this.style.left = \'400px\'" onclick="window.ran = true">Run</button></div>'))
    clicked = ok(home, connected, "click", str(ref_of(page, "button", "Run")))
    evidence = clicked["evidence"]
    assert (evidence["status"], evidence["reason"]) == ("mismatch", "pressed_elsewhere"), evidence
    assert evidence["pressedInstead"] == {"tagName": "div", "role": "region"}
    assert ok(home, connected, "eval", "window.ran === true")["value"] is False


def test_an_element_shown_whole_is_clicked_where_it_is_without_scrolling(home, connected, pages):
    """Centring a visible element would scroll the page under popovers anchored to the scroll."""
    page = ok(home, connected, "open", pages.page(
        '<div style="height:3000px"><button style="margin-top:150px" onclick="window.hits = (window.hits || 0) + 1">'
        'Near the top</button></div>'))
    ok(home, connected, "eval", "window.scrollTo(0, 100)")
    ok(home, connected, "click", str(ref_of(page, "button", "Near the top")))
    assert ok(home, connected, "eval", "[window.scrollY, window.hits]")["value"] == [100, 1]
