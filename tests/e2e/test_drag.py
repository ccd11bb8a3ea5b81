"""bp drag on real Chromium: a list reordered by HTML5 drag and drop (the browser's native drag,
delivered through Input.setInterceptDrags) and one reordered by pointer events (mousedown, moves,
mouseup), both judged from the page's own order; and the refusals before anything is sent."""

from tests.helpers import bp, ok, ref_of

# HTML5 drag and drop: each item draggable; a drop before an item moves the dragged one there.
NATIVE = """<ul id=list>
<li draggable=true id=a tabindex=0>Alpha</li><li draggable=true id=b tabindex=0>Bravo</li>
<li draggable=true id=c tabindex=0>Charlie</li></ul>
<script>
let dragged = null;
for (const li of document.querySelectorAll('li')) {
  li.addEventListener('dragstart', (e) => { dragged = li; e.dataTransfer.setData('text/plain', li.id); });
  li.addEventListener('dragover', (e) => e.preventDefault());
  li.addEventListener('drop', (e) => {
    e.preventDefault();
    if (e.dataTransfer.getData('text/plain') === dragged.id) li.before(dragged);
    document.title = [...document.querySelectorAll('li')].map((x) => x.id).join('');
  });
}
</script>"""

# Pointer events only: press on an item, move, release over another: it moves before that one.
POINTER = """<style>li { padding: 8px; margin: 2px; background: #eef; list-style: none; user-select: none; }</style>
<ul id=list><li id=a tabindex=0>Alpha</li><li id=b tabindex=0>Bravo</li><li id=c tabindex=0>Charlie</li></ul>
<script>
let held = null, moves = 0;
for (const li of document.querySelectorAll('li')) li.addEventListener('mousedown', () => { held = li; moves = 0; });
document.addEventListener('mousemove', (e) => { if (held && e.buttons === 1) moves++; });
document.addEventListener('mouseup', (e) => {
  const over = document.elementFromPoint(e.clientX, e.clientY);
  if (held && over && over.localName === 'li' && over !== held && moves > 2) over.before(held);
  held = null;
  document.title = [...document.querySelectorAll('li')].map((x) => x.id).join('');
});
</script>"""


def test_native_drag_and_drop_reorders_the_list(home, connected, pages):
    page = ok(home, connected, "open", pages.page(NATIVE))
    dragged = ok(home, connected, "drag", str(ref_of(page, "button", "Charlie")), str(ref_of(page, "button", "Alpha")))
    assert dragged["title"] == "cab", dragged["title"]
    assert dragged["evidence"]["kind"] == "native" and dragged["evidence"]["status"] == "verified", dragged["evidence"]
    assert [e["name"] for e in dragged["elements"]] == ["Charlie", "Alpha", "Bravo"]


def test_a_pointer_driven_list_sees_the_pointer_travel(home, connected, pages):
    page = ok(home, connected, "open", pages.page(POINTER))
    dragged = ok(home, connected, "drag", str(ref_of(page, "button", "Charlie")), str(ref_of(page, "button", "Alpha")))
    assert dragged["title"] == "cab", dragged["title"]
    assert dragged["evidence"]["kind"] == "pointer", dragged["evidence"]


def test_a_drag_onto_itself_or_a_stale_ref_sends_nothing(home, connected, pages):
    page = ok(home, connected, "open", pages.page(POINTER))
    alpha = str(ref_of(page, "button", "Alpha"))
    itself = bp(home, "drag", alpha, alpha, env=connected)
    assert itself.code == "invalid_argument" and itself.json["context"]["field"] == "to", itself
    stale = bp(home, "drag", alpha, "999", env=connected)
    assert stale.code == "stale_ref", stale
    assert ok(home, connected, "eval", "document.title")["value"] != "bca"  # nothing moved


def test_items_without_a_ref_are_dragged_by_selector(home, connected, pages):
    # A plain <li> a library reorders (nothing of it is a control the snapshot lists).
    ok(home, connected, "open", pages.page(POINTER.replace(" tabindex=0", "")))
    dragged = ok(home, connected, "drag", "#c", "#list li:first-child")
    assert dragged["title"] == "cab", dragged["title"]
    missing = bp(home, "drag", "#nope", "#a", env=connected)
    assert missing.code == "invalid_argument" and missing.json["context"]["field"] == "selector", missing
    assert ok(home, connected, "eval", "document.title")["value"] == "cab"  # nothing else moved
