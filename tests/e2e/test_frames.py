"""Cross-site (out-of-process) iframes on real Chromium: their elements join the tab's snapshot in
document order, and their refs are clicked and typed into at the right place at any nesting
depth and offset, with the same stale and obstruction rules as the top document."""

from tests.helpers import bp, ref_of


def element(observation, name):
    return [e for e in observation["elements"] if e["name"] == name][0]


FRAME_STYLE = "border:7px solid #333;padding:5px;width:420px;height:260px"
PRESS = "<button aria-pressed=false onclick=\"this.setAttribute('aria-pressed', this.getAttribute('aria-pressed') != 'true')\">{}</button>"


def nested_page(pages):
    """127.0.0.1 embeds site a at an offset; site a embeds site b at another offset (three
    renderer processes). Every level has pressable buttons at distinct positions."""
    deep = pages.page(f"<div style='margin:40px 0 0 90px'>{PRESS.format('Deep B')}</div>"
                      "<label style='margin-left:30px'><input type=checkbox> Deep box</label>", site="b")
    middle = pages.page(f"<div style='height:30px'></div>{PRESS.format('Inner A')}"
                        "<input aria-label='Inner field'>"
                        f"<iframe src='{deep}' style='margin:25px 0 0 60px;{FRAME_STYLE}'></iframe>", site="a")
    return pages.page(f"{PRESS.format('Top')}<div style='margin:120px 0 0 150px'>"
                      f"<iframe src='{middle}' style='{FRAME_STYLE};width:700px;height:560px'></iframe></div>"
                      f"{PRESS.format('After')}")


def test_cross_site_frames_join_the_snapshot_in_document_order(home, connected, pages):
    observation = bp(home, "open", nested_page(pages), env=connected).json
    names = [e["name"] for e in observation["elements"]]
    assert names == ["Top", "Inner A", "Inner field", "Deep B", "Deep box", "After"], observation
    assert not [h for h in observation["hints"] if h["code"] == "frames_omitted"]


def test_clicks_inside_nested_cross_site_frames_land_on_the_right_element(home, connected, pages):
    observation = bp(home, "open", nested_page(pages), env=connected).json
    for name in ("Deep B", "Inner A", "Top", "After"):
        result = bp(home, "click", str(ref_of(observation, "button", name)), env=connected)
        assert result.rc == 0, result
        assert result.json["evidence"]["status"] == "verified", (name, result.json["evidence"])
        assert "pressed_changed" in result.json["evidence"]["effects"], (name, result.json["evidence"])
        observation = result.json
    checkbox = bp(home, "click", str(ref_of(observation, "checkbox", "Deep box")), env=connected)
    assert checkbox.json["evidence"]["status"] == "verified", checkbox
    assert element(checkbox.json, "Deep box").get("checked") is True


def test_cross_origin_same_site_frames_are_observed_and_clicked(home, connected, pages):
    # www.a.test inside a.test: cross-origin (no DOM access between them) but the same site, so
    # Chromium renders both in one process and there is no separate frame target.
    inner = pages.page(f"<div style='margin:50px 0 0 70px'>{PRESS.format('Same site')}</div>", site="www.a")
    url = pages.page(f"<div style='height:90px'></div><iframe src='{inner}' style='{FRAME_STYLE}'></iframe>", site="a")
    observation = bp(home, "open", url, env=connected).json
    assert [e["name"] for e in observation["elements"]] == ["Same site"], observation
    result = bp(home, "click", str(ref_of(observation, "button", "Same site")), env=connected)
    assert result.json["evidence"]["status"] == "verified", result.json
    assert "pressed_changed" in result.json["evidence"]["effects"]


def test_typing_into_a_cross_site_frame_reads_back(home, connected, pages):
    observation = bp(home, "open", nested_page(pages), env=connected).json
    result = bp(home, "type", str(ref_of(observation, "textbox", "Inner field")), "hello frame", env=connected)
    assert result.rc == 0, result
    assert result.json["evidence"]["status"] == "verified", result.json["evidence"]
    assert element(result.json, "Inner field")["value"] == "hello frame"


