"""Issue 26: the observation offers what Chromium's accessibility engine exposes, named and
stated as the engine names them. Small pages reproducing each case of the issue's "Why"."""

from tests.helpers import bp, ref_of


def opened(home, env, url, *args):
    result = bp(home, "open", url, *args, env=env)
    assert result.rc == 0, result
    return result.json


def snap(home, env, *args):
    result = bp(home, "snapshot", *args, env=env)
    assert result.rc == 0, result
    return result.json


def find(observation, role, name):
    found = [e for e in observation["elements"] if e["role"] == role and e["name"] == name]
    assert len(found) == 1, (role, name, observation["elements"])
    return found[0]


# The "visually hidden input" of design systems: the native input is 1px, clipped away and
# transparent; a styled label or track is what a person sees and operates.
VISUALLY_HIDDEN = "position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);" \
                  "clip-path:inset(50%);white-space:nowrap;border:0;padding:0"
HIDDEN_INPUTS = f"""
<style>.box{{display:inline-block;width:18px;height:18px;border:2px solid #333;vertical-align:middle}}
.track{{display:block;position:relative;width:220px;height:24px;background:#ddd;margin:12px 0}}</style>
<label style="display:inline-block;padding:6px"><input type=checkbox id=dark style="{VISUALLY_HIDDEN}">
  <span class=box></span> Dark mode</label>
<div role=radiogroup aria-label=Size>
  <label style="display:inline-block;padding:6px"><input type=radio name=size value=s style="{VISUALLY_HIDDEN}"> Small</label>
  <label style="display:inline-block;padding:6px"><input type=radio name=size value=l style="{VISUALLY_HIDDEN}"> Large</label>
</div>
<span id=vol-label>Volume</span>
<div class=track><input type=range id=vol min=0 max=14 value=3 aria-labelledby=vol-label
  style="{VISUALLY_HIDDEN}"><span>3</span> <span>1</span> <span>14</span></div>
<label style="display:flex;gap:8px;align-items:center"><span style="{VISUALLY_HIDDEN}"><input type=checkbox
  id=terms></span><span class=box></span>Accept the terms</label>
<label style="display:inline-block;padding:6px"><input type=checkbox id=grid-row
  style="position:absolute;opacity:0;pointer-events:none"> Select row</label>
"""


def test_visually_hidden_inputs_are_offered_with_their_labels_and_click_toggles(home, connected, pages):
    observation = opened(home, connected, pages.page(HIDDEN_INPUTS))
    dark = find(observation, "checkbox", "Dark mode")
    small = find(observation, "radio", "Small")
    find(observation, "radio", "Large")
    volume = find(observation, "slider", "Volume")  # named by its label, not its tick labels "3 1 14"
    assert volume["value"] == "3" and volume["min"] == 0 and volume["max"] == 14
    find(observation, "checkbox", "Select row")
    terms = find(observation, "checkbox", "Accept the terms")  # React Aria: the hidden wrapper around the input
    assert bp(home, "click", str(terms["ref"]), env=connected).rc == 0
    assert bp(home, "eval", "document.getElementById('terms').checked", env=connected).json["value"] is True
    clicked = bp(home, "click", str(dark["ref"]), env=connected)
    assert clicked.rc == 0, clicked
    assert find(clicked.json, "checkbox", "Dark mode").get("checked") is True
    checked = bp(home, "eval", "document.getElementById('dark').checked", env=connected)
    assert checked.json["value"] is True
    clicked = bp(home, "click", str(small["ref"]), env=connected)
    assert clicked.rc == 0, clicked
    assert bp(home, "eval", "document.querySelector('[value=s]').checked", env=connected).json["value"] is True


