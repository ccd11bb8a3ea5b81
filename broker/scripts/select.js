// Browser Pilot dropdowns: list and choose the options of a native <select> or an ARIA
// combobox/listbox. Runs in Browser Pilot's isolated world; element handles never leave it.
// One command binds its dropdown (and later its chosen option) to a slot under a random token,
// so every later step acts on the exact same nodes or learns that they are gone.
(function (el, opts) {
  "use strict";
  const MAX_OPTIONS = 500, MAX_LABEL = 1000, MAX_SELECTED = 50;
  const slots = (globalThis.__browserPilotForms = globalThis.__browserPilotForms || {});
  const clean = (t) => (t || "").replace(/\s+/g, " ").trim();
  const cut = (t) => t.length > MAX_LABEL ? t.slice(0, MAX_LABEL) : t;
  const styleOf = (e) => e.ownerDocument.defaultView.getComputedStyle(e);
  const roleOf = (e) => {
    const explicit = (e.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    if (explicit) return explicit;
    if (e.localName === "select") return e.multiple || e.size > 1 ? "listbox" : "combobox";
    if (e.localName === "input" && (e.hasAttribute("list") || boxOf(e))) return "combobox";
    return null;
  };
  // ARIA 1.1's combobox: the role=combobox box around the field one types in (Choices' multi
  // select). The observation offers the field as the combobox; its list is the box's.
  const boxOf = (e) => {
    const box = e.localName === "input" && e.parentElement && e.parentElement.closest("[role=combobox]");
    return box && (box.getAttribute("role") || "").trim().toLowerCase() === "combobox" ? box : null;
  };
  const visible = (e) => {
    if (!e.isConnected || !e.getClientRects().length) return false;
    const s = styleOf(e);
    return s.visibility !== "hidden" && s.visibility !== "collapse";
  };
  const byId = (e, id) => {
    const root = e.getRootNode();
    return (root.getElementById && root.getElementById(id)) || e.ownerDocument.getElementById(id);
  };
  const idrefs = (e, attr) => (e.getAttribute(attr) || "").trim().split(/\s+/).filter(Boolean)
    .map((id) => byId(e, id)).filter(Boolean);

  function listboxOf(e) {
    // A listbox drawn around its own popup list (Choices' role=listbox box holding the chosen
    // item and a role=listbox dropdown): the list inside is the one to choose from.
    if (roleOf(e) === "listbox") return e.querySelector("[role=listbox]") || e;
    // ARIA 1.1 wraps a textbox in the combobox: its aria-controls counts too.
    const box = boxOf(e);
    if (box) {
      // The box's list of choices: the listbox with the most options (Choices also keeps the
      // chosen items in a listbox of their own), the later one on a tie (a dropdown comes last).
      let best = null, most = -1;
      for (const lb of box.querySelectorAll("[role=listbox]")) {
        const n = lb.querySelectorAll("[role=option]").length;
        if (n >= most) { best = lb; most = n; }
      }
      if (best) return best;
    }
    const holders = [e, ...Array.from(e.querySelectorAll("[aria-controls], [aria-owns]")).slice(0, 20)];
    for (const h of holders) {
      for (const ref of [...idrefs(h, "aria-controls"), ...idrefs(h, "aria-owns")]) {
        if (roleOf(ref) === "listbox") return ref;
        const inner = ref.querySelector("[role=listbox]");
        if (inner) return inner;
        if (ref.querySelector("[role=option]")) return ref;
      }
    }
    return e.querySelector("[role=listbox]") || popupListbox(e);
  }
  const visibleListboxes = (e) => Array.from(e.ownerDocument.querySelectorAll("[role=listbox]")).slice(0, 200)
    .filter((lb) => lb !== e && !e.contains(lb) && visible(lb));
  // A trigger without aria-controls (aria-haspopup=listbox, a list rendered on open, often in a
  // portal at the end of <body>): the visible listbox that appeared since the select began, or —
  // when the trigger says it is expanded — the nearest visible one nobody else claims.
  function popupListbox(e) {
    const role = roleOf(e), popup = (e.getAttribute("aria-haspopup") || "").toLowerCase();
    if (role !== "combobox" && popup !== "listbox") return null;
    const slot = slots[opts.slot];
    const before = slot && slot.el === e ? slot.before : null;
    if (!before && e.getAttribute("aria-expanded") !== "true") return null;
    const doc = e.ownerDocument;
    const claimed = (lb) => !!lb.id && Array.from(doc.querySelectorAll("[aria-controls], [aria-owns]")).slice(0, 500)
      .some((h) => h !== e && !e.contains(h) && [...idrefs(h, "aria-controls"), ...idrefs(h, "aria-owns")].includes(lb));
    const candidates = visibleListboxes(e).filter((lb) => !(before && before.has(lb)) && !claimed(lb));
    if (!candidates.length) return null;
    // A popup is positioned (absolute, fixed) or, unpositioned, appended last (a portal).
    const positioned = (lb) => { for (let n = lb; n && n !== doc.body; n = n.parentElement) { const p = styleOf(n).position; if (p === "absolute" || p === "fixed") return true; } return false; };
    const floating = candidates.filter(positioned);
    if (!floating.length) return candidates[candidates.length - 1];
    const r = e.getBoundingClientRect();
    const distance = (lb) => { const q = lb.getBoundingClientRect(); return Math.hypot(q.left - r.left, q.top - r.bottom); };
    return floating.sort((a, b) => distance(a) - distance(b))[0];
  }
  const ariaLabel = (o) => cut(clean(o.getAttribute("aria-label")) || clean(o.textContent));
  const ariaValue = (o, label) => cut(o.getAttribute("data-value") ?? o.getAttribute("value") ?? label);

  function describe(e) {
    if (e.localName === "select") {
      const all = Array.from(e.options);
      return {kind: "native", expanded: false, multiple: e.multiple, requiresOpen: false, all: all, listbox: null,
        items: all.map((o) => ({label: cut(clean(o.label || o.textContent)), value: cut(o.value), selected: o.selected,
          disabled: o.disabled || !!(o.parentElement && o.parentElement.localName === "optgroup" && o.parentElement.disabled)}))};
    }
    const role = roleOf(e), popup = (e.getAttribute("aria-haspopup") || "").toLowerCase();
    if (role !== "combobox" && role !== "listbox" && popup !== "listbox") return null;
    const lb = listboxOf(e), all = lb ? Array.from(lb.querySelectorAll("[role=option]")) : [];
    const inline = role === "listbox" && lb === e;  // a list shown in place: always open
    const open = inline || (!!lb && visible(lb) && all.some(visible));
    return {kind: "aria", expanded: inline || (role === "listbox" ? open : e.getAttribute("aria-expanded") === "true"),
      // The listbox says so; closed, some widgets say it on the trigger itself.
      multiple: (!!lb && lb.getAttribute("aria-multiselectable") === "true") || e.getAttribute("aria-multiselectable") === "true",
      requiresOpen: !open, all: all, listbox: lb,
      items: all.map((o) => {
        const label = ariaLabel(o);
        return {label: label, value: ariaValue(o, label), selected: o.getAttribute("aria-selected") === "true",
          disabled: !!o.closest("[aria-disabled='true']")};
      })};
  }
  function publicView(d) {
    return {kind: d.kind, expanded: d.expanded, multiple: d.multiple, requiresOpen: d.requiresOpen,
      options: d.items.slice(0, MAX_OPTIONS).map((it, i) => Object.assign({index: i + 1}, it)),
      truncated: d.items.length > MAX_OPTIONS};
  }
  // A choice the combobox shows: what it shows is the selection. An option its list marks
  // aria-selected but the box does not show is the list's highlight (Choices), not a choice.
  const shownSelection = (labels, label, text) => [label, ...labels.filter((l) => l !== label && text.includes(l))];
  const selectedLabels = (d) => d.items.filter((it) => it.selected).map((it) => it.label).slice(0, MAX_SELECTED);

  function find(d) {
    const want = opts.option;
    if (opts.by === "index") {
      const n = /^\s*\d+\s*$/.test(want) ? parseInt(want, 10) : 0;
      return n >= 1 && n <= d.items.length ? n - 1 : -1;
    }
    const key = (it) => opts.by === "value" ? it.value : it.label;
    const norm = opts.by === "value" ? want : clean(want);
    let i = d.items.findIndex((it) => key(it) === norm);
    if (i < 0 && opts.contains) {
      const low = norm.toLowerCase();
      i = d.items.findIndex((it) => key(it).toLowerCase().includes(low));
    }
    return i;
  }

  // Where to click, by the ref resolver's rule (lib.js).
  function point(e) {
    if (!Array.from(e.getClientRects()).some((r) => r.width > 0 && r.height > 0)) return {refuse: "no_layout"};
    const found = hitTest(e, false);
    if (!found) return {refuse: "outside_viewport"};
    if (found.points.length) return {x: found.points[0][0], y: found.points[0][1]};
    return found.obstruction ? {refuse: "obscured", obstruction: found.obstruction} : {refuse: "outside_viewport"};
  }
  function preflight(e) {
    if (e.matches(":disabled") || e.closest("[aria-disabled='true'], [inert]")) return {refuse: "disabled"};
    const s = styleOf(e);
    if (s.display === "none" || s.visibility === "hidden") return {refuse: "no_layout"};
    if (!scrollReach(e)) return {refuse: "outside_viewport"};
    reveal(e, true, false);
    return point(e);
  }
  // Where a typed combobox shows its choices: the field's own box, up to three levels out, short
  // of the one holding its list (tom-select's .ts-control holds the field and the chosen items;
  // the wrapper around it also holds the dropdown).
  function chosenBox(e, lb) {
    if (e.localName !== "input") return e;
    let box = e;
    for (let p = e.parentElement, i = 0; p && i < 3 && p !== e.ownerDocument.body; p = p.parentElement, i++) {
      if ((lb && p.contains(lb)) || p.querySelectorAll("input, select, textarea").length > 2) break;
      box = p;
    }
    return box;
  }
  // What the combobox itself shows (its value, or its text outside the listbox it contains).
  function shown(e, lb) {
    e = boxOf(e) || chosenBox(e, lb);
    const parts = [];
    if (e.localName === "input" || e.localName === "textarea") parts.push(e.value);
    for (const input of e.querySelectorAll("input")) parts.push(input.value);
    const tw = e.ownerDocument.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode(), count = 0; n && count < 5000; n = tw.nextNode(), count++)
      // (Not a hidden <select>'s options: Choices keeps the native one inside its box.)
      if (!(lb && lb !== e && lb.contains(n)) && !n.parentElement.closest("select, script, style")) parts.push(n.data);
    return clean(parts.join(" "));
  }

  const op = opts.op;
  if (op === "inspect") {
    const d = describe(el);
    return d ? publicView(d) : {notDropdown: true};
  }
  if (op === "bind") {
    delete slots[opts.slot];  // a previous select's snapshot of visible listboxes is not this one's
    const d = describe(el);
    if (!d) return {notDropdown: true};
    slots[opts.slot] = {token: opts.token, el: el, option: null, before: new Set(visibleListboxes(el))};
    const out = {kind: d.kind, requiresOpen: d.requiresOpen, multiple: d.multiple};
    if (opts.preflight) Object.assign(out, {point: preflight(el)});
    return out;
  }
  const slot = slots[opts.slot];
  if (op === "find") {
    const d = describe(el);
    if (!d) return {gone: true};
    const i = find(d);
    if (i < 0) return {notFound: true, selected: selectedLabels(d), open: !d.requiresOpen, count: d.items.length};
    slot.option = d.all[i];
    return {label: d.items[i].label, disabled: d.items[i].disabled, selected: selectedLabels(d), open: !d.requiresOpen};
  }
  const option = slot && slot.option;
  if (!option || !option.isConnected) {
    if (op === "verify" && el.localName !== "select") {
      // Options that unmount when the listbox closes: what the combobox shows is the evidence.
      const d = describe(el), label = opts.label, text = shown(el, d && d.listbox);
      const shows = !!label && text.includes(label);
      const labels = d ? selectedLabels(d) : [];
      if (shows) return {status: "verified", selected: shownSelection(labels, label, text)};
      if (labels.length) return {status: "mismatch", reason: "selection_mismatch", selected: labels};
      return {status: "unavailable", reason: "selection_not_exposed", selected: []};
    }
    return {gone: true};
  }
  if (op === "native") {
    const already = option.selected && (!el.multiple || el.selectedOptions.length === 1);
    if (already) return {dispatched: false};
    el.focus({preventScroll: true});
    if (el.multiple) for (const o of el.options) o.selected = o === option;
    else option.selected = true;
    // Like a person's choice: input, then change, both bubbling (frameworks listen at the root).
    el.dispatchEvent(new Event("input", {bubbles: true, composed: true}));
    el.dispatchEvent(new Event("change", {bubbles: true}));
    return {dispatched: true};
  }
  if (op === "optionPoint") {
    if (option.closest("[aria-disabled='true']")) return {refuse: "disabled"};
    reveal(option, false, false);
    return point(option);
  }
  if (op === "verify") {
    const d = describe(el);
    const labels = d ? selectedLabels(d) : [];
    if (el.localName === "select")
      return option.selected ? {status: "verified", selected: labels}
        : {status: "mismatch", reason: "selection_mismatch", selected: labels};
    const label = opts.label;
    if (option.getAttribute("aria-selected") === "true") return {status: "verified", selected: labels.length ? labels : [label]};
    const text = shown(el, d && d.listbox), shows = !!label && text.includes(label);
    if (shows) return {status: "verified", selected: shownSelection(labels, label, text)};
    if (labels.length) return {status: "mismatch", reason: "selection_mismatch", selected: labels};
    return {status: "unavailable", reason: "selection_not_exposed", selected: []};
  }
  return {unknownOp: op};
})
