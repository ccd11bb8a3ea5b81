// Browser Pilot observation walker. Runs in Browser Pilot's isolated world of the top document
// (page scripts cannot see or tamper with it) and returns what a person could act on now.
// Element handles stay in this world, keyed by Agent and observation, so a ref is bound to the
// exact node: a replaced node, even an identical-looking one, is never mistaken for the old one.
(function (opts) {
  "use strict";
  const started = performance.now();
  // The walk neither scrolls nor changes the page: each document's viewport and each clipping
  // box is measured once (lib.js LAYOUT), not again for every element inside it.
  LAYOUT = fixedLayout();
  const LIMIT = opts.limit, MAX_NAME = 4096, MAX_VALUE = 65536, MAX_TEXT = 1000000, MAX_DEPTH = 128;
  const WORK_MS = opts.workMs || 3000;
  const reasons = new Set();
  let textBudget = MAX_TEXT;
  const ROLES = new Set(["button", "link", "textbox", "searchbox", "combobox", "listbox", "checkbox", "radio",
    "spinbutton", "slider", "switch", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "treeitem",
    "row", "gridcell", "columnheader", "rowheader"]);
  const GRID_ITEMS = new Set(["gridcell", "columnheader", "rowheader"]);
  const NAME_FROM_CONTENT = new Set(["button", "link", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
    "option", "treeitem", "switch", "checkbox", "radio"]);
  const INPUT_ROLES = {checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton", search: "searchbox",
    button: "button", submit: "button", reset: "button", image: "button", email: "textbox", tel: "textbox",
    text: "textbox", url: "textbox", password: "textbox", date: "textbox", "datetime-local": "textbox",
    month: "textbox", time: "textbox", week: "textbox", color: "button", file: "button"};

  function cut(text, max) {
    text = text || "";
    if (text.length > max) { reasons.add("text_limit"); text = text.slice(0, max); }
    if (text.length > textBudget) { reasons.add("text_limit"); text = text.slice(0, Math.max(0, textBudget)); }
    textBudget -= text.length;
    return text;
  }
  function clean(text) { return (text || "").replace(/\s+/g, " ").trim(); }
  function explicitRole(el) {
    const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    return role || null;
  }
  function textOf(el) {
    if (!el) return "";
    let text = el.innerText;
    if (text === undefined || text === null || (text === "" && el.textContent)) text = el.textContent;
    text = clean(text);
    if (!text) {
      const img = el.querySelector && el.querySelector("img[alt], [aria-label]");
      if (img) text = clean(img.getAttribute("alt") || img.getAttribute("aria-label"));
    }
    return text;
  }
  // el.labels walks the element's whole tree scope on each call (O(n^2) over a page of n
  // controls): the labels of every control are collected once per tree scope instead.
  const labelMaps = new Map();
  // Labelable elements (HTML's list; a custom element can be form-associated): `el.labels`
  // makes a new list on each read, so it is only read where a label can point.
  const LABELABLE = new Set(["button", "input", "meter", "output", "progress", "select", "textarea"]);
  function labelsOf(el) {
    if (!LABELABLE.has(el.localName) && !el.localName.includes("-")) return [];
    if (!el.labels) return [];
    const root = el.getRootNode();
    let map = labelMaps.get(root);
    if (!map) {
      map = new Map();
      if (root.querySelectorAll) for (const label of root.querySelectorAll("label")) {
        const control = label.control;
        if (control) map.has(control) ? map.get(control).push(label) : map.set(control, [label]);
      }
      labelMaps.set(root, map);
    }
    return map.get(el) || [];
  }
  function byId(el, id) {
    const root = el.getRootNode();
    return (root.getElementById ? root.getElementById(id) : null) || el.ownerDocument.getElementById(id);
  }
  // Code editors that keep a hidden textarea and draw the text themselves (CodeMirror 5, Monaco,
  // Ace): the whole editor is one textbox, never its parts.
  function editorKind(el) {
    // Most elements have no class: the attribute is cheaper to read than a DOMTokenList to make.
    if (!el.getAttribute("class")) return null;
    const c = el.classList;
    if (!c || !c.length) return null;
    if (c.contains("CodeMirror") && !c.contains("cm-editor")) return "codemirror";
    if (c.contains("monaco-editor")) return "monaco";
    if (c.contains("ace_editor")) return "ace";
    return null;
  }
  function editorText(el) {
    const kind = editorKind(el);
    const lines = el.querySelectorAll(kind === "codemirror" ? ".CodeMirror-code > div > pre.CodeMirror-line, .CodeMirror-code > pre.CodeMirror-line"
      : kind === "monaco" ? ".view-lines .view-line" : ".ace_text-layer .ace_line");
    return Array.from(lines).slice(0, 5000).map((l) => l.textContent.replace(/[\u200b]/g, "").replace(/\u00a0/g, " ")).join("\n");
  }
  function editorInput(el) {
    // What takes the editor's keys: its hidden textarea, or Monaco's EditContext element (its
    // default since 0.5x), beside which the textarea is a read-only, aria-hidden IME helper.
    return el.querySelector(".native-edit-context") || el.querySelector("textarea:not([aria-hidden='true'])")
      || el.querySelector("textarea");
  }
  function editorName(el) {
    const own = clean(el.getAttribute("aria-label"));
    if (own) return own;
    // CodeMirror.fromTextArea hides the page's own (labelled) textarea just before the editor.
    const original = el.previousElementSibling;
    if (original && original.localName === "textarea" && original.labels && original.labels.length)
      return clean(Array.from(original.labels).map(textOf).join(" "));
    const input = editorInput(el);
    return input ? clean(input.getAttribute("aria-label")) : "";
  }
  // An element with an ARIA widget role around exactly one native control (a role=option
  // holding a radio input, a role=button around a <button>, a role=combobox around its input):
  // one control, offered once, as the native one inside.
  const NATIVE = "a[href], button, input:not([type=hidden]), select, textarea";
  // A native control a person sees. A hidden or transparent one inside a wrapper that is drawn
  // instead (Quasar's role=checkbox div around its native input, Choices' role=listbox around its
  // <select>) is not the control: the wrapper is.
  function drawn(c) {
    const st = getComputedStyle(c);
    return st.display !== "none" && st.visibility !== "hidden" && parseFloat(st.opacity) > 0 && !proxyOf(c, null, st);
  }
  // ARIA 1.1's combobox: a role=combobox box around the text field one types in (Choices'
  // multi select). The box wraps that one control, so the field is offered, as the combobox.
  function comboboxAround(input) {
    const box = input.parentElement && input.parentElement.closest("[role=combobox]");
    return !!box && comboField(box) === input;
  }
  // The one text field a role=combobox box holds (its chosen items' remove buttons aside).
  const TEXT_FIELDS = "input:not([type]), input[type=text], input[type=search], textarea";
  function comboField(box) {
    if (explicitRole(box) !== "combobox" || box.matches(NATIVE)) return null;
    const fields = Array.from(box.querySelectorAll(TEXT_FIELDS)).filter(drawn);
    return fields.length === 1 ? fields[0] : null;
  }
  function wrapsOne(el) {
    if (!explicitRole(el) || el.matches(NATIVE)) return false;
    // (A native input or select hidden inside is the wrapper's own: it does not count. A hidden
    // button does: MUI's column header holds a sort button shown on hover, and a menu button.)
    const inner = Array.from(el.querySelectorAll(NATIVE))
      .filter((c) => (c.localName !== "input" && c.localName !== "select") || drawn(c));
    if (inner.length !== 1) return false;
    // The wrapper is that control when it shows nothing else: its input's label, or the same text
    // (a tree row holding an expand button and a file name is two controls).
    const one = inner[0];
    if (one.localName === "input" || one.localName === "select") return true;
    // A tree grid's row holding an expand button and a file name is two controls.
    return explicitRole(el) !== "row" || clean(one.textContent) === clean(el.textContent);
  }
  // Two controls, one target: a control whose only control inside has its name (a link around
  // a button, a role=button around a role=button). The innermost, the real one, is offered.
  function sameTarget(el, role) {
    if (!el.firstElementChild) return false;
    let inner = null, innerRole = null;
    for (const c of el.querySelectorAll(NATIVE + ", [role]")) {
      const r = roleOf(c);
      if (!r) continue;
      if (inner) return false;
      inner = c;
      innerRole = r;
    }
    // An input inside is wrapsOne's to judge: a label drawn as a button around a hidden file
    // input (MUI's upload button) is the control, not the input.
    if (!inner || inner.localName === "input") return false;
    const mine = nameOf(el, role).toLowerCase();
    return !!mine && mine === nameOf(inner, innerRole).toLowerCase();
  }
  // The role a focusable or clickable element without one takes from the widget it sits in (an
  // <li tabindex=0 aria-haspopup> in a menu: Chromium's tree ignores it), from its nearest
  // ancestor with a role; null for an element with a role of its own.
  const IMPLIED = {menu: "menuitem", menubar: "menuitem", listbox: "option", tree: "treeitem", tablist: "tab",
    toolbar: "button"};
  function impliedRole(el) {
    if (explicitRole(el)) return null;
    const box = el.parentElement && el.parentElement.closest("[role]");
    if (!box) return null;
    const role = explicitRole(box);
    if (role === "group") return box.parentElement && box.parentElement.closest("[role=tree]") ? "treeitem" : null;
    return IMPLIED[role] || null;
  }
  // An entry's own popup (a submenu, a tree item's children): its controls are that popup's, not
  // the entry's, and its text is not the entry's name.
  const POPUP = "[role=menu], [role=listbox], [role=tree], [role=group], [role=dialog]";
  function ownControl(el) {
    for (const c of el.querySelectorAll(CONTROLS)) {
      const popup = c.closest(POPUP);
      if (!popup || popup === el || !el.contains(popup)) return true;
    }
    return false;
  }
  function ownText(el) {
    let text = "";
    for (let n = el.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 3) text += " " + n.data;
      else if (n.nodeType === 1 && !n.matches(POPUP)) text += " " + (n.innerText || n.textContent || "");
    }
    return clean(text);
  }
  function roleOf(el) {
    if (editorKind(el)) return "textbox";
    const tag = el.localName, role = explicitRole(el);
    // A row is a control in a tree grid (Chromium: focusable, selectable, expandable), and in a
    // grid when the page made it focusable (AG Grid's rows); never in a table.
    if (role === "row") return el.closest("[role=treegrid]") || (el.hasAttribute("tabindex") && el.closest("[role=grid]")) ? "row" : null;
    // A data grid's cells and headers, focusable by its roving tabindex (-1 but the current
    // one): selected, sorted or edited by a click or a double-click. In a table, they are text.
    // A header that says how it sorts (aria-sort, Tabulator's) sorts on a click, roving tabindex or not.
    if (GRID_ITEMS.has(role)) return (el.hasAttribute("tabindex") || (role === "columnheader" && el.hasAttribute("aria-sort")))
      && el.closest("[role=grid], [role=treegrid]") ? role : null;
    if (role && ROLES.has(role)) return role;
    if (role === "presentation" || role === "none") return null;
    if (tag === "a" && el.hasAttribute("href")) return "link";
    if (tag === "button") return "button";
    if (tag === "input") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (type === "hidden") return null;
      if ((type === "text" || type === "search" || type === "") && (el.hasAttribute("list") || comboboxAround(el)))
        return "combobox";
      return INPUT_ROLES[type] || "textbox";
    }
    if (tag === "select") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (tag === "textarea") return "textbox";
    if (tag === "summary") return "button";
    // A native table's cell the page made focusable (Dash's DataTable): a grid cell it lets a
    // person select and edit, though the table carries no grid role.
    if ((tag === "td" || tag === "th") && el.hasAttribute("tabindex") && !role)
      return tag === "td" ? "gridcell" : el.getAttribute("scope") === "row" ? "rowheader" : "columnheader";
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return "textbox";
    return null;
  }
  // Real controls inside an element: a container holding them is not itself one control. An
  // element focusable by script only (tabindex -1, no role: Quasar's focus helper inside each
  // menu entry) is not one a person operates.
  const CONTROLS = "a[href], button, input:not([type=hidden]), select, textarea, summary, [role], " +
    "[tabindex]:not([tabindex^='-']), [onclick], [contenteditable]";
  // A page of text (a scrolling <main tabindex=0>, an article) is read, not pressed.
  const CONTAINER_TEXT = 300;
  function container(el) {
    return !!el.querySelector(CONTROLS) || (el.textContent || "").length > CONTAINER_TEXT;
  }
  // Structures made focusable to be read or scrolled by keyboard (React Aria's tab panel, a
  // scrolling region): focus alone does not make them something to press.
  const STRUCTURES = new Set(["main", "navigation", "banner", "contentinfo", "complementary", "region", "form",
    "search", "tabpanel", "dialog", "alertdialog", "grid", "treegrid", "tree", "table", "list", "menu", "menubar",
    "tablist", "toolbar", "radiogroup", "group", "article", "document", "application", "log", "status", "alert",
    "feed", "rowgroup", "note", "figure"]);
  // An entry right inside a submenu: the pointer cursor it shares with its parent is the one the
  // submenu inherits from the entry that holds it, not the sign of a bigger target around it.
  function entryOfPopup(el) {
    return !!el.parentElement && el.parentElement.matches(POPUP) && !!impliedRole(el);
  }
  // An empty sliver a listener or a pointer cursor makes live (Tabulator's column resize handle,
  // 3-6 px wide): an edge to drag, not a button to press; nothing of it names or shows a purpose.
  const GRIP_PX = 8;
  function grip(el) {
    if (el.firstElementChild || clean(el.textContent) || el.hasAttribute("aria-label") || el.hasAttribute("title")) return false;
    const r = el.getBoundingClientRect();
    return Math.min(r.width, r.height) <= GRIP_PX;
  }
  function domOnlyRole(el, style, parentStyle) {
    // Controls the accessibility tree misses: focusable or pointer-cursor elements with handlers,
    // unless they hold other controls or a page of text (then those, or nothing, are offered).
    let found = null;
    if (el.hasAttribute("onclick")) found = "button";
    else if (el.hasAttribute("tabindex") && el.tabIndex >= 0 && !["html", "body"].includes(el.localName)) {
      if (!STRUCTURES.has(explicitRole(el))) found = "button";
    }
    else if (style.cursor === "pointer" && (!parentStyle || parentStyle.cursor !== "pointer" || entryOfPopup(el))) found = "button";
    if (found && grip(el)) return null;
    if (found) {
      const implied = impliedRole(el);
      if (implied) return ownControl(el) || (!el.querySelector(POPUP) && container(el)) ? null : implied;
      return container(el) ? null : found;
    }
    // A pointer listener Chrome reported (broker/observe/listeners.py), unless it is a container that
    // delegates for real controls inside it, or the page itself.
    const marked = globalThis.__browserPilot && globalThis.__browserPilot.listeners;
    if (marked && marked.has(el) && !["html", "body"].includes(el.localName) && !el.querySelector(CONTROLS) && !grip(el))
      return impliedRole(el) || "button";
    return null;
  }
  function nameOf(el, role) {
    if (editorKind(el)) return editorName(el);
    let name = "";
    const labelledby = el.getAttribute("aria-labelledby");
    if (labelledby) name = clean(labelledby.split(/\s+/).map((id) => textOf(byId(el, id))).join(" "));
    if (!name) name = clean(el.getAttribute("aria-label"));
    const labels = labelsOf(el);
    if (!name && labels.length) name = clean(labels.map(textOf).join(" "));
    if (!name && NAME_FROM_CONTENT.has(role) && el.localName !== "input")
      name = !explicitRole(el) && el.querySelector(POPUP) ? ownText(el) : textOf(el);
    if (!name) name = clean(el.getAttribute("title"));
    // A placeholder names only a field that shows it (Chromium ignores one on a <select>).
    if (!name && (el.localName === "input" || el.localName === "textarea")) name = clean(el.getAttribute("placeholder"));
    if (!name) name = clean(el.getAttribute("alt"));
    if (!name && el.localName === "input" && ["button", "submit", "reset"].includes((el.type || "").toLowerCase()))
      name = clean(el.value || (el.type === "submit" ? "Submit" : el.type === "reset" ? "Reset" : ""));
    // An unlabelled file input is the button Chromium draws and names for it.
    if (!name && el.localName === "input" && (el.type || "").toLowerCase() === "file")
      name = el.multiple ? "Choose Files" : "Choose File";
    if (!name && !["textbox", "searchbox", "combobox", "listbox", "slider", "spinbutton"].includes(role)) name = textOf(el);
    return name;
  }
  function valueOf(el, role) {
    if (editorKind(el)) return editorText(el);
    if (el.localName === "input") {
      const type = (el.type || "").toLowerCase();
      if (type === "password") return null;  // never echo a secret
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file", "color"].includes(type)) return null;
      return el.value;
    }
    if (el.localName === "textarea") return el.value;
    if (el.localName === "select") return Array.from(el.selectedOptions || []).map((o) => clean(o.textContent)).join(", ");
    if (role === "textbox" && el.isContentEditable) return clean(el.innerText);
    const now = el.getAttribute("aria-valuenow") || el.getAttribute("aria-valuetext");
    return now;
  }
  // What an entry of a menu or tree says of its popup: aria-haspopup's token and aria-expanded.
  const POPUP_KINDS = new Set(["menu", "listbox", "tree", "grid", "dialog"]);  // bp/protocol.py HASPOPUP
  function popupFacts(el, element) {
    const popup = (el.getAttribute("aria-haspopup") || "").toLowerCase();
    if (popup === "true" || POPUP_KINDS.has(popup)) element.haspopup = popup === "true" ? "menu" : popup;
    const expanded = el.getAttribute("aria-expanded");
    if (expanded === "true" || expanded === "false") element.expanded = expanded === "true";
    else if (element.expanded === undefined) nestedPopupFacts(el, element);
  }
  // An implied entry that holds its own popup (jQuery UI's <li>Export<ul>...</ul></li>) and says
  // nothing of it: the popup it holds is the fact, and whether it shows is whether it is expanded.
  function nestedPopupFacts(el, element) {
    for (const popup of el.querySelectorAll(POPUP)) {
      if (popup.parentElement.closest(POPUP) !== el.closest(POPUP)) continue;  // a popup of an entry inside
      const kind = explicitRole(popup);
      if (kind !== "group" && element.haspopup === undefined) element.haspopup = kind;
      element.expanded = popup.getClientRects().length > 0 && getComputedStyle(popup).visibility !== "hidden";
      return;
    }
  }
  function checkedOf(el) {
    if (el.localName === "input" && ["checkbox", "radio"].includes((el.type || "").toLowerCase())) return el.checked;
    return el.getAttribute("aria-checked") === "true";
  }
  function disabled(el) {
    if (el.matches(":disabled")) return true;
    return !!el.closest("[aria-disabled='true'], [inert]");
  }
  // What a person could act on, by the rule the resolver applies before an action (lib.js):
  // scrolling can bring it into view, and where it shows now, the pointer lands on it. Below
  // the fold (or in a scroll container) counts: only points shown now are hit-tested.
  function reachable(el, rect) {
    const found = hitTest(el, false, rect);
    return !!found && found.reachable && (found.points.length > 0 || found.tested === 0);
  }
  function unreachable(el, rect) {
    const found = hitTest(el, false, rect);
    if (found && found.reachable && (found.points.length > 0 || found.tested === 0)) return null;
    return found && found.obstruction ? "covered" : "out_of_view";
  }
  function modalRoot(doc) {
    let modal = null;
    for (const d of doc.querySelectorAll("dialog")) { try { if (d.matches(":modal")) modal = d; } catch (e) {} }
    if (modal) return modal;
    // Shown: its own box, or (Headless UI's role=dialog wrapper of no height around its fixed
    // backdrop and panel) a box of what it holds.
    const boxed = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const aria = Array.from(doc.querySelectorAll("[aria-modal='true']")).filter((m) => {
      const s = getComputedStyle(m);
      if (s.display === "none" || s.visibility === "hidden") return false;
      return boxed(m) || Array.from(m.querySelectorAll("*")).slice(0, 64).some((c) => boxed(c) && getComputedStyle(c).visibility !== "hidden");
    });
    return aria.length ? aria[aria.length - 1] : null;
  }

  function frameUsable(el, style, ctx) {
    if (style.visibility === "hidden" || style.visibility === "collapse") return false;
    if (ctx.modal && !composedContains(ctx.modal, el)) return false;
    const rect = el.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0 && reachable(el);
  }

  const store = (globalThis.__browserPilot = globalThis.__browserPilot || {});
  // The document's mutation count: what the broker learnt from the accessibility engine about
  // an element holds while no mutation happened since (broker/observe/ax.py). Values and the
  // checked state of native inputs change without one: those are read here, every time.
  // It also marks each changed element with the count of its change (an added subtree's root, an
  // element whose attribute or text changed), so that an action's answer can lead with what the
  // action changed (opts.lead) and not leave a menu it opened past the element limit.
  const watched = store.mutations || (store.mutations = {count: 0, docs: new WeakSet(), marks: new WeakMap(),
    log: [], floor: 0});
  // The accessibility facts' own log: which node each recent change touched, and how (an added
  // subtree, a changed child list, text, an attribute), so that a change of the page keeps the
  // engine's facts of every element it cannot have touched (axSince below). A change that can
  // rename anything (an id, a label's target, a style sheet) raises the floor: all are asked again.
  const GLOBAL_ATTRIBUTES = new Set(["id", "for", "aria-owns", "aria-activedescendant"]);
  const LOG_MAX = 400;
  function logged(node, n, kind) {
    if (!node) return;
    if (node.nodeType !== 1) node = node.parentElement;
    if (!node) return;
    if (node.localName === "style" || node.localName === "link" || (node.closest && node.closest("head"))) {
      watched.floor = n;
      return;
    }
    watched.log.push({n: n, node: node, kind: kind});
    if (watched.log.length > LOG_MAX) {
      const dropped = watched.log.splice(0, LOG_MAX / 2);
      watched.floor = Math.max(watched.floor, dropped[dropped.length - 1].n);
    }
  }
  const OWN_ATTRIBUTE = "data-browser-pilot-readback";  // resolve.js's own mark: not the page's change
  function marked(node, n) {
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    if (el) watched.marks.set(el, n);
  }
  function watch(doc) {
    if (watched.docs.has(doc)) return;
    watched.docs.add(doc);
    new MutationObserver((records) => {
      const n = ++watched.count;
      for (const r of records) {
        if (r.type === "childList") {
          logged(r.target, n, "kids");
          for (const added of r.addedNodes) logged(added, n, "add");
        } else if (r.type === "characterData") logged(r.target, n, "kids");
        else if (r.attributeName !== OWN_ATTRIBUTE) {
          if (GLOBAL_ATTRIBUTES.has(r.attributeName)) watched.floor = n;
          else logged(r.target, n, "attr");
        }
        if (r.type === "childList") for (const added of r.addedNodes) marked(added, n);
        // The root or body restyled (Bootstrap's modal-open): not a change of all it holds.
        else if (r.attributeName !== OWN_ATTRIBUTE && r.target !== r.target.ownerDocument.documentElement &&
                 r.target !== r.target.ownerDocument.body) marked(r.target, n);
      }
    }).observe(doc, {subtree: true, childList: true, attributes: true, characterData: true});
  }
  watch(document);
  // This Agent's ref table for the document (broker/observe/snapshot.py RefTable): one number per node
  // for as long as the node is held, never given to another node; new nodes get the next one.
  let table = store[opts.key];
  if (!table || table.table !== opts.table)
    table = store[opts.key] = {table: opts.table, next: 1, byRef: new Map(), ids: new Map(), listed: new Set(), frames: []};
  table.next = Math.max(table.next, opts.next || 1);
  // A walk sent ahead of the listener listing is tentative (broker/observe/snapshot.py _walk):
  // when the listing marks new nodes the page is walked again, as if the tentative walk had not
  // observed it (its numbers stay: a node keeps the one it was given).
  if (opts.rollback && table.undo) table.undo();
  table.undo = null;
  const undoFacts = opts.tentative && !opts.register ? [] : null;
  // Changed since this table's last observation (none on its first: everything would be "new").
  const changedSince = table.seenCount === undefined ? Infinity : table.seenCount;
  const lead = !!opts.lead && watched.count > changedSince;
  let leadExtra = 0, changedSkipped = 0;
  const fresh = new Set();
  function numberOf(el) {
    let ref = table.ids.get(el);
    if (ref === undefined) {
      ref = table.next++;
      table.ids.set(el, ref);
      table.byRef.set(ref, {el: el, facts: null});
      fresh.add(ref);
    }
    return ref;
  }
  const els = [], facts = [], out = [], outEls = [], frames = [];
  // Inline (same-process, reachable) frame documents the walk entered: their frame elements and
  // the document each sits in (0 = this world's own). Elements say which one holds them (`d`),
  // so that the broker can keep only those of a selected frame ('bp frame').
  const docs = [null], docParents = [-1];
  let eligible = 0, stop = false, disabledCount = 0;
  const offList = [];
  const LEFT_OUT_MAX = LIMIT, leftOut = [];  // as many as the elements asked for
  let leftOutCount = 0;
  const topModal = modalRoot(document);
  const modalRefs = [];
  // A modal the Agent's own action opened (it appeared in the action's answer, and is the same
  // element since) is where its task goes on, not an obstacle to close first.
  let modalOpened = false;
  if (topModal && table.openedModal === topModal) modalOpened = true;
  else if (topModal && lead) {
    for (let n = topModal; n && !modalOpened; n = n.parentElement) modalOpened = (watched.marks.get(n) || 0) > changedSince;
  }
  const openedBefore = table.openedModal;
  if (!opts.register) table.openedModal = modalOpened ? topModal : null;

  let visits = 0;
  function visit(el, depth, ctx) {
    if (stop) return;
    if (depth > MAX_DEPTH) { reasons.add("depth_limit"); return; }
    if ((++visits & 31) === 0 && performance.now() - started > WORK_MS) {  // the clock, every 32nd
      // Past the limit only changed elements are looked for: the answer is complete without them.
      if (els.length < LIMIT) reasons.add("work_limit");
      stop = true;
      return;
    }
    const style = getComputedStyle(el);
    if (style.display === "none") return;
    if (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert")) return;
    let ownRole = roleOf(el);  // once: the children's context needs it too
    if (ownRole && !editorKind(el) && (wrapsOne(el) || sameTarget(el, ownRole) || comboField(el))) ownRole = null;
    // Inside a control nothing else is one, but for an option of a listbox that has no role of its own.
    const role = ctx.editor ? null : ownRole || (ctx.insideControl && !(ctx.listbox && impliedRole(el) === "option")
      ? null : domOnlyRole(el, style, ctx.parentStyle));
    let counted = false;
    const changed = ctx.changed || (watched.marks.get(el) || 0) > changedSince;
    const visibility = role ? style.visibility : null;
    if (role && visibility !== "hidden" && visibility !== "collapse") {
      let rect = el.getBoundingClientRect();
      // A native checkbox, radio or range input drawn by something else (its label, a styled
      // track): offered with that proxy's box, where a person operates it (lib.js proxyOf).
      const proxy = proxyOf(el, rect, style);
      // A hidden native input inside a control that is offered (Quasar's role=checkbox around
      // it): that control is its face, one entry.
      if ((proxy || ((el.localName === "input" || el.localName === "select") && !drawn(el))) && ctx.insideControl) return;
      const target = proxy || el;
      if (proxy) rect = proxy.getBoundingClientRect();
      const hiddenByOpacity = !proxy && parseFloat(style.opacity) === 0 && !labelsOf(el).length;
      const inModal = !ctx.modal || composedContains(ctx.modal, el);
      const sized = rect.width > 0 && rect.height > 0;
      const off = sized && disabled(el);
      if (off && inModal) {
        // Not actionable, but counted (and listed on request): "no Save button" and "Save is
        // disabled" read differently.
        disabledCount++;
        if (opts.disabled && offList.length < LIMIT) {
          const item = {role: role, name: cut(nameOf(el, role), MAX_NAME), disabled: true};
          const value = valueOf(el, role);
          if (value) item.value = cut(value, MAX_VALUE);
          offList.push(item);
        }
      }
      // Why a control a person cannot operate now is left out (stated in `leftOut`, below).
      const why = off || !inModal ? null : !sized ? "zero_size" : hiddenByOpacity ? "transparent"
        : !proxy && style.pointerEvents === "none" ? "no_pointer_events" : unreachable(target, rect);
      if (!off && inModal && why === null) {
        eligible++;
        counted = true;
        const past = els.length >= LIMIT;
        if (past && lead && changed && leadExtra >= LIMIT) changedSkipped++;
        if (!past || (lead && changed && leadExtra < LIMIT)) {
          if (past) leadExtra++;
          const name = cut(nameOf(el, role), MAX_NAME);
          const element = {ref: numberOf(el), role: role, name: name};
          if (ctx.docIndex) element.d = ctx.docIndex;
          if (lead && changed) element.c = 1;
          if (role === "combobox" && el.localName === "input" && comboboxAround(el)) element.k = 1;  // ax.py fuse
          const value = valueOf(el, role);
          if (value) element.value = cut(value, MAX_VALUE);
          if (checkedOf(el)) element.checked = true;
          if (!ownRole && role !== "button") popupFacts(el, element);  // an implied entry: the engine ignores it
          out.push(element);
          outEls.push(el);
          els.push(el);
          facts.push([role, name, element.value || null, !!element.checked]);
          if (ctx.modal) modalRefs.push(out.length);
        } else {
          reasons.add("element_limit");
          if (!lead) stop = true;  // the answer is complete: no need to walk on
        }
      } else if (why && ownRole && els.length < LIMIT) {
        // A control the page has (its own role, as the accessibility tree shows it) that cannot be
        // operated now, and why: covered by another element, out of view (clipped, off every
        // scroll), transparent, zero-size, or not taking pointer events.
        leftOutCount++;
        if (leftOut.length < LEFT_OUT_MAX) leftOut.push({role: role, name: nameOf(el, role).slice(0, 120), reason: why});
      }
    }
    const childCtx = {doc: ctx.doc, win: ctx.win, modal: ctx.modal, parentStyle: style, docIndex: ctx.docIndex, changed: changed,
      // A popup an entry holds (a submenu inside its <li>) holds controls of its own.
      insideControl: (ctx.insideControl || counted || !!ownRole) && !(!ownRole && el.matches(POPUP)), editor: ctx.editor || !!editorKind(el),
      listbox: ownRole === "listbox" ? el : counted || ownRole ? null : ctx.listbox};
    if (el.shadowRoot) for (const child of el.shadowRoot.children) visit(child, depth + 1, childCtx);
    if (el.localName === "iframe" || el.localName === "frame") {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) { inner = null; }
      if (inner && inner.documentElement) {
        const win = inner.defaultView;
        watch(inner);
        docs.push(el);
        docParents.push(ctx.docIndex || 0);
        visit(inner.documentElement, depth + 1, {doc: inner, win: win, modal: modalRoot(inner),
          parentStyle: null, insideControl: false, docIndex: docs.length - 1, changed: changed});
      } else if (frameUsable(el, style, ctx)) {
        // Another process renders it (a cross-site iframe): the broker splices in that frame's
        // own observation here, so its elements keep their document order.
        out.push(ctx.docIndex ? {frame: frames.length, d: ctx.docIndex} : {frame: frames.length});
        outEls.push(null);
        frames.push(el);
      }
      return;
    }
    if (rowHolder(el)) for (const child of visualRows(el, el.children)) visit(child, depth + 1, childCtx);
    // (Siblings, not el.children: a collection object per element is garbage on a big page.)
    else for (let child = el.firstElementChild; child; child = child.nextElementSibling) visit(child, depth + 1, childCtx);
  }
  visit(document.documentElement, 0, {doc: document, win: window, modal: topModal, parentStyle: null,
    insideControl: false});

  // Names an Agent can tell apart: where elements of this observation share role and name (four
  // "Delete" buttons in four rows) or a control has no name, each gets a short `context`, the
  // text that distinguishes it: its row's first cell, a label beside it, its list item's text,
  // its fieldset's legend or group's label, the nearest heading before it. Only those elements
  // get one, so an observation of distinct names does not grow.
  // A budget of its own: a walk that used most of WORK_MS (a big table) still gets contexts.
  const MAX_CONTEXT = 80, CONTEXT_ELEMENTS = 1000, CONTEXT_MS = 300;
  function shortText(text) {
    text = clean(text);
    return text.length > MAX_CONTEXT ? text.slice(0, MAX_CONTEXT - 1).trimEnd() + "\u2026" : text;
  }
  // The text a container shows apart from the element itself (what a person reads beside it).
  function textBesides(container, el) {
    const parts = [];
    let length = 0;
    const walker = container.ownerDocument.createTreeWalker(container, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode(n) {
        if (n.nodeType === 3) return NodeFilter.FILTER_ACCEPT;
        // Not the options of a select beside it: what a person reads, not what a control holds.
        if (n === el || ["script", "style", "template", "noscript", "select", "datalist", "textarea"].includes(n.localName) ||
            n.getAttribute("aria-hidden") === "true") return NodeFilter.FILTER_REJECT;
        const st = getComputedStyle(n);
        return st.display === "none" || st.visibility === "hidden" ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
      }});
    for (let n = walker.nextNode(); n && length <= MAX_CONTEXT; n = walker.nextNode()) {
      const t = clean(n.data);
      if (t) { parts.push(t); length += t.length + 1; }
    }
    return parts.join(" ");
  }
  const ROW_CELLS = new Set(["cell", "gridcell", "rowheader", "columnheader"]);
  // A nameless control's purpose as its page's code names it (flatpickr's arrow is a <span
  // class="flatpickr-prev-month"> holding an SVG): "prev month" tells it from "next month".
  const PURPOSES = new Set(["prev", "previous", "next", "close", "dismiss", "back", "forward", "up", "down", "left",
    "right", "increment", "decrement", "increase", "decrease", "plus", "minus", "add", "remove", "delete", "clear",
    "edit", "menu", "search", "expand", "collapse", "toggle", "more", "settings", "today", "play", "pause", "copy",
    "share", "download", "upload", "zoom", "refresh", "reload", "undo", "redo", "save", "send", "sort", "filter"]);
  const FILLER = new Set(["btn", "button", "icon", "ico", "svg", "js", "is", "has", "ui", "control", "action"]);
  const nameless = new Set();
  const WORDY = /[\p{L}\p{N}]/u;
  function purpose(el) {
    if (!nameless.has(el)) return "";
    for (const source of [el.id, ...el.classList]) {
      const words = (source || "").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z]+/)
        .filter((w) => w && !FILLER.has(w));
      const at = words.findIndex((w) => PURPOSES.has(w));
      if (at >= 0) return words.slice(at, at + 3).join(" ");
    }
    return "";
  }
  const CONTEXTS = [
    function row(el) {
      const tr = el.closest("tr, [role=row]");
      if (!tr) return "";
      for (const cell of tr.children) {
        if (!(cell.localName === "td" || cell.localName === "th" || ROW_CELLS.has(explicitRole(cell))) || cell.contains(el)) continue;
        const t = textBesides(cell, el);
        if (t) return t;
      }
      return "";
    },
    function beside(el) {
      // The text a control's own label would hold: after a checkbox, radio or switch, before any
      // other control. A label that belongs to another control is that control's, never this one's.
      const after = ["checkbox", "radio", "switch"].includes(roleOf(el) || "");
      for (const step of after ? ["nextSibling", "previousSibling"] : ["previousSibling", "nextSibling"]) {
        let n = el[step];
        // Past blank text and what is never shown (a <script> beside a header button is no label).
        const unseen = (m) => m.nodeType === 1 && (["script", "style", "template", "noscript"].includes(m.localName) ||
          m.hidden || m.getAttribute("aria-hidden") === "true");
        while (n && ((n.nodeType === 3 && !clean(n.data)) || unseen(n))) n = n[step];
        if (!n) continue;
        if (n.nodeType === 3) return n.data;
        if (n.nodeType === 1 && n.localName === "label" && n.control && n.control !== el) continue;
        if (n.nodeType === 1 && !roleOf(n) && !n.querySelector("input, select, textarea, button, [role]")) {
          const t = textBesides(n, el);
          if (t) return t;
        }
      }
      return "";
    },
    function item(el) {
      const li = el.closest("li, dd, article, [role=listitem], [role=treeitem], [role=article]");
      return li ? textBesides(li, el) : "";
    },
    purpose,
    function group(el) {
      const selector = "fieldset, dialog, [role=group], [role=radiogroup], [role=region], [role=dialog], [role=form]," +
        " [role=toolbar], [role=tabpanel], [role=navigation], nav, section, form";
      for (let g = el.parentElement && el.parentElement.closest(selector), hops = 0; g && hops < 8;
           g = g.parentElement && g.parentElement.closest(selector), hops++) {
        const legend = g.localName === "fieldset" ? g.querySelector(":scope > legend") : null;
        const labelledby = g.getAttribute("aria-labelledby");
        const t = legend ? textOf(legend) : labelledby ? labelledby.split(/\s+/).map((id) => textOf(byId(g, id))).join(" ")
          : g.getAttribute("aria-label");
        if (clean(t)) return t;
      }
      return "";
    },
    function heading(el) {
      const HEADINGS = "h1, h2, h3, h4, h5, h6, [role=heading]";
      const shown = (h) => h.getClientRects().length > 0;
      let scanned = 0;
      for (let n = el; n && n !== n.ownerDocument.body && scanned < 400; n = n.parentElement) {
        for (let s = n.previousElementSibling; s && scanned < 400; s = s.previousElementSibling, scanned++) {
          if (s.matches(HEADINGS) && shown(s)) return textOf(s);
          const inner = Array.from(s.querySelectorAll(HEADINGS)).filter(shown);
          if (inner.length) return textOf(inner[inner.length - 1]);
        }
      }
      return "";
    },
  ];
  function addContexts() {
    const groups = new Map();
    out.forEach((e, i) => {
      if (!outEls[i]) return;
      if (!WORDY.test(e.name)) nameless.add(outEls[i]);
      const key = e.role + "\u0000" + e.name;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(i);
    });
    let budget = CONTEXT_ELEMENTS;
    const since = performance.now();
    for (const members of groups.values()) {
      const name = out[members[0]].name;
      // (A name of glyphs only, tom-select's "×", says nothing either: it gets a context too. A
      // grid's cell, "8", is read with its row: it takes the row's first cell, and no more.)
      const cell = out[members[0]].role === "gridcell";
      if (WORDY.test(name) && members.length < 2 && !cell) continue;
      if (budget <= 0 || performance.now() - since > CONTEXT_MS) break;
      budget -= members.length;
      // Level by level, an element takes the first text that no other of its group shares at
      // that level; one that never stands out keeps the first text it had.
      const first = new Map();
      let pending = members.slice();
      for (const level of WORDY.test(name) && members.length < 2 ? CONTEXTS.slice(0, 1) : CONTEXTS) {
        const found = new Map(), counts = new Map();
        for (const i of pending) {
          const t = shortText(level(outEls[i]));
          if (!t || t.toLowerCase() === name.toLowerCase()) continue;
          found.set(i, t);
          if (!first.has(i)) first.set(i, t);
          counts.set(t, (counts.get(t) || 0) + 1);
        }
        for (const [i, t] of found) if (counts.get(t) === 1 || members.length === 1) out[i].context = t;
        pending = pending.filter((i) => !("context" in out[i]));
        if (!pending.length) break;
      }
      for (const i of pending) if (first.has(i)) out[i].context = first.get(i);
    }
  }
  if (!opts.register) addContexts();

  // For the broker's cache of the engine's facts (broker/observe/ax.py): each listed element's
  // `x`, the count of the latest change since opts.axSince that can have touched what the engine
  // says of it — itself, what it holds, its ancestors' attributes, its labels — or the floor.
  if (typeof opts.axSince === "number" && !opts.register) {
    const recent = watched.log.filter((entry) => entry.n > opts.axSince && entry.node.isConnected);
    const floor = watched.floor > opts.axSince ? watched.floor : 0;
    const limit = Math.min(out.length, opts.axCount || 0);
    for (let i = 0; i < limit; i++) {
      const el = outEls[i];
      if (!el) continue;
      let x = floor;
      if (recent.length) {
        const sources = [el];
        for (const label of labelsOf(el)) sources.push(label);
        for (const attr of ["aria-labelledby", "aria-describedby"]) {
          const ids = el.getAttribute(attr);
          if (ids) for (const id of ids.split(/\s+/)) { const t = id && byId(el, id); if (t) sources.push(t); }
        }
        for (let k = recent.length - 1; k >= 0; k--) {
          const entry = recent[k];
          if (entry.n <= x) break;
          const m = entry.node;
          if (sources.some((source) => source.contains(m)) ||
              (entry.kind !== "kids" && m.contains(el))) { x = entry.n; break; }
        }
      }
      out[i].x = x;
    }
  }

  // --diff: which reported fields of the elements this table already held changed since they
  // were last observed (identity is the node: an identical-looking replacement has a new number).
  const changed = [];
  const listed = new Set();
  els.forEach((el, i) => {
    const ref = table.ids.get(el), held = table.byRef.get(ref), now = facts[i], was = held.facts;
    listed.add(ref);
    if (opts.register) { if (!was) held.facts = now; return; }
    if (opts.diff && was && !fresh.has(ref)) {
      const fields = [];
      if (was[0] !== now[0]) fields.push("role");
      if (was[1] !== now[1]) fields.push("name");
      if ((was[2] || null) !== now[2]) fields.push("value");
      if (!!was[3] !== now[3]) fields.push("checked");
      if (fields.length) changed.push([ref, fields]);
    }
    if (undoFacts) undoFacts.push([held, was]);
    held.facts = now;
  });
  if (!opts.register) {
    if (undoFacts) {
      const before = [table.listed, table.frames, table.docs, table.seenCount, openedBefore];
      table.undo = () => {
        [table.listed, table.frames, table.docs, table.seenCount, table.openedModal] = before;
        for (const [held, facts] of undoFacts) held.facts = facts;
      };
    }
    table.listed = listed; table.frames = frames; table.docs = docs; table.seenCount = watched.count;
  }
  // The table's bound: past it, the oldest numbers the latest observation did not list expire.
  if (table.byRef.size > opts.bound) {
    for (const [ref, held] of table.byRef) {
      if (table.byRef.size <= opts.bound) break;
      if (table.listed.has(ref)) continue;
      table.byRef.delete(ref);
      table.ids.delete(held.el);
    }
  }
  // For live revalidation of a single ref after same-document changes (resolve.js).
  // The role the walker gave an element: its own, else its widget's (a role-less menu entry), else a button.
  store.roleOf = (el) => roleOf(el) || impliedRole(el);
  store.editorKind = editorKind;
  store.editorText = editorText;
  store.editorInput = editorInput;
  store.nameOf = (el, role) => nameOf(el, role).slice(0, MAX_NAME);
  if (opts.register) return {next: table.next};

  const scroller = document.scrollingElement || document.documentElement;
  const vw = window.innerWidth, vh = window.innerHeight;
  const dw = Math.max(scroller.scrollWidth, vw), dh = Math.max(scroller.scrollHeight, vh);
  const sx = Math.round(window.scrollX), sy = Math.round(window.scrollY);
  const page = {viewportWidth: vw, viewportHeight: vh, documentWidth: dw, documentHeight: dh, scrollX: sx,
    scrollY: sy, pixelsAbove: sy, pixelsBelow: Math.max(0, dh - vh - sy), pixelsLeft: sx,
    pixelsRight: Math.max(0, dw - vw - sx),
    scrollPercentX: dw > vw ? Math.round(100 * sx / (dw - vw)) : 0,
    scrollPercentY: dh > vh ? Math.round(100 * sy / (dh - vh)) : 0};

  const hints = [];
  if (topModal) hints.push({code: "modal_overlay", source: "observation", confidence: "strong",
    recommendedAction: modalOpened ? "continue_in_dialog" : "resolve_overlay_first", blocking: true,
    refs: modalRefs.slice(0, 32), openedByAction: modalOpened || undefined});
  const auto = [];
  // Hint refs are positions in `out` (1-based); the broker maps them to the merged refs.
  out.forEach((e, i) => {
    const el = outEls[i];
    if (e.role === "combobox" && el && (el.getAttribute("aria-autocomplete") || el.hasAttribute("list"))) auto.push(i + 1);
  });
  if (auto.length) hints.push({code: "autocomplete", source: "observation", confidence: "strong",
    recommendedAction: "observe_then_select", refs: auto.slice(0, 32)});
  const filters = [];
  out.forEach((e, i) => { if (outEls[i] && /\b(filter|sort|refine)/i.test(e.name)) filters.push(i + 1); });
  if (filters.length >= 2) hints.push({code: "filter_controls", source: "observation", confidence: "strong",
    recommendedAction: "review_refinement_controls", refs: filters.slice(0, 32)});
  if (document.querySelector("input[type=password]")) hints.push({code: "authentication_surface",
    source: "observation", confidence: "strong", recommendedAction: "inspect_authentication_state", state: "present"});

  const order = ["element_limit", "text_limit", "depth_limit", "byte_limit", "work_limit"];
  return {title: cut(document.title, MAX_NAME), url: location.href.slice(0, 16384), page: page, elements: out,
    truncationReasons: order.filter((r) => reasons.has(r)), hints: hints.slice(0, 16), eligible: eligible,
    next: table.next, changed: changed, docParents: docs.length > 1 ? docParents : undefined,
    disabledCount: disabledCount, disabled: opts.disabled ? offList : undefined, gen: watched.count,
    changedSkipped: changedSkipped, leftOut: leftOut, leftOutCount: leftOutCount};
})