def test_names_come_from_the_accessibility_engine(home, connected, pages):
    long_hint = "Describe the change you would like, in as much detail as you can, " * 6
    url = pages.page(f"""
    <button id=pencil><svg width=16 height=16><title>Edit</title><path d="M0 0h16v16z"/></svg></button>
    <button title="Delete item"><svg width=16 height=16><path d="M0 0h16v16z"/></svg></button>
    <a href="/home"><svg width=40 height=20><style>.a{{fill:#ff0000}} .b{{fill:#00ff00}}</style>
      <title>Acme home</title><path class=a d="M0 0h40v20z"/></svg></a>
    <textarea placeholder="{long_hint}"></textarea>
    <div role=combobox tabindex=0 aria-expanded=false aria-haspopup=listbox aria-label=Fruit>Banana</div>
    <button aria-pressed=true>Bold</button>
    <input aria-label=Email required aria-invalid=true>
    """)
    observation = opened(home, connected, url)
    find(observation, "button", "Edit")
    find(observation, "button", "Delete item")
    find(observation, "link", "Acme home")
    assert "fill" not in str(observation["elements"])
    [area] = [e for e in observation["elements"] if e["role"] == "textbox" and e["name"].startswith("Describe")]
    assert len(area["name"]) <= 80 and area["name"].endswith("\u2026")
    fruit = find(observation, "combobox", "Fruit")
    assert fruit["value"] == "Banana" and fruit["expanded"] is False
    assert find(observation, "button", "Bold")["pressed"] is True
    email = find(observation, "textbox", "Email")
    assert email["required"] is True and email["invalid"] is True


def test_submenu_entry_is_offered_and_its_menu_is_not_a_button(home, connected, pages):
    url = pages.page("""
    <div role=menu tabindex=0 style="border:1px solid">
      <div role=menuitem tabindex=-1>New file</div>
      <div tabindex=0 aria-haspopup=menu>Open recent</div>
      <div role=menuitem tabindex=-1>Save</div>
    </div>""")
    observation = opened(home, connected, url)
    names = [(e["role"], e["name"]) for e in observation["elements"]]
    assert ("menuitem", "Open recent") in names, names
    assert not any("New file" in n and "Save" in n for _, n in names), names


def test_scrolling_main_is_not_a_button_and_toolbar_buttons_are_listed_once(home, connected, pages):
    text = "A long article paragraph. " * 40
    url = pages.page(f"""
    <div role=toolbar><div class=item tabindex=0 style="cursor:pointer;display:inline-block"><button>Undo</button></div>
      <span role=button tabindex=0 style="display:inline-block"><button>Redo</button></span></div>
    <div role=listbox aria-label=Sizes><div role=option aria-selected=false><label><input type=radio name=r> Medium</label></div></div>
    <main tabindex=0 style="height:200px;overflow:auto"><p>{text}</p><p>{text}</p></main>
    """)
    observation = opened(home, connected, url)
    names = [(e["role"], e["name"]) for e in observation["elements"]]
    assert names.count(("button", "Undo")) == 1 and names.count(("button", "Redo")) == 1, names
    assert len([n for n in names if "Medium" in n[1]]) == 1, names
    assert not any("article paragraph" in n for _, n in names), names


def test_disabled_controls_are_counted_and_listed_on_request(home, connected, pages):
    url = pages.page("""<input aria-label=Title><button disabled>Save</button><button>Cancel</button>
        <div role=button aria-disabled=true tabindex=0>Create</div>""")
    observation = opened(home, connected, url)
    assert [e["name"] for e in observation["elements"]] == ["Title", "Cancel"]
    assert observation["disabledCount"] == 2
    assert "disabledElements" not in observation
    listed = snap(home, connected, "--disabled")
    assert listed["disabledElements"] == [{"role": "button", "name": "Save", "disabled": True},
                                          {"role": "button", "name": "Create", "disabled": True}]
    assert [e["name"] for e in listed["elements"]] == ["Title", "Cancel"]


