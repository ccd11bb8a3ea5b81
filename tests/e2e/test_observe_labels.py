"""Names from <label> as `el.labels` gives them (the walker collects each tree scope's labels once
instead of asking every control: broker/scripts/observe.js labelsOf), and a walk that stops at the
limit still reports element_limit."""

from tests.helpers import bp

LABELS = """<label for=a>Alpha</label><input id=a>
<label>Beta <input></label>
<label for=c>One</label><label for=c>Two</label><input id=c>
<label for=b>Press me</label><button id=b>X</button>
<label for=inner>Outside</label>
<label for=nothing>Orphan</label><input placeholder="No label">
<shadow-form></shadow-form>
<script>customElements.define("shadow-form", class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: "open"}).innerHTML = '<label for=s>Gamma</label><input id=s>' +
    '<input id=inner placeholder="Inner placeholder">'; } });</script>"""


def test_controls_are_named_by_their_labels_in_their_own_tree_scope(home, connected, pages):
    opened = bp(home, "open", pages.page(LABELS), env=connected)
    assert opened.rc == 0, opened
    names = [(e["role"], e["name"]) for e in opened.json["elements"]]
    assert names == [("textbox", "Alpha"), ("textbox", "Beta"), ("textbox", "One Two"), ("button", "Press me"),
                     ("textbox", "No label"), ("textbox", "Gamma"), ("textbox", "Inner placeholder")]


def test_a_label_added_after_a_snapshot_names_its_control_in_the_next(home, connected, pages):
    bp(home, "open", pages.page("<input id=late placeholder=Before>"), env=connected)
    added = bp(home, "eval", "document.body.insertAdjacentHTML('afterbegin', '<label for=late>After</label>'); 1",
               env=connected)
    assert added.rc == 0, added
    assert [e["name"] for e in bp(home, "snapshot", env=connected).json["elements"]] == ["After"]


def test_a_walk_that_stops_at_the_limit_reports_element_limit(home, connected, pages):
    page = pages.page("".join(f"<button>B{i}</button>" for i in range(300)) + "<label for=z>Last</label><input id=z>")
    bp(home, "open", page, env=connected)
    cut = bp(home, "snapshot", "--limit", "7", env=connected).json
    assert [e["name"] for e in cut["elements"]] == [f"B{i}" for i in range(7)]
    assert cut["truncated"] is True and cut["truncationReasons"] == ["element_limit"]
    whole = bp(home, "snapshot", "--limit", "301", env=connected).json
    assert whole["truncated"] is False and whole["elements"][-1]["name"] == "Last"
