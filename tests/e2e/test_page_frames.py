"""`bp frame` and the page-context commands (eval, read, search, find, locate) in cross-site
(out-of-process) iframes on real Chromium: listed in document order, selectable, and their
geometry given in the tab's own viewport through every frame element above them."""

from tests.e2e.test_page import fails, ok, open_page

BOX = "border:6px solid #333;padding:4px;margin:{};width:{}px;height:{}px;display:block"


def cross_site(pages, deep_body="<p>Deep text</p><span id=deep-target>Deep target</span>"):
    """127.0.0.1 embeds a same-origin frame, site a (another process) and another same-origin
    frame; site a embeds site b (a third process) before a frame of its own site."""
    deep = pages.page(f"<script>var deepSecret = 'main-world-b'</script><h2>Deep heading</h2>{deep_body}",
                      title="Deep", site="b")
    local = pages.page("<p>Mid local text</p>", title="MidLocal", site="a")
    mid = pages.page(f"<h2>Mid heading</h2>"
                     f"<iframe name=deep src='{deep}' style='{BOX.format('20px 0 0 35px', 380, 220)}'></iframe>"
                     f"<iframe name=midlocal src='{local}' style='height:40px'></iframe>", title="Mid", site="a")
    first = pages.page("<p>First text</p>", title="First")
    last = pages.page("<p>Last text</p>", title="Last")
    top = pages.page(f"<h1>Top heading</h1><iframe name=first src='{first}' style='height:40px'></iframe>"
                     f"<iframe name=mid src='{mid}' style='{BOX.format('30px 0 0 55px', 520, 420)}'></iframe>"
                     f"<iframe name=last src='{last}' style='height:40px'></iframe>", title="Top")
    return {"top": top, "first": first, "mid": mid, "deep": deep, "midlocal": local, "last": last}


def frames(home, env):
    return ok(home, env, "frame")["frames"]


def index_of(home, env, name):
    return [f["index"] for f in frames(home, env) if f["name"] == name][0]


def test_frame_lists_cross_site_frames_in_document_order(home, connected, pages):
    urls = cross_site(pages)
    open_page(home, connected, urls["top"])
    assert frames(home, connected) == [
        {"index": 0, "url": urls["top"], "name": "", "selected": True},
        {"index": 1, "url": urls["first"], "name": "first", "selected": False, "parentIndex": 0},
        {"index": 2, "url": urls["mid"], "name": "mid", "selected": False, "parentIndex": 0},
        {"index": 3, "url": urls["deep"], "name": "deep", "selected": False, "parentIndex": 2},
        {"index": 4, "url": urls["midlocal"], "name": "midlocal", "selected": False, "parentIndex": 2},
        {"index": 5, "url": urls["last"], "name": "last", "selected": False, "parentIndex": 0},
    ]


def test_eval_read_search_and_find_run_in_a_selected_cross_site_frame(home, connected, pages):
    urls = cross_site(pages)
    open_page(home, connected, urls["top"])
    assert ok(home, connected, "frame", "3") == {"ok": True, "frame": 3, "url": urls["deep"]}
    # eval: the frame's own main world, where its page script's variables live.
    secret = ok(home, connected, "eval", "deepSecret + ':' + location.host.split(':')[0]")["value"]
    assert secret == "main-world-b:b.test"
    read = ok(home, connected, "read")
    assert (read["title"], read["url"]) == ("Deep", urls["deep"])
    assert read["text"] == "Deep heading\n\nDeep text\n\nDeep target"
    assert ok(home, connected, "search", "Deep text")["totalMatches"] == 1
    assert ok(home, connected, "search", "Top heading")["totalMatches"] == 0
    assert ok(home, connected, "find", "#deep-target")["elements"][0]["text"] == "Deep target"
    assert [f["selected"] for f in frames(home, connected)] == [False, False, False, True, False, False]
    # A same-site frame inside the cross-site one is served by that frame's process.
    ok(home, connected, "frame", "4")
    assert ok(home, connected, "read")["text"] == "Mid local text"
    assert ok(home, connected, "eval", "document.title")["value"] == "MidLocal"
    ok(home, connected, "frame", "0")
    assert ok(home, connected, "eval", "document.title")["value"] == "Top"


