"""Agreement of Browser Pilot's observation with Chromium's accessibility tree, for one page open
in a bp-managed tab (issue 26 item 7).

How a ref is tied to a DOM node. The observation carries no node ids, but `bp find` gives, for
every element it matches, the stable `ref` a snapshot lists (or would list) for it, and the
attributes asked for. So, over the test's own DevTools connection, every element of the page
(open shadow roots and same-origin frames included; not inside an editor's contenteditable
content) gets a `data-bp-agree` number; `DOM.getDocument` (pierce) ties each number to its
backend node id; then `bp find "[data-bp-agree-q]" --attributes data-bp-agree` is asked about
200 marked elements at a time — the elements Chromium exposes as controls first, then the rest
in document order — until every listed ref has its number. The marks are removed afterwards.
Nothing of the page changes but these data attributes, and they are set after the observation.

What is counted, per page:
- `offered`: elements in `bp snapshot --limit 10000`.
- `additions`: offered elements Chromium gives a role that is neither interactive nor a structure
  (STRUCTURES): a listener-only, pointer-cursor or tabindex element Chromium calls generic —
  what the walker adds and the accessibility tree lacks. Neither agreement nor disagreement.
- `agree`: offered elements whose node Chromium exposes with the same role and name (roles
  compared through ROLE_ALIASES, names with whitespace collapsed; a name bp cut at its limit
  compares as a prefix). Agreement = agree / (offered - additions).
- disagreements, by kind: `role`, `name`, `ignored` (Chromium ignores the node: hidden, inert,
  aria-hidden, or a part of a control), `container` (a focusable element or a structure that
  holds other controls, offered as one control), `role` also for a structure offered as a
  control, `unmapped` (no element `bp find` matched carries the ref).
- `operable`: nodes Chromium exposes as operable controls: not ignored, not disabled, and an
  interactive role or focusable — except the document itself, frames, the options of a native
  <select> (operated through the select), the parts of a native control in its user-agent
  shadow root (an <input type=date>'s fields and picker button: operated through the input),
  and, without an interactive role: an element focusable only by script (tabindex=-1), an
  empty unnamed focusable element (a focus trap's guard) and a focusable container of other
  controls (an element focusable by script only inside it is not one: Dash's cell value), a
  structure (STRUCTURES: a tab panel, a region) made focusable to be read or scrolled by keyboard,
  and an element with no box at all (0x0: nothing of it shows to press). The items of a grid
  or tree grid (row, gridcell, headers: ITEMS) count when focusable, whatever their tabindex
  (roving focus) or content; offered ones are compared like interactive roles.
- `missed`: operable nodes bp does not offer; `explained`: of those, the ones the observation
  gives a reason for — an element limit it reports (`truncated`, `element_limit`), a blocking
  modal it reports (a hint with `blocking: true`: everything it left out counts as behind the
  modal; Chromium itself ignores what a native modal dialog makes inert), or an entry
  with the node's role and name in any list of left-out elements the observation carries
  (any top-level field but `elements` whose entries have a role and a name, e.g. disabled
  controls listed apart), or, for an ARIA wrapper (WRAPPERS: an option, listbox, radio group,
  checkbox, radio or switch), an offered control inside it: one entry per control (a role=option
  around a native radio is listed once, as the radio), and likewise for a node inside an offered
  control that is a part of it without an interactive role (a slider's focusable track) or the
  native input or select it is the face of (an uploader button's transparent file input, Choices'
  <select> inside its listbox box), or a wrapper around an offered control of its name
  (`same_target`), or a focusable control inside what the page marks aria-hidden (`aria_hidden`:
  bp, like assistive technology, leaves it out).
- `hidden_controls` (issue 38; column "axign"): elements Chromium ignores that a person can still
  reach by Tab and press: shown, tabIndex >= 0, and a native control, a pointer cursor of its
  own, an onclick or a click listener of its own (DOMDebugger), not holding other focusable
  elements. They join `operable`. Offered, they are additions, like a shown entry with no role
  of its own inside a menu, listbox, tree, tab list or toolbar (jQuery UI's <li> in a role=menu).
- `duplicates`: two refs for one target: the same node twice, a wrapper offered around a control
  inside it under the same name, or a <label> offered beside the control it labels, by its name.
- ARIA 1.1's combobox (a role=combobox box around the field one types in) is one entry, the
  field offered as the combobox: Chromium's text field inside a combobox agrees with it.
  `unexplained` = missed - explained.

Cross-site (out-of-process) frames are other DevTools targets that `bp find` does not search;
they are not measured (`oopifs` counts the frames skipped)."""

