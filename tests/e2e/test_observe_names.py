"""Names an Agent can tell apart (`context` for repeated and empty names) and only what can be
reached (no element that no scrolling brings into view), on real Chromium."""

from tests.helpers import bp, ok

TABLE = """<h1>Users</h1><table><tr><th>Email</th><th>Plan</th><th></th></tr>
<tr><td>alice@example.com</td><td>Pro</td><td><button>Delete</button></td></tr>
<tr><td>bob@example.com</td><td>Pro</td><td><button>Delete</button></td></tr>
<tr><td>carol@example.com</td><td>Free</td><td><button>Delete</button></td></tr>
<tr><td>dave@example.com</td><td>Free</td><td><button>Delete</button></td></tr></table>
<button>Invite</button>"""

# TodoMVC's markup: the toggle and the destroy button have no name; the label is not theirs.
TODOS = """<ul class=todo-list>
<li><div class=view><input class=toggle type=checkbox><label>Buy milk</label><button class=destroy style="width:24px;height:24px"></button></div></li>
<li><div class=view><input class=toggle type=checkbox><label>Walk the dog</label><button class=destroy style="width:24px;height:24px"></button></div></li>
</ul>"""

FIELDSETS = """<h2>Checkout</h2><form>
<fieldset><legend>Shipping address</legend><label>Street <input name=ship></label><label>City <input name=ship_city></label></fieldset>
<fieldset><legend>Billing address</legend><label>Street <input name=bill></label><label>Town <input name=bill_city></label></fieldset>
</form>"""

UNREACHABLE = """<nav style="position:fixed;left:0;top:0;width:240px;transform:translateX(-100%)"><a href="#d">Drawer link</a></nav>
<div style="position:absolute;left:-500px;top:40px"><a href="#l">Left of the page</a></div>
<div style="overflow:hidden;height:0"><a href="#z">Zero-size clip</a></div>
<div style="overflow:hidden;width:120px;height:30px;white-space:nowrap"><span style="display:inline-block;width:400px"></span><a href="#h">Clipped away</a></div>
<div style="overflow:hidden;width:120px;height:30px"><div style="position:absolute;top:60px"><a href="#e">Escapes the clip</a></div></div>
<div style="overflow-x:auto;width:200px;white-space:nowrap"><span style="display:inline-block;width:700px"></span><a href="#c">Carousel end</a></div>
<div style="height:80px;overflow:auto"><div style="height:900px"></div><a href="#s">In the scroller</a></div>
<div style="height:3000px"></div><a href="#f">Below the fold</a>"""


def elements(observation, role=None, name=None):
    return [e for e in observation["elements"] if (role is None or e["role"] == role) and (name is None or e["name"] == name)]


def test_repeated_names_in_table_rows_get_the_rows_first_cell(home, connected, pages):
    page = ok(home, connected, "open", pages.page(TABLE))
    deletes = elements(page, "button", "Delete")
    assert [e["context"] for e in deletes] == ["alice@example.com", "bob@example.com", "carol@example.com",
                                                "dave@example.com"]
    assert "context" not in elements(page, "button", "Invite")[0]
    human = bp(home, "--human", "snapshot", env=connected)
    assert human.rc == 0, human
    assert any(line.endswith('button "Delete" context="carol@example.com"') for line in human.stdout.splitlines())


def test_unnamed_controls_in_list_items_get_their_items_text(home, connected, pages):
    page = ok(home, connected, "open", pages.page(TODOS))
    assert [(e["role"], e["name"], e["context"]) for e in page["elements"]] == [
        ("checkbox", "", "Buy milk"), ("button", "", "Buy milk"),
        ("checkbox", "", "Walk the dog"), ("button", "", "Walk the dog")]


def test_repeated_field_names_get_their_fieldsets_legend(home, connected, pages):
    page = ok(home, connected, "open", pages.page(FIELDSETS))
    assert [e["context"] for e in elements(page, "textbox", "Street")] == ["Shipping address", "Billing address"]
    assert all("context" not in e for e in elements(page, "textbox") if e["name"] != "Street")


def test_a_page_of_distinct_names_has_no_context(home, connected, pages):
    page = ok(home, connected, "open", pages.url("/corpus/native_controls"))
    assert page["elements"] and all("context" not in e for e in page["elements"])


def test_context_is_short(home, connected, pages):
    long_cell = "x" * 300
    page = ok(home, connected, "open", pages.page(f"<table><tr><td>{long_cell}</td><td><button>Edit</button></td></tr>"
                                                   f"<tr><td>y</td><td><button>Edit</button></td></tr></table>"))
    contexts = [e["context"] for e in elements(page, "button", "Edit")]
    assert len(contexts[0]) <= 80 and contexts[0].startswith("xxx") and contexts[1] == "y"


def test_only_what_scrolling_can_bring_into_view_is_listed(home, connected, pages):
    page = ok(home, connected, "open", pages.page(UNREACHABLE))
    names = [e["name"] for e in elements(page, "link")]
    assert names == ["Escapes the clip", "Carousel end", "In the scroller", "Below the fold"]


def test_what_is_listed_off_screen_can_be_clicked(home, connected, pages):
    url = pages.page(UNREACHABLE)
    for name, fragment in (("Carousel end", "#c"), ("In the scroller", "#s"), ("Below the fold", "#f")):
        page = ok(home, connected, "open", url)
        clicked = ok(home, connected, "click", str(elements(page, "link", name)[0]["ref"]))
        assert clicked["url"].endswith(fragment), (name, clicked["url"])


def test_an_element_moved_out_of_reach_after_the_snapshot_is_refused(home, connected, pages, chromium):
    url = pages.page("<nav id=d style='position:fixed;left:0;top:0;width:240px'><a href='#n'>Menu entry</a></nav>",
                     title="drawer")
    page = ok(home, connected, "open", url)
    ref = elements(page, "link", "Menu entry")[0]["ref"]
    raw = [t for t, i in chromium.pages().items() if i["title"] == "drawer"][0]
    chromium.evaluate(raw, "document.getElementById('d').style.transform = 'translateX(-100%)'; 1")
    refused = bp(home, "click", str(ref), env=connected)
    assert refused.code == "action_not_verified", refused
    assert refused.json["context"]["reason"] == "outside_viewport"
    assert chromium.evaluate(raw, "location.hash")["result"]["result"]["value"] == ""


# flatpickr's month arrows: <span>s holding an SVG, no name; their classes say what they do.
ARROWS = """<h1>Booking</h1><div class=cal>
<span class="flatpickr-prev-month" onclick="document.title='prev'"><svg width=14 height=14><path d="M0 0h14v14z"/></svg></span>
<span class=cur-month>March</span>
<span class="flatpickr-next-month" onclick="document.title='next'"><svg width=14 height=14><path d="M0 0h14v14z"/></svg></span></div>
<button class="iconButton js-more"><svg width=10 height=10></svg></button><button class=btn-close aria-label=Close></button>"""


def test_a_nameless_control_takes_its_purpose_from_its_class(home, connected, pages):
    observation = ok(home, connected, "open", pages.page(ARROWS))
    assert [(e["name"], e.get("context")) for e in observation["elements"]] == [
        ("", "prev month"), ("", "next month"), ("", "more"), ("Close", None)], observation["elements"]
    clicked = ok(home, connected, "click", str(observation["elements"][1]["ref"]))
    assert clicked["title"] == "next"