CONTENT = """(() => { const f = document.querySelector('iframe[name=%s]'); const r = f.getBoundingClientRect();
    const s = getComputedStyle(f);
    return [r.left + f.clientLeft + parseFloat(s.paddingLeft), r.top + f.clientTop + parseFloat(s.paddingTop)]; })()"""
RECT = """(() => { const r = document.querySelector('%s').getBoundingClientRect();
    return [r.left, r.top, r.width, r.height]; })()"""


def expected_box(home, env, selector):
    """The element's box in the tab's viewport, added up level by level with eval in each frame."""
    ok(home, env, "frame", "0")
    mx, my = ok(home, env, "eval", CONTENT % "mid")["value"]
    ok(home, env, "frame", "2")
    dx, dy = ok(home, env, "eval", CONTENT % "deep")["value"]
    ok(home, env, "frame", "3")
    x, y, w, h = ok(home, env, "eval", RECT % selector)["value"]
    return mx + dx + x, my + dy + y, w, h


def test_geometry_in_a_nested_cross_site_frame_is_in_the_tabs_viewport(home, connected, pages):
    urls = cross_site(pages)
    open_page(home, connected, urls["top"])
    left, top, width, height = expected_box(home, connected, "#deep-target")
    assert left > 100 and top > 100  # three levels of offsets, not the frame's own coordinates
    found = ok(home, connected, "find", "#deep-target")["elements"][0]
    assert abs(found["x"] - left) <= 1 and abs(found["y"] - top) <= 1, (found, left, top)
    match = ok(home, connected, "search", "Deep target")["matches"][0]
    assert abs(match["x"] - left) <= 1 and abs(match["y"] - top) <= 1, (match, left, top)
    located = ok(home, connected, "locate", "#deep-target")  # centres it: documents may scroll
    left, top, width, height = expected_box(home, connected, "#deep-target")
    assert abs(located["left"] - left) <= 1 and abs(located["top"] - top) <= 1, (located, left, top)
    assert (located["width"], located["height"]) == (round(width), round(height))


def test_locate_scrolls_a_match_deep_in_cross_site_frames_into_the_tabs_viewport(home, connected, pages):
    # The match is far below the fold of the deepest frame, whose frame element is itself below
    # the fold of the page.
    urls = cross_site(pages, deep_body="<div style='height:1500px'></div><button id=far>Far away</button>"
                                       "<div style='height:1500px'></div>")
    tall = pages.page(f"<div style='height:1400px'></div><iframe name=mid src='{urls['mid']}' "
                      f"style='{BOX.format('30px 0 0 55px', 520, 420)}'></iframe><div style='height:1400px'></div>",
                      title="Tall")
    open_page(home, connected, tall)
    deep = index_of(home, connected, "deep")
    assert deep == 2
    ok(home, connected, "frame", str(deep))
    located = ok(home, connected, "locate", "#far")
    ok(home, connected, "frame", "0")
    viewport = ok(home, connected, "eval", "[innerWidth, innerHeight]")["value"]
    assert 0 <= located["x"] < viewport[0] and 0 <= located["y"] < viewport[1], (located, viewport)
    # The reported box is where the element now is, level by level.
    mx, my = ok(home, connected, "eval", CONTENT % "mid")["value"]
    ok(home, connected, "frame", "1")
    dx, dy = ok(home, connected, "eval", CONTENT % "deep")["value"]
    ok(home, connected, "frame", "2")
    x, y, _, _ = ok(home, connected, "eval", RECT % "#far")["value"]
    assert abs(located["left"] - (mx + dx + x)) <= 1 and abs(located["top"] - (my + dy + y)) <= 1, located


def test_a_selected_cross_site_frame_that_went_away_fails_once(home, connected, pages, chromium):
    urls = cross_site(pages)
    open_page(home, connected, urls["top"])
    ok(home, connected, "frame", "3")
    tab = [raw for raw, info in chromium.pages().items() if info["url"] == urls["top"]][0]
    chromium.evaluate(tab, "document.querySelector('iframe[name=mid]').remove()")  # the page removes it
    gone = fails(home, connected, "read")
    assert gone.code == "stale_ref" and gone.json["context"] == {"field": "frame", "reason": "frame_detached"}
    assert ok(home, connected, "eval", "document.title")["value"] == "Top"