import json
import re
import subprocess

from broker.observe.ax import readable_name
from tests import helpers
from tests.agreement.devtools import Tab

INTERACTIVE = {"button", "link", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio", "spinbutton",
               "slider", "switch", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "treeitem"}
# Chromium's internal role names that the CDP Accessibility domain reports for some native
# controls, and the ARIA role a person (and bp) would call them.
ROLE_ALIASES = {"DisclosureTriangle": "button", "ColorWell": "button", "PopUpButton": "button",
                "ToggleButton": "button", "Date": "textbox", "DateTime": "textbox", "InputTime": "textbox",
                "MenuListOption": "option", "MenuListPopup": "listbox", "TextField": "textbox",
                "SearchBox": "searchbox"}
# Items of a grid or tree grid: focusable by roving tabindex (-1 but the current one), selected
# or activated by a click, so operable even when they hold controls of their own.
ITEMS = {"row", "gridcell", "columnheader", "rowheader"}
# Structures Chromium names as such: offered as a control, they disagree with it (a scrolling
# <main tabindex=0> offered as a button). Other roles (generic, text, images, list items) offered
# as controls are the walker's additions.
STRUCTURES = {"main", "navigation", "banner", "contentinfo", "complementary", "region", "form", "search", "tabpanel",
              "dialog", "alertdialog", "grid", "treegrid", "tree", "table", "list", "listbox", "menu", "menubar",
              "tablist", "toolbar", "radiogroup", "article", "document", "application", "log", "status", "alert",
              "feed", "rowgroup"}
NOT_CONTROLS = {"RootWebArea", "WebArea", "Iframe", "IframePresentational", "MenuListOption", "MenuListPopup"}
# An ARIA wrapper around a control (a role=option holding a native radio, a role=listbox of
# them): listed once, as the control inside it (issue 26 item 6, one entry per control).
WRAPPERS = {"option", "listbox", "radiogroup", "checkbox", "radio", "switch", "combobox"}
FIND_CHUNK = 200
BP_LIMIT = "10000"

# Every element of the page, open shadow roots and same-origin frames included, to `visit(el)`.
WALK_JS = r"""const walk = (root, selector, visit) => {
    for (const el of root.querySelectorAll(selector)) {
      if (visit(el) === false) continue;
      if (el.shadowRoot) walk(el.shadowRoot, selector, visit);
      if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
        let doc = null;
        try { doc = el.contentDocument; } catch (e) {}
        if (doc) walk(doc, selector, visit);
      }
    }
  };"""

