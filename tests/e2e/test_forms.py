"""`bp scroll`, `bp dropdown` and `bp select` on real Chromium: measured scroll evidence,
option lists of native and ARIA dropdowns, and selections read back from the page."""

from tests import helpers
from tests.helpers import bp, ok, ref_of


def element(observation, role, name):
    return [e for e in observation["elements"] if (e["role"], e["name"]) == (role, name)][0]


LONG = """<div style="height:5000px;width:3000px">top of page</div>
<p id=far>Needle in the haystack</p><div style="height:3000px"></div>
<div id=box aria-label=Box tabindex=0 style="height:100px;overflow:auto">
  <div style="height:1000px">box content</div></div>
<my-card></my-card><div style="height:2000px"></div>
<script>customElements.define("my-card", class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: "open"}).innerHTML = "<p>Shadowed sentence here</p>"; } });</script>"""


TALL = '<div style="height:5000px">tall</div>'


def test_scroll_down_and_up_by_viewports_reports_measured_deltas(home, connected, pages):
    opened = bp(home, "open", pages.page(TALL), env=connected).json
    height = opened["page"]["viewportHeight"]
    down = bp(home, "scroll", env=connected)
    assert down.rc == 0, down
    evidence = down.json["evidence"]
    assert helpers.without_settle(evidence) == {"action": "scroll", "status": "verified", "mode": "relative", "target": "page", "moved": True,
                        "deltaX": 0, "deltaY": height, "beforeX": 0, "beforeY": 0, "afterX": 0, "afterY": height}
    assert down.json["page"]["scrollY"] == height
    up = bp(home, "scroll", "up", "--amount", "0.5", env=connected).json["evidence"]
    assert (up["status"], up["deltaY"], up["afterY"]) == ("verified", -round(height / 2), height - round(height / 2))


def test_scrolling_past_an_end_is_a_mismatch_at_boundary(home, connected, pages):
    bp(home, "open", pages.page(LONG), env=connected)
    result = bp(home, "scroll", "up", env=connected)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert (evidence["status"], evidence["reason"], evidence["moved"], evidence["deltaY"]) == \
        ("mismatch", "at_boundary", False, 0)


def test_scroll_in_pixels_and_sideways(home, connected, pages):
    bp(home, "open", pages.page(LONG), env=connected)
    down = bp(home, "scroll", "down", "--amount", "250", "--unit", "pixels", env=connected).json["evidence"]
    assert (down["deltaY"], down["afterY"]) == (250, 250)
    right = bp(home, "scroll", "right", "--amount", "100", "--unit", "pixels", env=connected).json["evidence"]
    assert (right["deltaX"], right["deltaY"], right["afterX"]) == (100, 0, 100)


def test_scroll_to_end_and_back_to_start(home, connected, pages):
    bp(home, "open", pages.page(LONG), env=connected)
    end = bp(home, "scroll", "--to", "end", env=connected).json
    assert end["evidence"]["mode"] == "position" and end["evidence"]["status"] == "verified"
    assert end["page"]["pixelsBelow"] == 0 and end["page"]["scrollY"] == end["evidence"]["afterY"] > 0
    again = bp(home, "scroll", "--to", "end", env=connected).json["evidence"]
    assert (again["status"], again["reason"]) == ("mismatch", "at_boundary")
    start = bp(home, "scroll", "--to", "start", env=connected).json
    assert start["evidence"]["afterY"] == 0 and start["page"]["scrollY"] == 0


def test_a_container_scrolls_by_ref_or_selector_and_the_page_stays(home, connected, pages):
    bp(home, "open", pages.page(LONG), env=connected)
    by_selector = bp(home, "scroll", "--selector", "#box", "--amount", "40", "--unit", "pixels", env=connected)
    assert by_selector.rc == 0, by_selector
    evidence = by_selector.json["evidence"]
    assert (evidence["target"], evidence["deltaY"], evidence["afterY"]) == ("element", 40, 40)
    assert by_selector.json["page"]["scrollY"] == 0
    end = bp(home, "scroll", "--selector", "#box", "--to", "end", env=connected).json["evidence"]
    assert (end["target"], end["afterY"]) == ("element", 900)
    # Focusable with no role of its own: offered, a ref (a role=region would be read, not offered:
    # test_a_focusable_structure_is_read_not_offered).
    box = ref_of(bp(home, "snapshot", env=connected).json, "button", "Box")
    by_ref = bp(home, "scroll", "up", "--ref", str(box), env=connected).json["evidence"]
    assert (by_ref["target"], by_ref["deltaY"], by_ref["afterY"]) == ("element", -100, 800)
    missing = bp(home, "scroll", "--selector", "#nope", env=connected)
    assert missing.code == "invalid_argument" and missing.json["context"]["field"] == "selector"


