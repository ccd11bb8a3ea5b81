// Browser Pilot's small in-page entry points, in its isolated world: each is one named function
// of the library (broker/observe/worlds.py helper(name)), called from the broker by that name.
({
  // What a coordinate click has under its point: {tag, role?, name? (<= 40 chars), frame?} or
  // null. Never a field's value, only an element's label or its own short text.
  underPoint(opts) {
    const el = document.elementFromPoint(opts.x, opts.y);
    if (!el) return null;
    const out = {tag: el.localName};
    const role = el.getAttribute("role");
    if (role) out.role = role.slice(0, 40);
    const name = (el.getAttribute("aria-label") || (el.children.length ? "" : el.textContent) || "").trim();
    if (name && !(el.localName === "input" && el.type === "password")) out.name = name.slice(0, 40);
    if (el.localName === "iframe" || el.localName === "frame") out.frame = true;
    return out;
  },

  // A native date/time field's value set whole through the browser's own value setter (this
  // world's, not a framework's wrapper in the page's, so React and Vue hear the change), then the
  // events a person's picker fires. A value the field does not take is put back: nothing happened.
  fill(el, args) {
    const before = el.value;
    el.value = args.text;
    if (el.value !== args.text) { el.value = before; return {malformed: true, inputType: (el.type || "").toLowerCase()}; }
    el.dispatchEvent(new Event("input", {bubbles: true, composed: true}));
    el.dispatchEvent(new Event("change", {bubbles: true}));
    return {set: true};
  },
  readValue(el, args) { return {matches: el.value === args.text, afterLength: el.value.length}; },

  // A slider (a native range input, visually hidden or not, or role=slider): read, focus, its
  // box, or (native) set with the input/change events a drag fires (broker/actions/slider.py).
  slider(el, a) {
    const native = el.localName === "input" && (el.type || "").toLowerCase() === "range";
    const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    if (!native && role !== "slider") return null;
    const num = (v) => v === null || v === undefined || v === "" || isNaN(Number(v)) ? null : Number(v);
    if (a.op === "set" && native) {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, String(a.value));
      el.dispatchEvent(new Event("input", {bubbles: true}));
      el.dispatchEvent(new Event("change", {bubbles: true}));
    }
    if (a.op === "focus") el.focus({preventScroll: true});
    if (a.op === "box") {
      const r = el.getBoundingClientRect();
      return {left: r.left, top: r.top, width: r.width, height: r.height,
        vertical: el.getAttribute("aria-orientation") === "vertical", top_world: window === window.top};
    }
    if (native) return {native: true, value: num(el.value), text: el.value, min: num(el.min), max: num(el.max)};
    return {native: false, value: num(el.getAttribute("aria-valuenow")), text: el.getAttribute("aria-valuetext") ||
      el.getAttribute("aria-valuenow"), min: num(el.getAttribute("aria-valuemin")), max: num(el.getAttribute("aria-valuemax"))};
  },

  // Listener-only controls Chrome listed (broker/observe/listeners.py), for the walker to offer.
  markListeners(opts) {
    const s = (globalThis.__browserPilot = globalThis.__browserPilot || {});
    s.listeners = s.listeners || new WeakSet();
    let n = 0;
    for (const p of opts.paths) { const el = p ? fromPath(p) : null; if (el) { s.listeners.add(el); n++; } }
    return n;
  },
  // slot (the walker's index) of each out-of-process frame element, by its position, or -1.
  slotsOf(opts) {
    const s = (globalThis.__browserPilot || {})[opts.key];
    return opts.paths.map((p) => s && s.frames && p ? s.frames.indexOf(fromPath(p)) : -1);
  },

  // `fn(el, opts)` on the first match of opts.selector in the document (none: the page).
  bySelector(opts, fn) {
    let el = null;
    if (opts.selector) {
      try { el = document.querySelector(opts.selector); } catch (e) { return {badSelector: true}; }
      if (!el) return {missing: true};
    }
    return fn(el, opts);
  },
  // `fn(el, opts)` on the element a dropdown step bound to its slot, while it is still that one.
  onSlot(opts, fn) {
    const s = (globalThis.__browserPilotForms || {})[opts.slot];
    if (!s || s.token !== opts.token || !s.el.isConnected) return {gone: true};
    return fn(s.el, opts);
  },
})