def test_engine_facts_follow_mutations(home, connected, pages):
    url = pages.page("""<button id=b aria-expanded=false aria-label="Menu">≡</button>
        <script>document.getElementById('b').onclick = (e) => { e.target.setAttribute('aria-expanded', 'true');
        e.target.setAttribute('aria-label', 'Close menu'); };</script>""")
    observation = opened(home, connected, url)
    menu = find(observation, "button", "Menu")
    assert menu["expanded"] is False
    assert find(snap(home, connected), "button", "Menu")["expanded"] is False  # from the cache: the same
    clicked = bp(home, "click", str(menu["ref"]), env=connected)
    assert clicked.rc == 0, clicked
    after = snap(home, connected)
    assert find(after, "button", "Close menu")["expanded"] is True
    assert ref_of(after, "button", "Close menu") == menu["ref"]


ANSWERS = """<main><h1>Ask</h1><label>Question <input value="What is 6 x 7?"></label>
  <textarea id=answer disabled style="display:block;width:300px">The answer is forty-two.</textarea>
  <input aria-label=Total readonly value="Total 1,234 EUR">
  <output>Result: 7 rows</output></main>
<div role=status>Saved a moment ago</div>
<div role=dialog aria-label=Share style="position:fixed;top:10px;right:10px;background:#fff">Copy the share link</div>
<input type=password value="hunter2-secret" readonly aria-label=Secret>
<script>document.getElementById('answer').value = 'The answer is forty-two.';</script>"""


def test_read_search_and_wait_see_outputs_read_only_fields_and_live_regions(home, connected, pages):
    opened(home, connected, pages.page(ANSWERS))
    read = bp(home, "read", env=connected)
    assert read.rc == 0, read
    text = read.json["text"]
    for expected in ("The answer is forty-two.", "Total 1,234 EUR", "Result: 7 rows", "Saved a moment ago",
                     "Copy the share link"):
        assert expected in text, (expected, text)
    assert "What is 6 x 7?" not in text  # an editable field's value is the Agent's own input, not page text
    assert "hunter2" not in read.stdout
    found = bp(home, "search", "forty-two", env=connected)
    assert found.rc == 0 and found.json["totalMatches"] == 1, found
    assert found.json["matches"][0]["tagName"] == "textarea" and found.json["matches"][0]["visible"] is True
    assert bp(home, "search", "hunter2", env=connected).json["totalMatches"] == 0
    waited = bp(home, "wait", "--text", "Total 1,234", "--timeout", "5000", env=connected)
    assert waited.rc == 0, waited


def test_scroll_without_a_target_scrolls_the_app_shell_main(home, connected, pages):
    rows = "".join(f"<p>Row {i}</p>" for i in range(200))
    url = pages.page(f"""<style>html,body{{height:100%;margin:0;overflow:hidden}}
        main{{height:100%;overflow:auto}}</style><main tabindex=0>{rows}</main>""")
    opened(home, connected, url)
    scrolled = bp(home, "scroll", "down", env=connected)
    assert scrolled.rc == 0, scrolled
    evidence = scrolled.json["evidence"]
    assert evidence["moved"] is True and evidence["target"] == "element", evidence
    assert bp(home, "eval", "document.querySelector('main').scrollTop", env=connected).json["value"] > 0


SLIDERS = """
<span id=vol-label>Volume</span>
<div class=track style="position:relative;width:220px;height:24px;background:#ddd">
  <input type=range id=vol min=0 max=14 value=3 aria-labelledby=vol-label style="HIDDEN"></div>
<p id=said></p>
<div role=slider id=aria tabindex=0 aria-label=Zoom aria-valuemin=0 aria-valuemax=10 aria-valuenow=2
  style="width:200px;height:20px;background:#ccc"></div>
<script>
document.getElementById('vol').addEventListener('input', (e) => { document.getElementById('said').textContent = 'Volume ' + e.target.value; });
const z = document.getElementById('aria');
z.addEventListener('keydown', (e) => {
  const now = +z.getAttribute('aria-valuenow');
  if (e.key === 'ArrowRight') z.setAttribute('aria-valuenow', Math.min(10, now + 1));
  if (e.key === 'ArrowLeft') z.setAttribute('aria-valuenow', Math.max(0, now - 1));
});
</script>"""


