"""Input that real apps hear: `bp type` and `bp keyboard` send real key events by default (a
search box that listens for keyup only, like MkDocs-Material's), and say which method they used."""

from tests.helpers import ok, ref_of


# Searches on keyup only (never on input events); records what each key saw.
SEARCH = """<input aria-label="Search" class="md-search__input" autocomplete="off">
<ol class="md-search-result__list" role="list"></ol>
<script>
window.keys = {down: 0, press: 0, up: 0, input: 0};
const box = document.querySelector(".md-search__input");
box.addEventListener("keydown", () => keys.down++);
box.addEventListener("keypress", () => keys.press++);
box.addEventListener("input", () => keys.input++);
box.addEventListener("keyup", () => {
  keys.up++;
  const list = document.querySelector(".md-search-result__list");
  list.replaceChildren();
  for (const title of ["Installation", "Install from git"].filter((t) => box.value && t.toLowerCase().startsWith(box.value.toLowerCase()))) {
    const li = document.createElement("li"); const a = document.createElement("a");
    a.href = "#" + title; a.textContent = title; li.append(a); list.append(li);
  }
});
</script>"""


def counts(home, env):
    return ok(home, env, "eval", "window.keys")["value"]


def test_type_sends_key_events_a_keyup_search_hears(home, connected, pages):
    page = ok(home, connected, "open", pages.page(SEARCH, title="docs"))
    result = ok(home, connected, "type", ref_of(page, "textbox", "Search"), "Install")
    assert result["evidence"]["method"] == "keys"
    assert result["evidence"]["status"] == "verified"
    assert counts(home, connected) == {"down": 7, "press": 7, "up": 7, "input": 7}
    links = [e["name"] for e in result["elements"] if e["role"] == "link"]
    assert links == ["Installation", "Install from git"], result["elements"]


def test_keyboard_sends_key_events_too_and_spaces_and_capitals(home, connected, pages):
    ok(home, connected, "open", pages.page(SEARCH, title="docs"))
    result = ok(home, connected, "keyboard", "Install f", "--click", ".md-search__input")
    assert result["evidence"]["method"] == "keys"
    assert counts(home, connected)["up"] == 9
    assert ok(home, connected, "eval", "document.querySelector('input').value")["value"] == "Install f"
    assert [e["name"] for e in result["elements"] if e["role"] == "link"] == ["Install from git"]


def test_text_a_keyboard_cannot_type_or_long_text_is_inserted_and_says_so(home, connected, pages):
    page = ok(home, connected, "open", pages.page(SEARCH, title="docs"))
    box = ref_of(page, "textbox", "Search")
    accented = ok(home, connected, "type", box, "café")
    assert accented["evidence"]["method"] == "insertText"
    assert accented["evidence"]["status"] == "verified"
    assert counts(home, connected)["down"] == 0
    long_text = "x" * 300
    longer = ok(home, connected, "type", box, long_text, "--clear")
    assert longer["evidence"]["method"] == "insertText"
    assert ok(home, connected, "eval", "document.querySelector('input').value")["value"] == long_text