MARK_JS = r"""(() => {
  let n = 0;
  const NATIVE = 'a[href], button, input:not([type=hidden]), select, textarea, summary';
  const ENTRY_BOXES = '[role=menu], [role=menubar], [role=listbox], [role=tree], [role=tablist], [role=toolbar]';
  WALK
  walk(document, '*', (el) => {
    const p = el.parentElement;
    if (p && p.isContentEditable) return false;  // an editor's content: its own observer watches it
    el.setAttribute('data-bp-agree', String(++n));
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) el.setAttribute('data-bp-agree-box', '0');
    // Focusable by a person (Tab reaches it) and shown: a control whatever the accessibility tree
    // says of it; "p" when it is also pressable (a native control, a pointer cursor of its own,
    // an onclick), "h" when so but inside what the page hides from assistive technology.
    if (el.tabIndex >= 0 && !el.disabled && !['HTML', 'BODY', 'IFRAME', 'FRAME'].includes(el.tagName)
        && box.width > 0 && box.height > 0 && el.checkVisibility({visibilityProperty: true})) {
      const own = getComputedStyle(el).cursor === 'pointer'
        && !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer');
      const pressable = own || el.hasAttribute('onclick') || el.matches(NATIVE);
      el.setAttribute('data-bp-agree-f', !pressable ? '' : el.closest('[aria-hidden=true]') ? 'h' : 'p');
    }
    // A shown entry of a widget's list that has no role of its own (jQuery UI's <li> in a
    // role=menu): Chromium may ignore it; bp offers it as the entry its container implies.
    if (!el.hasAttribute('role') && el.parentElement && el.parentElement.closest(ENTRY_BOXES)
        && box.width > 0 && box.height > 0 && el.checkVisibility({visibilityProperty: true})
        && !el.closest('[aria-hidden=true], [inert]')) el.setAttribute('data-bp-agree-e', '');
  });
  return n;
})()""".replace("WALK", WALK_JS)

SELECT_JS = r"""((marks, attr) => {
  const wanted = new Set(marks);
  WALK
  walk(document, '[data-bp-agree]', (el) => {
    if (wanted.has(el.getAttribute('data-bp-agree'))) el.setAttribute(attr, ''); else el.removeAttribute(attr);
  });
  return wanted.size;
})(%s, %s)""".replace("WALK", WALK_JS)

UNMARK_JS = SELECT_JS.replace("if (wanted.has(el.getAttribute('data-bp-agree'))) el.setAttribute(attr, ''); else ",
                              "el.removeAttribute('data-bp-agree'); el.removeAttribute('data-bp-agree-box'); "
                              "el.removeAttribute('data-bp-agree-f'); el.removeAttribute('data-bp-agree-e'); ")


def clean(text):
    # The engine's name as bp reads it: decoration glyphs at its edges and icon-font characters
    # dropped (broker/observe/ax.py readable_name).
    return readable_name(re.sub(r"\s+", " ", text or "").strip())


def role_of(node):
    role = (node.get("role") or {}).get("value") or ""
    if role == "generic" and props(node).get("editable") and props(node).get("focusable"):
        return "textbox"  # a contenteditable root: Chromium keeps the generic role, it edits text
    return ROLE_ALIASES.get(role, role)


def props(node):
    return {p["name"]: (p.get("value") or {}).get("value") for p in node.get("properties", [])}


def bp_json(bp, env, *args):
    out = subprocess.run([bp, *args], env=env, capture_output=True, text=True, timeout=180,
                         stdin=subprocess.DEVNULL)
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise RuntimeError(f"bp {args[0]} answered no JSON: {out.stdout[-500:]} {out.stderr[-500:]}")


def _dom_marks(tab):
    """{mark: (backendNodeId, attributes)} from the whole DOM, shadow roots and frames pierced,
    and the backend ids of the nodes inside user-agent shadow roots (a native control's parts:
    the fields and button of an <input type=date>, a media element's controls)."""
    marks, native_parts = {}, set()

    def walk(node, in_ua):
        in_ua = in_ua or node.get("shadowRootType") == "user-agent"
        if in_ua:
            native_parts.add(node["backendNodeId"])
        attrs = node.get("attributes") or []
        pairs = dict(zip(attrs[0::2], attrs[1::2]))
        pairs[":tag"] = node.get("nodeName", "").lower()
        if "data-bp-agree-box" in pairs:
            pairs[":box"] = "0"
        if "data-bp-agree-e" in pairs:
            pairs[":entry"] = "1"
        if "data-bp-agree-f" in pairs:
            pairs[":focusable"] = pairs["data-bp-agree-f"] or "f"
        if "data-bp-agree" in pairs:
            marks[pairs["data-bp-agree"]] = (node["backendNodeId"], pairs)
        for key in ("children", "shadowRoots"):
            for child in node.get(key) or []:
                walk(child, in_ua)
        if node.get("contentDocument"):
            walk(node["contentDocument"], False)

    walk(tab.call("DOM.getDocument", {"depth": -1, "pierce": True})["root"], False)
    return marks, native_parts


