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