def test_scroll_to_text_brings_the_match_into_view(home, connected, pages):
    bp(home, "open", pages.page(LONG), env=connected)
    result = bp(home, "scroll", "--to-text", "needle IN the", env=connected)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert (evidence["status"], evidence["mode"], evidence["target"], evidence["moved"]) == \
        ("verified", "text", "text", True)
    assert evidence["matchedText"] == "Needle in the"
    y = evidence["afterY"]
    assert y > 4000 and result.json["page"]["scrollY"] == y
    shadow = bp(home, "scroll", "--to-text", "Shadowed sentence here", "--exact", env=connected).json["evidence"]
    assert (shadow["status"], shadow["matchedText"]) == ("verified", "Shadowed sentence here")
    assert shadow["afterY"] > y


def test_scroll_to_missing_text_is_text_not_found(home, connected, pages):
    bp(home, "open", pages.page(LONG), env=connected)
    result = bp(home, "scroll", "--to-text", "no such words anywhere", env=connected)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert (evidence["status"], evidence["reason"], evidence["moved"]) == ("mismatch", "text_not_found", False)
    assert "matchedText" not in evidence
    exact = bp(home, "scroll", "--to-text", "needle in the haystack", "--exact", env=connected).json["evidence"]
    assert exact["reason"] == "text_not_found"  # --exact is case-sensitive and whole-text


def test_scroll_modes_are_mutually_exclusive(home, connected):
    for args in (("down", "--to", "end"), ("--to", "end", "--to-text", "x"), ("up", "--to-text", "x"),
                 ("--ref", "1", "--selector", "#a"), ("--to", "end", "--amount", "2"), ("--exact",)):
        result = bp(home, "scroll", *args, env=connected)
        assert result.code == "invalid_argument", (args, result)


FORM = """<label for=fruit>Fruit</label> <select id=fruit onchange="document.title='changed:'+this.value">
  <option value=a>Apple</option><option value=b>Banana split</option><option value=c disabled>Cherry</option>
  <option value=d>Durian</option></select>
<label for=locked>Locked</label> <select id=locked disabled><option>One</option><option>Two</option></select>
<span id=flv>Flavour</span>
<button id=fruitbox role=combobox aria-labelledby="flv fruitbox" aria-expanded=false aria-controls=flavours
  onclick="openList()">Pick a flavour</button>
<div id=flavours role=listbox hidden></div>
<script>
function openList() {
  const box = document.getElementById("fruitbox"), list = document.getElementById("flavours");
  setTimeout(() => {  // rendered a moment after the click, as frameworks do
    list.innerHTML = "";
    for (const name of ["Vanilla", "Chocolate", "Strawberry"]) {
      const o = document.createElement("div");
      o.setAttribute("role", "option"); o.textContent = name; o.style.padding = "4px";
      o.setAttribute("aria-selected", String(box.dataset.value === name));
      o.onclick = () => { box.dataset.value = name; box.textContent = name; list.hidden = true;
                          box.setAttribute("aria-expanded", "false"); };
      list.appendChild(o);
    }
    list.hidden = false; box.setAttribute("aria-expanded", "true");
  }, 30);
}
</script>
<div role=listbox aria-label=Sizes>
  <div role=option aria-selected=false onclick="this.setAttribute('aria-selected','true')">Small</div>
  <div role=option aria-selected=true>Large</div></div>"""


def test_dropdown_lists_native_options(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "dropdown", str(ref_of(observation, "combobox", "Fruit")), env=connected)
    assert result.rc == 0, result
    assert result.json == {
        "ok": True, "url": result.json["url"], "kind": "native", "expanded": False, "multiple": False,
        "requiresOpen": False, "truncated": False,
        "options": [{"index": 1, "label": "Apple", "value": "a", "selected": True, "disabled": False},
                    {"index": 2, "label": "Banana split", "value": "b", "selected": False, "disabled": False},
                    {"index": 3, "label": "Cherry", "value": "c", "selected": False, "disabled": True},
                    {"index": 4, "label": "Durian", "value": "d", "selected": False, "disabled": False}]}
    assert result.json["url"].startswith("http://127.0.0.1")
    assert bp(home, "dropdown", "#fruit", env=connected).json["options"] == result.json["options"]