def test_select_sets_a_slider_in_one_command_and_reads_it_back(home, connected, pages):
    observation = opened(home, connected, pages.page(SLIDERS.replace("HIDDEN", VISUALLY_HIDDEN)))
    volume = find(observation, "slider", "Volume")
    chosen = bp(home, "select", str(volume["ref"]), "7", env=connected)
    assert chosen.rc == 0, chosen
    assert chosen.json["evidence"]["status"] == "verified" and chosen.json["evidence"]["selected"] == ["7"], chosen.json
    assert find(chosen.json, "slider", "Volume")["value"] == "7"
    assert "Volume 7" in bp(home, "read", env=connected).json["text"]
    zoom = find(observation, "slider", "Zoom")
    moved = bp(home, "select", str(zoom["ref"]), "6", env=connected)
    assert moved.rc == 0, moved
    assert moved.json["evidence"]["status"] == "verified" and moved.json["evidence"]["selected"] == ["6"], moved.json
    assert bp(home, "eval", "document.getElementById('aria').getAttribute('aria-valuenow')",
              env=connected).json["value"] == "6"
    wrong = bp(home, "select", str(zoom["ref"]), "99", env=connected)
    assert wrong.rc != 0 and wrong.json["code"] == "invalid_argument", wrong
    typed = bp(home, "type", str(volume["ref"]), "12", env=connected)  # the verb for any field's value
    assert typed.rc == 0, typed
    assert typed.json["evidence"]["status"] == "verified" and typed.json["evidence"]["value"] == "12", typed.json


def test_wait_matches_only_what_shows_unless_asked(home, connected, pages):
    opened(home, connected, pages.page("""<div style="width:0;height:0;overflow:hidden"><button id=ok>OK</button></div>
        <p style="opacity:0">Fading notice</p><p id=later></p>
        <script>setTimeout(() => { document.getElementById('later').textContent = 'Now shown'; }, 300);</script>"""))
    hidden = bp(home, "wait", "--selector", "#ok", "--timeout", "1500", env=connected)
    assert hidden.rc != 0 and hidden.json["code"] == "wait_timeout", hidden
    assert bp(home, "wait", "--selector", "#ok", "--hidden", "--timeout", "5000", env=connected).rc == 0
    faded = bp(home, "wait", "--text", "Fading notice", "--timeout", "1500", env=connected)
    assert faded.rc != 0 and faded.json["code"] == "wait_timeout", faded
    assert bp(home, "wait", "--text", "Fading notice", "--hidden", "--timeout", "5000", env=connected).rc == 0
    assert bp(home, "wait", "--text", "Now shown", "--timeout", "5000", env=connected).rc == 0


def test_diff_after_a_grep_compares_with_the_last_full_observation(home, connected, pages):
    opened(home, connected, pages.page("<button>Alpha</button><button>Beta</button><button>Gamma</button>"))
    assert snap(home, connected, "--grep", "beta")["matches"] == 1
    diff = snap(home, connected, "--diff")["diff"]
    assert diff["base"] == "previous" and diff["added"] == [] and diff["removed"] == [], diff
    assert diff["unchanged"] == 3


def test_positioned_grid_rows_are_listed_and_read_in_the_order_shown(home, connected, pages):
    # A virtualised grid after a sort: the nodes stay, their positions (and row indexes) change.
    rows = [("Zed", 2), ("Amy", 0), ("Kim", 1)]
    body = "".join(f'<div role=row aria-rowindex={i + 2} style="position:absolute;top:{i * 30}px;height:30px">'
                   f'<span role=gridcell>{n}</span> <button>Open {n}</button></div>' for n, i in rows)
    url = pages.page(f'<div role=grid><div role=rowgroup style="position:relative;height:100px">{body}</div></div>')
    observation = opened(home, connected, url)
    assert [e["name"] for e in observation["elements"]] == ["Open Amy", "Open Kim", "Open Zed"]
    text = bp(home, "read", env=connected).json["text"]
    assert text.index("Amy") < text.index("Kim") < text.index("Zed"), text