class Page:
    """The measure of one page: counts and the details behind them (see the module's doc)."""

    def __init__(self, label):
        self.label = label
        self.offered = self.additions = self.agree = self.operable = 0
        self.hidden_controls = 0  # of `operable`: focusable, pressable elements Chromium ignores
        self.disagreements = []  # (kind, bp role, bp name, chromium role, chromium name)
        self.missed = []  # (chromium role, name, explained reason or None)
        self.duplicates = []  # (bp role, name, bp role, name): two refs offered for one target
        self.oopifs = 0

    @property
    def compared(self):
        return self.offered - self.additions

    @property
    def agreement(self):
        return 1.0 if not self.compared else self.agree / self.compared

    @property
    def unexplained(self):
        return [m for m in self.missed if m[2] is None]

    def as_row(self):
        kinds = {}
        for d in self.disagreements:
            kinds[d[0]] = kinds.get(d[0], 0) + 1
        return {"page": self.label, "offered": self.offered, "additions": self.additions,
                "agree": self.agree, "agreement": round(100 * self.agreement, 1), "disagree": kinds,
                "operable": self.operable, "missed": len(self.missed), "unexplained": len(self.unexplained),
                "duplicates": len(self.duplicates), "hidden_controls": self.hidden_controls, "oopifs": self.oopifs}


def _stated_left_out(observation):
    """(role, name) pairs of elements the observation says it left out, and why (the field)."""
    stated = {}
    for key, value in observation.items():
        if key in ("elements", "hints") or not isinstance(value, (list, dict)):
            continue
        entries = value if isinstance(value, list) else [v for v in value.values() if isinstance(v, list)]
        entries = [e for sub in entries for e in (sub if isinstance(sub, list) else [sub])]
        for entry in entries:
            if isinstance(entry, dict) and "role" in entry and "name" in entry:
                stated[(entry["role"], clean(entry["name"]))] = key
    return stated


# What a person's click sets off on the element itself (a listener the page added to it).
CLICK_EVENTS = {"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend"}


def _focusable_and_clickable(tab, trees, attrs_of, native_parts, descendants):
    """The AX nodes Chromium ignores whose element a person can still reach by Tab and press: shown,
    focusable (tabIndex >= 0), and with a pointer cursor of its own, an onclick, or a click listener
    of its own; not a container of other focusable elements (those inside are the controls), not a
    native control's part. Chromium's operable nodes are counted apart (`operable`, below)."""
    found = []
    for tree in trees:
        for node in tree.values():
            backend = node.get("backendDOMNodeId")
            mark = attrs_of.get(backend, {}).get(":focusable")
            if not mark or not node.get("ignored") or backend in native_parts:
                continue
            if any(attrs_of.get(c.get("backendDOMNodeId"), {}).get(":focusable") for c in descendants(node)):
                continue
            if mark == "f" and not _click_listener(tab, backend):
                continue
            found.append(node)
    return found


def _click_listener(tab, backend):
    try:
        obj = tab.call("DOM.resolveNode", {"backendNodeId": backend})["object"]
        listeners = tab.call("DOMDebugger.getEventListeners", {"objectId": obj["objectId"]})["listeners"]
    except (RuntimeError, KeyError):
        return False
    return any(listener["type"] in CLICK_EVENTS for listener in listeners)


