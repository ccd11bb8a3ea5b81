"""Observation corpus: capability cases with ground truth (role, name) that must and must not
appear. Used by the end-to-end tests and by tests/bench/bench_observe.py for recall and
false-interactable rates."""

FRAME_INNER = "<button>Inner action</button>"


def _srcdoc(html):
    return html.replace("&", "&amp;").replace('"', "&quot;")


CASES = {
    "native_controls": (
        """<button>Save</button><a href="/x">Docs</a><label for=q>Query</label><input id=q>
        <label><input type=checkbox> Remember me</label><label><input type=radio name=r> Small</label>
        <label for=s>Size</label><select id=s><option>One</option></select>
        <label for=t>Notes</label><textarea id=t></textarea>""",
        [("button", "Save"), ("link", "Docs"), ("textbox", "Query"), ("checkbox", "Remember me"),
         ("radio", "Small"), ("combobox", "Size"), ("textbox", "Notes")], []),
    "display_none": ("""<button>Shown</button><div style="display:none"><button>Gone</button></div>""",
                     [("button", "Shown")], [("button", "Gone")]),
    "visibility_hidden": ("""<div style="visibility:hidden"><button>Invisible</button>
        <button style="visibility:visible">Visible child</button></div>""",
                          [("button", "Visible child")], [("button", "Invisible")]),
    "zero_size": ("""<button style="width:0;height:0;padding:0;border:0;overflow:hidden">Zero</button><button>Real</button>""",
                  [("button", "Real")], [("button", "Zero")]),
    "disabled": ("""<button disabled>Off</button><fieldset disabled><input aria-label="In fieldset"></fieldset>
        <button>On</button>""", [("button", "On")], [("button", "Off"), ("textbox", "In fieldset")]),
    "aria_disabled": ("""<div role=button aria-disabled=true tabindex=0>Nope</div><div role=button tabindex=0>Yes</div>""",
                      [("button", "Yes")], [("button", "Nope")]),
    "inert": ("""<div inert><button>Inert one</button></div><button>Live one</button>""",
              [("button", "Live one")], [("button", "Inert one")]),
    "aria_hidden": ("""<div aria-hidden=true><button>Hidden from AT</button></div><button>Exposed</button>""",
                    [("button", "Exposed")], [("button", "Hidden from AT")]),
    "native_modal": ("""<button>Behind</button><dialog id=d><button>Confirm</button><button>Cancel</button></dialog>
        <script>document.getElementById('d').showModal()</script>""",
                     [("button", "Confirm"), ("button", "Cancel")], [("button", "Behind")]),
    "aria_modal": ("""<button>Under</button><div role=dialog aria-modal=true
        style="position:fixed;inset:20px;background:#fff"><button>Accept cookies</button></div>""",
                   [("button", "Accept cookies")], [("button", "Under")]),
    "covered": ("""<button id=b>Covered</button><div style="position:fixed;inset:0;background:rgba(0,0,0,.5)"></div>""",
                [], [("button", "Covered")]),
    "cursor_pointer": ("""<div style="cursor:pointer" id=c>Card title</div>""", [("button", "Card title")], []),
    "tabindex": ("""<div tabindex=0>Focusable thing</div><div tabindex=-1>Programmatic only</div>""",
                 [("button", "Focusable thing")], [("button", "Programmatic only")]),
    "onclick_attribute": ("""<span onclick="void 0">Tap here</span>""", [("button", "Tap here")], []),
    "no_nested_duplicates": ("""<button style="cursor:pointer"><span style="cursor:pointer">Save draft</span></button>""",
                             [("button", "Save draft")], [("button", "")]),
    "shadow_dom": ("""<div id=host></div><script>const r=document.getElementById('host').attachShadow({mode:'open'});
        r.innerHTML='<button>Shadow button</button><input aria-label="Shadow field">';</script>""",
                   [("button", "Shadow button"), ("textbox", "Shadow field")], []),
    "same_origin_iframe": (f"""<p>Top</p><iframe style="margin-left:40px" srcdoc="{_srcdoc(FRAME_INNER)}"></iframe>""",
                           [("button", "Inner action")], []),
    "nested_iframes": ("""<iframe style="margin:30px" srcdoc="<p>level one</p><iframe style='margin:20px' srcdoc='&lt;button&gt;Deep action&lt;/button&gt;'></iframe>"></iframe>""",
                       [("button", "Deep action")], []),
    "name_precedence": ("""<span id=lbl>From labelledby</span><button aria-labelledby=lbl aria-label=x>Text</button>
        <button aria-label="From aria-label">Text two</button><input title="From title">
        <input placeholder="From placeholder"><input type=image alt="From alt" src="data:,">
        <input type=submit value="From value">""",
                        [("button", "From labelledby"), ("button", "From aria-label"), ("textbox", "From title"),
                         ("textbox", "From placeholder"), ("button", "From alt"), ("button", "From value")], []),
    "contenteditable": ("""<div contenteditable=true aria-label="Editor"><p>Hello</p></div>""",
                        [("textbox", "Editor")], []),
    "explicit_roles": ("""<div role=button tabindex=0>Role button</div><div role=switch aria-checked=false tabindex=0>Wifi</div>
        <div role=tab tabindex=0>Overview</div>""",
                       [("button", "Role button"), ("switch", "Wifi"), ("tab", "Overview")], []),
    "pointer_events_none": ("""<button style="pointer-events:none">Ghost</button><button>Solid</button>""",
                            [("button", "Solid")], [("button", "Ghost")]),
    "opacity_zero": ("""<input type=checkbox id=o style="opacity:0"><label for=o>Styled check</label>
        <button style="opacity:0">Transparent</button>""",
                     [("checkbox", "Styled check")], [("button", "Transparent")]),
    "below_the_fold": ("""<div style="height:3000px"></div><button>Far below</button>""",
                       [("button", "Far below")], []),
    "anchor_without_href": ("""<a>Not a link</a><a href="#">A link</a>""", [("link", "A link")], [("link", "Not a link")]),
    "hidden_input": ("""<input type=hidden value=x><input aria-label="Visible field">""",
                     [("textbox", "Visible field")], [("textbox", "")]),
    "password": ("""<label for=p>Password</label><input id=p type=password value="hunter2-secret">""",
                 [("textbox", "Password")], []),
    "details_summary": ("""<details><summary>More options</summary><p>x</p></details>""",
                        [("button", "More options")], []),
    "select_variants": ("""<select aria-label="Many" multiple><option>a</option></select>
        <input type=search aria-label="Find"><input type=range aria-label="Volume">""",
                        [("listbox", "Many"), ("searchbox", "Find"), ("slider", "Volume")], []),
    # Clickable only through a JavaScript listener: no role, tabindex, onclick or pointer cursor.
    "listener_only": ("""<div id=card style="padding:8px">Open details</div><span id=chip>Filter: new</span>
        <script>document.getElementById('card').addEventListener('click', () => {});
        document.getElementById('chip').addEventListener('pointerdown', () => {});</script>""",
                      [("button", "Open details"), ("button", "Filter: new")], []),
    # Event delegation: the listener sits on a container of real controls, or on the document.
    "delegated_listener": ("""<ul id=menu style="padding:8px"><li><button>First</button></li><li><button>Second</button></li></ul>
        <p id=prose>Plain text</p>
        <script>document.getElementById('menu').addEventListener('click', () => {});
        document.addEventListener('click', () => {}); document.body.addEventListener('mousedown', () => {});</script>""",
                           [("button", "First"), ("button", "Second")],
                           [("button", "First Second"), ("button", "Plain text")]),
    # Entries with no role of their own inside a role=menu or a listbox (issue 38): Chromium's tree
    # ignores the focusable <li>; bp offers the role its container implies, named from its own text.
    "role_less_entries": ("""<ul role=menu aria-label=Context>
        <li tabindex=0 aria-haspopup=true id=share>Share<ul role=menu hidden><li role=menuitem tabindex=-1>Email</li></ul></li>
        <li role=menuitem tabindex=-1>Copy</li></ul>
        <div role=listbox aria-label=Fruit><div tabindex=0 id=pear>Pear</div></div>
        <script>for (const id of ['share', 'pear']) document.getElementById(id).addEventListener('click', () => {});</script>""",
                          [("menuitem", "Share"), ("menuitem", "Copy"), ("option", "Pear")],
                          [("menuitem", "Email"), ("listitem", "Share Email")]),
    # One target, two controls nested (issue 38): a wrapper and the control inside it, one name.
    "nested_same_target": ("""<div role=button tabindex=0 aria-label=Bold><span role=button aria-label=Bold>B</span></div>
        <a href="#go"><button>Go</button></a>""",
                           [("button", "Bold"), ("button", "Go")], [("link", "Go")]),
    # An empty sliver with a listener (Tabulator's column resize handle): an edge to drag, not a button.
    "resize_grip": ("""<div style="display:flex;height:24px"><span style="flex:1">Price</span>
        <span id=grip style="width:5px"></span></div><span id=go style="display:inline-block;padding:4px">Go</span>
        <script>for (const id of ['grip', 'go']) document.getElementById(id).addEventListener('mousedown', () => {});</script>""",
                    [("button", "Go")], [("button", "")]),
    # ARIA 1.1's combobox (Choices' multi select): a role=combobox box around its transparent native
    # <select> and the search field one types in. One control: the field, as the combobox.
    "combobox_box_around_field": ("""<div role=combobox aria-expanded=false aria-haspopup=true>
        <select multiple hidden style="display:block;opacity:0;position:absolute;width:10px"><option>Bulk</option></select>
        <input type=search aria-label=Tags></div>""",
                                  [("combobox", "Tags")], [("combobox", ""), ("searchbox", "Tags"), ("listbox", "")]),
    # Choices' single select: a focusable role=listbox box drawn around its transparent <select>.
    "listbox_box_around_select": ("""<label for=w>Warehouse</label><div role=listbox tabindex=0 aria-labelledby=wl>
        <span id=wl hidden>Warehouse</span>
        <select id=w hidden style="display:block;opacity:0;position:absolute;width:10px"><option>Oslo</option></select>
        <div role=option aria-selected=true>Oslo</div></div>""",
                                  [("listbox", "Warehouse")], [("combobox", "Warehouse")]),
}