def test_an_unnamed_control_takes_context_from_its_own_label_not_the_next_fields(home, connected, pages):
    url = pages.page("""<div>Brightness</div>
        <div role=slider tabindex=0 aria-valuenow=3 aria-valuemin=0 aria-valuemax=9 style="width:120px;height:12px;background:#ccc"></div>
        <div>Colour</div>
        <div role=radiogroup><label><input type=radio name=c> Red</label><label><input type=radio name=c> Blue</label></div>""")
    observation = opened(home, connected, url)
    [slider] = [e for e in observation["elements"] if e["role"] == "slider"]
    assert slider.get("context") == "Brightness", slider


def test_bp_launch_opens_a_window_a_desktop_app_fits_in(home, pages):
    from tests import helpers

    env = helpers.bp_env(home, BROWSER_PILOT_CHROME=helpers.chromium_path())
    launched = bp(home, "launch", "--headless", env=env)
    assert launched.rc == 0, launched
    try:
        assert bp(home, "connect", "--browser", "launched", env=env).rc == 0
        assert bp(home, "open", pages.page("<p>size</p>"), env=env).rc == 0
        size = bp(home, "eval", "[window.innerWidth, window.innerHeight]", env=env).json["value"]
        assert size[0] >= 1200 and size[1] >= 700, size
    finally:
        bp(home, "disconnect", env=env)
        bp(home, "launch", "--stop", env=env)


def test_tree_grid_rows_are_offered_as_rows(home, connected, pages):
    url = pages.page("""<div role=treegrid aria-label=Files>
        <div role=row tabindex=0 aria-level=1 aria-expanded=true><div role=gridcell>
          <button aria-label="Collapse Documents">▾</button> Documents</div></div>
        <div role=row tabindex=-1 aria-level=2 id=report><div role=gridcell>Report.pdf</div></div></div>
        <script>document.getElementById('report').onclick = () => { document.title = 'picked'; };</script>""")
    observation = opened(home, connected, url)
    names = [(e["role"], e["name"]) for e in observation["elements"]]
    assert ("button", "Collapse Documents") in names, names
    report = find(observation, "row", "Report.pdf")
    assert report["level"] == 2
    clicked = bp(home, "click", str(report["ref"]), env=connected)
    assert clicked.rc == 0 and clicked.json["title"] == "picked", clicked


# Issue 37: a change of the page keeps the engine's facts of every element it cannot have
# touched, and asks again for those it can: the element itself, what it holds, an ancestor's
# attributes, its label, what its aria-labelledby names, and anything after an id changes.
TOUCHED = """
<p id=status>idle</p>
<button id=menu aria-expanded=false onclick="this.setAttribute('aria-expanded', 'true')">Menu</button>
<label for=email id=email-label>Email</label><input id=email>
<button onclick="document.getElementById('email-label').textContent = 'Work email'">Rename label</button>
<span id=caption>Volume</span><input type=range aria-labelledby=caption>
<button onclick="document.getElementById('caption').textContent = 'Loudness'">Rename caption</button>
<div id=group><button id=inner>Inner</button></div>
<button onclick="document.getElementById('group').setAttribute('aria-hidden', 'true')">Hide group</button>
<button id=icon onclick="this.querySelector('span').textContent = 'Saved'"><span>Save</span></button>
<span id=tip-a>First tip</span><span id=tip-b>Second tip</span>
<button id=described aria-describedby=tip-a>Described</button>
<button onclick="document.getElementById('tip-a').id = 'tip-old'; document.getElementById('tip-b').id = 'tip-a'">Swap tips</button>
<button onclick="document.getElementById('status').textContent = 'changed ' + Date.now()">Touch status</button>
"""