def _find_duplicates(page, elements, node_of_ref, by_backend, attrs_of, descendants):
    """Two refs for one target: the same node twice, a wrapper offered around a control inside it
    under the same name, or a <label> offered beside the control it labels, under its name."""
    offered = {}
    for el in elements:
        backend = node_of_ref.get(el["ref"])
        if backend is None:
            continue
        if backend in offered:
            page.duplicates.append((offered[backend]["role"], clean(offered[backend].get("name")), el["role"],
                                    clean(el.get("name"))))
        offered.setdefault(backend, el)
    by_id = {a.get("id"): b for b, a in attrs_of.items() if a.get("id")}
    for backend, el in offered.items():
        name = clean(el.get("name"))
        if not name:
            continue
        inner = []
        node = by_backend.get(backend)
        if node is not None:
            inner = [c.get("backendDOMNodeId") for c in descendants(node)]
        attrs = attrs_of.get(backend, {})
        if attrs.get(":tag") == "label" and attrs.get("for") in by_id:
            inner.append(by_id[attrs["for"]])
        for other in inner:
            twin = offered.get(other)
            if twin is not None and clean(twin.get("name")) == name:
                page.duplicates.append((el["role"], name, twin["role"], name))


def measure(chromium, env, url, label=None, bp=helpers.BP, observation=None):
    """Measure the page at `url` in the tab the Agent of `env` has selected. `observation` is the
    Agent's own `bp snapshot --limit 10000` if it took one already."""
    page = Page(label or url)
    if observation is None:
        observation = bp_json(bp, env, "snapshot", "--limit", BP_LIMIT)
    if not observation.get("ok"):
        raise RuntimeError(f"bp snapshot failed: {observation}")
    elements = observation["elements"]
    page.offered = len(elements)
    tab = Tab.by_url(chromium, url)
    try:
        trees = tab.ax_nodes()
        page.oopifs = len(tab.frames()) - len(trees)
        by_backend, parent, nodes = {}, {}, {}
        for tree in trees:
            for node_id, node in tree.items():
                nodes[id(node)] = node
                if "backendDOMNodeId" in node:
                    by_backend[node["backendDOMNodeId"]] = node
                for child in node.get("childIds", []):
                    if child in tree:
                        parent[id(tree[child])] = node

        def interactive(node):
            return not node.get("ignored") and role_of(node) in INTERACTIVE

        def descendants(node):
            # Children are looked up in the node's own frame tree.
            for tree in trees:
                if tree.get(node["nodeId"]) is node:
                    stack = list(node.get("childIds", []))
                    while stack:
                        child = tree.get(stack.pop())
                        if child is not None:
                            yield child
                            stack.extend(child.get("childIds", []))

        def has_control_inside(node):
            return any(interactive(child) or (not child.get("ignored") and props(child).get("focusable")
                                              and role_of(child) not in NOT_CONTROLS and not by_script(child))
                       for child in descendants(node))

        def by_script(node):
            # Focusable by script only (tabindex=-1, not a grid's item): not a control a person
            # reaches (Dash's cell value inside its focusable cell), as `operable` says below.
            attrs = attrs_of.get(node.get("backendDOMNodeId"), {})
            return attrs.get("tabindex", "").strip() == "-1" and role_of(node) not in ITEMS

        count = tab.evaluate(MARK_JS)
        marks, native_parts = _dom_marks(tab)
        backend_of = {m: b for m, (b, _) in marks.items()}
        attrs_of = {b: a for m, (b, a) in marks.items()}

        def operable(node):
            if node.get("ignored") or role_of(node) in NOT_CONTROLS or (node.get("role") or {}).get("value") in NOT_CONTROLS:
                return False
            p = props(node)
            if p.get("disabled") or node.get("backendDOMNodeId") in native_parts:
                return False
            attrs = attrs_of.get(node.get("backendDOMNodeId"), {})
            if attrs.get(":tag") == "option":
                return False  # a native <select>'s option: operated through its select
            if role_of(node) in INTERACTIVE:
                return True
            if not p.get("focusable"):
                return False
            if role_of(node) in ITEMS:
                return True
            if by_script(node):
                return False
            if role_of(node) in STRUCTURES:
                return False  # focusable to be read or scrolled by keyboard (a tab panel, a region)
            if attrs.get(":box") == "0":
                return False  # nothing of it shows to press (a closed search box's 0x0 scroller)
            if not clean((node.get("name") or {}).get("value")) and not node.get("childIds"):
                return False  # an empty focusable element: a focus trap's guard (AG Grid, dialogs)
            return not has_control_inside(node)

        operable_nodes = [n for tree in trees for n in tree.values() if operable(n)]
        hidden_controls = _focusable_and_clickable(tab, trees, attrs_of, native_parts, descendants)
        page.hidden_controls = len(hidden_controls)
        hidden_ids = {id(n) for n in hidden_controls}
        operable_nodes += hidden_controls
        page.operable = len(operable_nodes)
        # Which ref is which node: `bp find` over marked elements, likeliest first.
        mark_of_backend = {b: m for m, b in backend_of.items()}
        first = [mark_of_backend[n["backendDOMNodeId"]] for tree in trees for n in tree.values()
                 if n.get("backendDOMNodeId") in mark_of_backend and not n.get("ignored")
                 and (role_of(n) in INTERACTIVE or props(n).get("focusable"))]
        seen = set(first)
        order = first + [str(m) for m in range(1, count + 1) if str(m) not in seen and str(m) in marks]
        wanted = {e["ref"] for e in elements}
        node_of_ref = {}
        for start in range(0, len(order), FIND_CHUNK):
            if wanted <= set(node_of_ref):
                break
            chunk = order[start:start + FIND_CHUNK]
            tab.evaluate(SELECT_JS % (json.dumps(chunk), json.dumps("data-bp-agree-q")))
            found = bp_json(bp, env, "find", "[data-bp-agree-q]", "-l", str(FIND_CHUNK), "--attributes",
                            "data-bp-agree")
            if not found.get("ok"):
                raise RuntimeError(f"bp find failed: {found}")
            for el in found["elements"]:
                mark = {a["name"]: a["value"] for a in el.get("attributes", [])}.get("data-bp-agree")
                if el.get("ref") is not None and mark in backend_of:
                    node_of_ref[el["ref"]] = backend_of[mark]

        def in_combobox(node):
            for _ in range(8):
                node = parent.get(id(node))
                if node is None:
                    return False
                if role_of(node) == "combobox":
                    return True
            return False

        offered_backends = set()
        named_inside = {node_of_ref[el["ref"]]: clean(el.get("name")) for el in elements if el["ref"] in node_of_ref}
        for el in elements:
            backend = node_of_ref.get(el["ref"])
            name = clean(el.get("name"))
            if backend is None:
                page.disagreements.append(("unmapped", el["role"], name, None, None))
                continue
            offered_backends.add(backend)
            node = by_backend.get(backend)
            if (node is None or node.get("ignored")) and (id(node) in hidden_ids or attrs_of.get(backend, {}).get(":entry")):
                page.additions += 1  # a control Chromium ignores (a role-less menu entry): offered anyway
                continue
            if node is None or node.get("ignored"):
                page.disagreements.append(("ignored", el["role"], name, None, None))
                continue
            ax_role, ax_name = role_of(node), clean((node.get("name") or {}).get("value"))
            if ax_role in INTERACTIVE or ax_role in ITEMS:
                if el["role"] == "combobox" and ax_role in ("textbox", "searchbox") and in_combobox(node):
                    ax_role = "combobox"  # ARIA 1.1's pair, one entry: the field, as the box's combobox
                if ax_role != el["role"]:
                    page.disagreements.append(("role", el["role"], name, ax_role, ax_name))
                elif not (ax_name == name or (len(el.get("name") or "") >= 4096 and ax_name.startswith(name))):
                    page.disagreements.append(("name", el["role"], name, ax_role, ax_name))
                else:
                    page.agree += 1
            elif has_control_inside(node) and (props(node).get("focusable") or ax_role in STRUCTURES):
                page.disagreements.append(("container", el["role"], name, ax_role, ax_name))
            elif ax_role in STRUCTURES:
                page.disagreements.append(("role", el["role"], name, ax_role, ax_name))
            else:
                page.additions += 1

        _find_duplicates(page, elements, node_of_ref, by_backend, attrs_of, descendants)

        def offered_inside(node):
            return any(child.get("backendDOMNodeId") in offered_backends for child in descendants(node))

        def offered_around(node):
            for _ in range(64):
                node = parent.get(id(node))
                if node is None:
                    return False
                if node.get("backendDOMNodeId") in offered_backends:
                    return True
            return False

        stated = _stated_left_out(observation)
        limited = observation.get("truncated") and "element_limit" in (observation.get("truncationReasons") or [])
        modal = any(h.get("blocking") for h in observation.get("hints") or [])
        for node in operable_nodes:
            if node.get("backendDOMNodeId") in offered_backends:
                continue
            role, name = role_of(node), clean((node.get("name") or {}).get("value"))
            reason = "element_limit" if limited else stated.get((role, name)) or ("behind_modal" if modal else None)
            if reason is None and attrs_of.get(node.get("backendDOMNodeId"), {}).get(":focusable") == "h":
                reason = "aria_hidden"  # the page hides it from assistive technology: so does bp (README)
            if reason is None and role in WRAPPERS and offered_inside(node):
                reason = "one_entry_per_control"
            if reason is None and name and any(named_inside.get(c.get("backendDOMNodeId")) == name
                                               for c in descendants(node)):
                reason = "same_target"  # a wrapper around the control offered under its name
            if reason is None and offered_around(node) and (
                    role not in INTERACTIVE or attrs_of.get(node.get("backendDOMNodeId"), {}).get(":tag") in ("input", "select")):
                # A part of an offered control (a slider's focusable track) or the hidden native input
                # it is the face of (an uploader button's transparent file input, Choices' <select>): one entry.
                reason = "one_entry_per_control"
            page.missed.append((role, name, reason))
    finally:
        try:
            tab.evaluate(UNMARK_JS % ("[]", json.dumps("data-bp-agree-q")))
        except Exception:
            pass
        tab.close()
    return page


