"""`read` and `search` on documentation-like pages: code keeps its whitespace, a hidden first
match is passed over, a section anchor starts the text, and search contexts are merged and bounded."""

import json

from tests.helpers import bp


def ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    return result.json


DOC = """<nav>Home | Docs</nav><main>
<h2>Intro</h2><p>What this tool is for.</p>
<h2 id="install">Installation</h2><p>Run this:</p>
<pre><code>def main():
    if ready:
        return  42</code></pre>
<h2 id="usage">Usage</h2><p>Call it.</p>
</main>"""


def test_read_keeps_the_whitespace_of_code(home, connected, pages):
    ok(home, connected, "open", pages.page(DOC, title="docs"))
    text = ok(home, connected, "read")["text"]
    assert "def main():\n    if ready:\n        return  42" in text, text
    assert "What this tool is for." in text


def test_read_starts_at_an_anchor_or_the_urls_fragment(home, connected, pages):
    url = pages.page(DOC, title="docs")
    ok(home, connected, "open", url)
    text = ok(home, connected, "read", "--from-anchor", "install")["text"]
    assert text.startswith("Installation\n\nRun this:"), text
    assert "Intro" not in text and "Usage" in text
    ok(home, connected, "open", url + "#usage")
    assert ok(home, connected, "read")["text"] == "Usage\n\nCall it."
    missing = bp(home, "read", "--from-anchor", "nowhere", env=connected)
    assert missing.code == "invalid_argument" and missing.json["context"]["field"] == "anchor", missing


def test_read_a_selector_whose_first_match_is_hidden_reads_the_visible_one(home, connected, pages):
    ok(home, connected, "open", pages.page(
        '<div class="price" hidden>0.00</div><div class="price" style="display:none">1.00</div>'
        '<div class="price">42 EUR</div><div class="price">99 EUR</div>'))
    assert ok(home, connected, "read", ".price")["text"] == "42 EUR"


def test_search_contexts_are_merged_and_bounded(home, connected, pages):
    para = " ".join(f"The data set number {n} has more data in it." for n in range(3))
    far = "filler words " * 100
    ok(home, connected, "open", pages.page(f"<p>{para}</p><p>{far}</p><p>Last data here.</p>"))
    result = ok(home, connected, "search", "data")
    matches = result["matches"]
    assert result["totalMatches"] == 7 and len(matches) == 7
    assert "context" in matches[0] and len(matches[0]["context"]) <= 400
    shared = [m for m in matches[:6] if "sameContextAs" in m]
    assert shared and all(m["sameContextAs"] == 1 and "context" not in m for m in shared)
    for m in shared:
        assert m["text"] == "data"
    assert matches[6].get("context", "").startswith("filler") or "Last data here." in matches[6]["context"]
    assert "sameContextAs" not in matches[6]
    assert len(json.dumps(matches)) < 2000


def test_read_keeps_a_div_grids_cells_apart(home, connected, pages):
    # Tabulator's cells are inline blocks in a row: "Upgrade databaseCleo8" read before.
    url = pages.page("""<main><div role=grid><div role=row><div role=gridcell style="display:inline-block">Upgrade
        database</div><div role=gridcell style="display:inline-block">Cleo</div><div role=gridcell
        style="display:inline-block">8</div></div></div></main>""")
    assert bp(home, "open", url, env=connected).rc == 0
    read = bp(home, "read", env=connected)
    assert read.rc == 0 and "Upgrade database Cleo 8" in read.json["text"], read.json


def test_read_skips_a_screen_readers_copy_of_a_toast(home, connected, pages):
    # notyf: the toast a person sees, and a 1 px live region announcing the same words.
    url = pages.page("""<p>Booking form</p>
        <div class=toast style="position:fixed;top:10px;right:10px">Booking #9847 confirmed</div>
        <div aria-live=polite style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)">Booking
        #9847 confirmed</div><div role=status>Saved a moment ago</div>""")
    assert bp(home, "open", url, env=connected).rc == 0
    text = bp(home, "read", env=connected).json["text"]
    assert text.count("Booking #9847 confirmed") == 1 and "Saved a moment ago" in text, text