def test_dropdown_on_a_closed_aria_combobox_requires_open(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "dropdown", str(ref_of(observation, "combobox", "Flavour Pick a flavour")), env=connected)
    assert result.rc == 0, result
    assert (result.json["kind"], result.json["expanded"], result.json["requiresOpen"], result.json["options"]) == \
        ("aria", False, True, [])
    assert "bp select REF LABEL" in result.json["hint"]  # not "nothing to choose": how to see them
    sizes = bp(home, "dropdown", "[aria-label=Sizes]", env=connected).json
    assert "hint" not in sizes
    assert (sizes["kind"], sizes["requiresOpen"]) == ("aria", False)
    assert [(o["label"], o["selected"]) for o in sizes["options"]] == [("Small", False), ("Large", True)]
    not_one = bp(home, "dropdown", "label", env=connected)
    assert not_one.code == "invalid_argument" and not_one.json["context"]["field"] == "target"


def test_select_native_by_label_value_index_and_contains(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    fruit = str(ref_of(observation, "combobox", "Fruit"))
    by_label = bp(home, "select", fruit, "Durian", env=connected)
    assert by_label.rc == 0, by_label
    assert helpers.without_settle(by_label.json["evidence"]) == {"action": "select", "status": "verified", "kind": "native",
                                         "selected": ["Durian"]}
    assert by_label.json["title"] == "changed:d"  # the page's change handler ran
    assert element(by_label.json, "combobox", "Fruit")["value"] == "Durian"
    fruit = str(ref_of(by_label.json, "combobox", "Fruit"))
    by_value = bp(home, "select", fruit, "b", "--by", "value", env=connected).json
    assert by_value["evidence"]["selected"] == ["Banana split"] and by_value["title"] == "changed:b"
    by_index = bp(home, "select", "#fruit", "1", "--by", "index", env=connected).json
    assert by_index["evidence"]["selected"] == ["Apple"]
    contains = bp(home, "select", "#fruit", "SPLIT", "--contains", env=connected).json
    assert (contains["evidence"]["status"], contains["evidence"]["selected"]) == ("verified", ["Banana split"])


def test_select_an_unknown_option_is_a_mismatch_and_changes_nothing(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "select", str(ref_of(observation, "combobox", "Fruit")), "Mango", env=connected)
    assert result.rc == 0, result
    assert helpers.without_settle(result.json["evidence"]) == {"action": "select", "status": "mismatch", "kind": "native",
                                       "selected": ["Apple"], "reason": "option_not_found"}
    assert result.json["title"] == "page"
    assert bp(home, "select", "#fruit", "Split", env=connected).json["evidence"]["reason"] == "option_not_found"
    disabled_option = bp(home, "select", "#fruit", "Cherry", env=connected)
    assert disabled_option.code == "action_not_verified"


def test_select_on_a_disabled_select_is_refused(home, connected, pages, chromium):
    url = pages.page(FORM)
    observation = bp(home, "open", url, env=connected).json
    fruit = str(ref_of(observation, "combobox", "Fruit"))
    tab = [t for t, info in chromium.pages().items() if info["url"] == url][0]
    chromium.evaluate(tab, "document.getElementById('fruit').disabled = true")  # after the snapshot
    result = bp(home, "select", fruit, "Durian", env=connected)
    assert result.code == "action_not_verified", result
    assert result.json["context"]["reason"] == "disabled"
    by_selector = bp(home, "select", "#locked", "Two", env=connected)
    assert (by_selector.code, by_selector.json["context"]["reason"]) == ("action_not_verified", "disabled")
    assert bp(home, "dropdown", "#fruit", env=connected).json["options"][3]["selected"] is False


def test_select_opens_an_aria_combobox_and_clicks_the_option(home, connected, pages):
    observation = bp(home, "open", pages.page(FORM), env=connected).json
    result = bp(home, "select", str(ref_of(observation, "combobox", "Flavour Pick a flavour")), "Chocolate", env=connected)
    assert result.rc == 0, result
    assert helpers.without_settle(result.json["evidence"]) == {"action": "select", "status": "verified", "kind": "aria",
                                       "selected": ["Chocolate"]}
    element(result.json, "combobox", "Flavour Chocolate")  # the observation shows the choice
    shown = bp(home, "dropdown", "#fruitbox", env=connected).json
    assert shown["requiresOpen"] is True  # it closed after the choice
    sizes = bp(home, "select", "[aria-label=Sizes]", "small", "--contains", env=connected).json
    assert (sizes["evidence"]["status"], sizes["evidence"]["kind"]) == ("verified", "aria")
    assert sizes["evidence"]["selected"] == ["Small", "Large"]


def test_select_an_unknown_aria_option_after_opening_is_option_not_found(home, connected, pages):
    bp(home, "open", pages.page(FORM), env=connected)
    result = bp(home, "select", "#fruitbox", "Pistachio", env=connected)
    assert result.rc == 0, result
    assert (result.json["evidence"]["status"], result.json["evidence"]["reason"]) == ("mismatch", "option_not_found")


def test_stale_refs_are_refused_before_anything_happens(home, connected, pages, chromium):
    url = pages.page(FORM)
    observation = bp(home, "open", url, env=connected).json
    fruit = str(ref_of(observation, "combobox", "Fruit"))
    for args in (("select", "99", "Apple"), ("dropdown", "99"), ("scroll", "--ref", "99")):
        result = bp(home, *args, env=connected)
        assert (result.code, result.json["context"]["reason"]) == ("stale_ref", "unknown_ref"), (args, result)
    tab = [t for t, info in chromium.pages().items() if info["url"] == url][0]
    chromium.evaluate(tab, "document.title = 'untouched'; document.getElementById('fruit').remove()")
    for args in (("select", fruit, "Durian"), ("dropdown", fruit), ("scroll", "--ref", fruit)):
        result = bp(home, *args, env=connected)
        assert result.code == "stale_ref", (args, result)
    assert bp(home, "snapshot", env=connected).json["title"] == "untouched"


def test_a_page_change_after_opening_stops_the_selection_as_unknown_outcome(home, connected, pages):
    html = """<button id=jump role=combobox aria-label=Jumpy aria-expanded=false aria-controls=none
      onclick="location.href='/page?title=moved'">Choose</button>"""
    observation = bp(home, "open", pages.page(html), env=connected).json
    result = bp(home, "select", str(ref_of(observation, "combobox", "Jumpy")), "Anything", env=connected)
    assert result.code == "unknown_outcome", result
    context = result.json["context"]
    assert (context["action"], context["step"], context["dispatchedSteps"], context["remainingStepsStopped"]) == \
        ("select", "options", 1, True)
    assert context["reason"] in ("document_changed", "loader_changed")
    assert bp(home, "snapshot", env=connected).json["title"] == "moved"


DATE_FIELDS = """
<label>Launch <input type=date id=d></label>
<label>At <input type=time id=t></label>
<label>Starts <input type=datetime-local id=dt></label>
<label>Month <input type=month id=m></label>
<script>
  window.heard = [];
  for (const el of document.querySelectorAll('input'))
    for (const kind of ['input', 'change']) el.addEventListener(kind, () => heard.push(el.id + ':' + kind));
</script>
"""


def test_type_sets_a_native_date_or_time_field_whole_and_reads_it_back(home, connected, pages):
    page = ok(home, connected, "open", pages.page(DATE_FIELDS, title="dates"))
    for name, value in (("Launch", "2026-03-14"), ("At", "09:30"), ("Starts", "2026-03-14T09:30"),
                        ("Month", "2026-03")):
        typed = ok(home, connected, "type", str(ref_of(page, "textbox", name)), value, "--clear")
        evidence = typed["evidence"]
        assert evidence["status"] == "verified" and evidence["kind"] == "date", evidence
        assert evidence["method"] == "value" and evidence["afterLength"] == len(value)
        page = typed
    values = ok(home, connected, "eval", "[...document.querySelectorAll('input')].map(e => e.value)")["value"]
    assert values == ["2026-03-14", "09:30", "2026-03-14T09:30", "2026-03"]
    # The page heard what a picker fires: input, then change, once per field.
    assert ok(home, connected, "eval", "heard")["value"] == [
        f"{i}:{k}" for i in ("d", "t", "dt", "m") for k in ("input", "change")]


def test_a_date_the_field_does_not_take_is_refused_and_changes_nothing(home, connected, pages):
    page = ok(home, connected, "open", pages.page(DATE_FIELDS, title="dates"))
    ref = str(ref_of(page, "textbox", "Launch"))
    ok(home, connected, "type", ref, "2026-03-14", "--clear")
    result = bp(home, "type", ref, "14/03/2026", "--clear", env=connected)
    assert result.rc == 1 and result.code == "invalid_argument", result
    assert result.json["context"] == {"field": "text", "inputType": "date"}
    assert "14/03/2026" not in result.stdout + result.stderr  # typed text is never echoed
    assert "YYYY-MM-DD" in result.json["error"]
    assert ok(home, connected, "eval", "document.getElementById('d').value")["value"] == "2026-03-14"
    assert ok(home, connected, "eval", "heard.length")["value"] == 2  # nothing fired for the refusal