def test_a_change_asks_the_engine_again_only_about_what_it_can_have_touched(home, connected, pages):
    observation = opened(home, connected, pages.page(TOUCHED))
    names = lambda obs: {(e["role"], e["name"]) for e in obs["elements"]}  # noqa: E731

    def click(name):
        result = bp(home, "click", str(ref_of(snap(home, connected), "button", name)), env=connected)
        assert result.rc == 0, result
        return result.json

    assert find(click("Touch status"), "button", "Menu").get("expanded") is False  # unrelated: kept, still true
    assert find(click("Menu"), "button", "Menu")["expanded"] is True  # its own attribute
    assert ("textbox", "Work email") in names(click("Rename label"))  # its label's text
    assert ("slider", "Loudness") in names(click("Rename caption"))  # what aria-labelledby names
    assert ("button", "Saved") in names(click("Save"))  # what it holds
    assert find(observation, "button", "Described")["description"] == "First tip"
    assert find(click("Swap tips"), "button", "Described")["description"] == "Second tip"  # an id moved
    assert ("button", "Inner") not in names(click("Hide group"))  # an ancestor's attribute


FIELDS = """<label>Qty <input type=number></label><label>Seats <input type=number min=1 max=9 value=2></label>
<label>Code <input readonly value="AB12"></label>
<style>.sub::after { content: " \\276F" } .icon::before { content: "\\E5CC"; }</style>
<div role=menu aria-label=Actions><div role=menuitem tabindex=-1 class=sub>Share</div>
  <div role=menuitem tabindex=-1 class=icon>Next</div><div role=menuitem tabindex=-1>\u00bb</div></div>"""


def test_engine_facts_an_agent_can_use(home, connected, pages):
    # Issue 38's trial: an unbounded number field read min 0 and max 0; "Share ❯" carried the
    # glyph its stylesheet draws; typing into a read-only field was refused as retryable.
    observation = opened(home, connected, pages.page(FIELDS))
    qty, seats = find(observation, "spinbutton", "Qty"), find(observation, "spinbutton", "Seats")
    assert "min" not in qty and "max" not in qty, qty
    assert (seats["min"], seats["max"]) == (1, 9), seats
    names = [e["name"] for e in observation["elements"] if e["role"] == "menuitem"]
    assert names == ["Share", "Next", "\u00bb"], names  # a name that is only a glyph keeps it
    typed = bp(home, "type", str(find(observation, "textbox", "Code")["ref"]), "zz", env=connected)
    assert typed.rc != 0 and typed.json["code"] == "action_not_verified", typed
    assert typed.json["retryable"] is False and typed.json["context"]["reason"] == "readonly", typed.json
    assert "read-only" in typed.json["hint"]
    assert bp(home, "eval", "document.querySelector('[readonly]').value", env=connected).json["value"] == "AB12"


WRAPPED_MODAL = """<button>Under</button>
<div role=dialog aria-modal=true aria-label="Discard draft" style="position:relative">
  <div style="position:fixed;inset:0;background:rgba(0,0,0,.3)"></div>
  <div style="position:fixed;top:40px;left:40px;background:#fff;padding:8px"><button>Keep editing</button></div></div>"""


def test_a_modal_wrapper_of_no_height_is_still_the_modal(home, connected, pages):
    # Headless UI's dialog: a role=dialog wrapper of no height around its fixed backdrop and panel.
    observation = opened(home, connected, pages.page(WRAPPED_MODAL))
    modal = [h for h in observation["hints"] if h["code"] == "modal_overlay"]
    assert modal and modal[0]["blocking"] is True, observation["hints"]
    assert modal[0]["refs"] == [find(observation, "button", "Keep editing")["ref"]], modal
    assert not [e for e in observation["elements"] if e["name"] == "Under"]
