"""An ARIA combobox whose trigger has no aria-controls (aria-haspopup=listbox; the list renders in
a portal at the end of <body> a moment after opening, as Headless UI / Radix-style widgets do):
`select` and `dropdown` find the listbox that appeared, never an unrelated one."""

from tests.helpers import ok, ref_of


PICKER = """<label id="fruit-label">Fruit</label>
<button id="fruit" aria-haspopup="listbox" aria-expanded="false" aria-labelledby="fruit-label">Choose</button>
<p>Elsewhere on the page, another widget's list:</p>
<ul role="listbox" aria-label="Colours"><li role="option">Red</li><li role="option">Banana yellow</li></ul>
<script>
window.chosen = null;
const trigger = document.getElementById("fruit");
function close() { document.querySelector(".portal")?.remove(); trigger.setAttribute("aria-expanded", "false"); }
trigger.addEventListener("click", () => {
  if (document.querySelector(".portal")) return close();
  trigger.setAttribute("aria-expanded", "true");
  setTimeout(() => {
    const list = document.createElement("ul");
    list.className = "portal"; list.setAttribute("role", "listbox");
    for (const name of ["Apple", "Banana", "Cherry"]) {
      const li = document.createElement("li"); li.setAttribute("role", "option"); li.textContent = name;
      li.addEventListener("click", () => { window.chosen = name.toLowerCase(); trigger.textContent = name; close(); });
      list.append(li);
    }
    document.body.append(list);
  }, 60);
});
</script>"""


def test_select_finds_the_listbox_that_appeared_after_opening(home, connected, pages):
    page = ok(home, connected, "open", pages.page(PICKER, title="picker"))
    result = ok(home, connected, "select", ref_of(page, "button", "Fruit"), "Banana")
    assert result["evidence"]["status"] == "verified", result["evidence"]
    assert result["evidence"]["selected"] == ["Banana"]
    assert ok(home, connected, "eval", "window.chosen")["value"] == "banana"


def test_dropdown_lists_the_open_popup_listbox(home, connected, pages):
    page = ok(home, connected, "open", pages.page(PICKER, title="picker"))
    trigger = ref_of(page, "button", "Fruit")
    closed = ok(home, connected, "dropdown", trigger)
    assert (closed["requiresOpen"], closed["options"]) == (True, [])  # not the Colours list
    opened = ok(home, connected, "click", trigger)
    listed = ok(home, connected, "dropdown", ref_of(opened, "button", "Fruit"))
    assert [o["label"] for o in listed["options"]] == ["Apple", "Banana", "Cherry"], listed
    assert listed["requiresOpen"] is False


# tom-select's multi select: the field in a box that shows the chosen items, the list beside the
# box, and the option it highlights next marked aria-selected.
TAGS = """<div class=wrapper><div class=control><input role=combobox aria-label=Equipment aria-controls=tag-list
  aria-expanded=false></div>
  <div role=listbox id=tag-list hidden>
    <div role=option data-value=projector>Projector</div><div role=option data-value=board>Whiteboard</div></div></div>
<script>
const input = document.querySelector('input'), list = document.getElementById('tag-list');
window.tags = [];
input.addEventListener('click', () => { list.hidden = false; input.setAttribute('aria-expanded', 'true'); });
for (const o of list.children) o.addEventListener('click', () => {
  window.tags.push(o.dataset.value);
  const item = document.createElement('div'); item.textContent = o.textContent; input.before(item);
  o.remove();
  for (const other of list.children) other.setAttribute('aria-selected', 'true');  // the highlight moves on
});
</script>"""


def test_a_typed_combobox_choice_is_read_back_from_its_box_not_the_lists_highlight(home, connected, pages):
    page = ok(home, connected, "open", pages.page(TAGS))
    result = ok(home, connected, "select", ref_of(page, "combobox", "Equipment"), "Projector")
    assert (result["evidence"]["status"], result["evidence"]["selected"]) == ("verified", ["Projector"]), result["evidence"]
    assert ok(home, connected, "eval", "window.tags")["value"] == ["projector"]