def test_a_covered_cross_site_frame_is_refused_before_dispatch(home, connected, pages):
    inner = pages.page("<button onclick=\"document.title='clicked'\">Inside</button>", site="a")
    url = pages.page(f"<button onclick=\"document.getElementById('veil').style.display='block'\">Veil</button>"
                     f"<iframe src='{inner}' style='{FRAME_STYLE}'></iframe>"
                     "<div id=veil style='display:none;position:fixed;inset:0;background:rgba(0,0,0,.3)'></div>")
    observation = bp(home, "open", url, env=connected).json
    inside = ref_of(observation, "button", "Inside")
    # Veil the page through a page script so that the Agent's refs stay those of this observation.
    assert bp(home, "eval", "document.getElementById('veil').style.display='block'", env=connected).rc == 0
    veiled = bp(home, "click", str(inside), env=connected)
    assert veiled.rc != 0, veiled
    assert veiled.code == "action_not_verified", veiled
    assert veiled.json["context"]["reason"] == "obscured"
    assert veiled.json["context"]["obstruction"] == {"tagName": "div"}
    covered = bp(home, "snapshot", env=connected).json
    assert "Inside" not in [e["name"] for e in covered["elements"]]


def test_a_ref_in_a_frame_that_navigated_is_stale(home, connected, pages):
    first = pages.page("<button>Old inside</button>", site="a")
    second = pages.page("<button>Old inside</button>", site="b")
    url = pages.page(f"<iframe id=f src='{first}' style='{FRAME_STYLE}'></iframe>")
    observation = bp(home, "open", url, env=connected).json
    ref = ref_of(observation, "button", "Old inside")
    assert bp(home, "eval", f"document.getElementById('f').src = {second!r}; new Promise(r => f.onload = r)", env=connected).rc == 0
    result = bp(home, "click", str(ref), env=connected)
    assert result.rc != 0, result
    assert result.code == "stale_ref", result
    assert result.json["context"]["reason"] in ("frame_detached", "document_replaced"), result


def test_a_selected_frame_steers_the_snapshot_and_changing_it_fails_old_refs(home, connected, pages):
    same = pages.page(PRESS.format("Same inside"))
    cross = pages.page(PRESS.format("Cross inside"), site="a")
    url = pages.page(f"{PRESS.format('Top button')}<iframe name=same src='{same}' style='{FRAME_STYLE}'></iframe>"
                     f"<iframe name=cross src='{cross}' style='{FRAME_STYLE}'></iframe>")
    whole = bp(home, "open", url, env=connected).json
    names = lambda observation: [e["name"] for e in observation["elements"]]  # noqa: E731
    assert names(whole) == ["Top button", "Same inside", "Cross inside"]
    frames = {f["name"]: f["index"] for f in bp(home, "frame", env=connected).json["frames"]}
    assert bp(home, "frame", str(frames["same"]), env=connected).rc == 0
    # The whole tab's refs are of another frame selection now.
    stale = bp(home, "click", str(ref_of(whole, "button", "Top button")), env=connected)
    assert stale.code == "stale_ref" and stale.json["context"]["reason"] == "frame_changed", stale
    inside = bp(home, "snapshot", env=connected).json
    assert names(inside) == ["Same inside"]
    clicked = bp(home, "click", str(inside["elements"][0]["ref"]), env=connected).json
    assert clicked["evidence"]["status"] == "verified", clicked["evidence"]
    assert bp(home, "frame", str(frames["cross"]), env=connected).rc == 0
    assert names(bp(home, "snapshot", env=connected).json) == ["Cross inside"]
    assert bp(home, "frame", "0", env=connected).rc == 0
    assert names(bp(home, "snapshot", env=connected).json) == ["Top button", "Same inside", "Cross inside"]