def table(pages, detail=False):
    """The per-page table (and, with detail, each disagreement and unexplained miss)."""
    lines = [f"{'page':34} {'offered':>7} {'added':>5} {'agree':>5} {'agree%':>7} {'operable':>8} {'missed':>6} "
             f"{'unexpl':>6} {'dup':>4} {'axign':>5}  disagreements"]
    total = Page("TOTAL")
    for p in pages:
        row = p.as_row()
        lines.append(f"{p.label[:34]:34} {p.offered:7} {p.additions:5} {p.agree:5} {row['agreement']:7.1f} "
                     f"{p.operable:8} {len(p.missed):6} {len(p.unexplained):6} {len(p.duplicates):4} {p.hidden_controls:5}  "
                     + " ".join(f"{k}:{v}" for k, v in sorted(row["disagree"].items()))
                     + (f"  (cross-site frames not measured: {p.oopifs})" if p.oopifs else ""))
        for attr in ("offered", "additions", "agree", "operable", "hidden_controls"):
            setattr(total, attr, getattr(total, attr) + getattr(p, attr))
        total.disagreements += p.disagreements
        total.missed += p.missed
        total.duplicates += p.duplicates
    row = total.as_row()
    lines.append(f"{'TOTAL':34} {total.offered:7} {total.additions:5} {total.agree:5} {row['agreement']:7.1f} "
                 f"{total.operable:8} {len(total.missed):6} {len(total.unexplained):6} {len(total.duplicates):4} {total.hidden_controls:5}  "
                 + " ".join(f"{k}:{v}" for k, v in sorted(row["disagree"].items())))
    if detail:
        for p in pages:
            for kind, role, name, ax_role, ax_name in p.disagreements:
                lines.append(f"  {p.label}: {kind}: bp {role} {name[:60]!r} / chromium {ax_role} {(ax_name or '')[:60]!r}")
            for role, name, reason in p.unexplained:
                lines.append(f"  {p.label}: missed: chromium {role} {name[:60]!r}")
            for role, name, inner_role, inner_name in p.duplicates:
                lines.append(f"  {p.label}: duplicate: bp {role} {name[:60]!r} and {inner_role} {inner_name[:60]!r}")
    return "\n".join(lines)
