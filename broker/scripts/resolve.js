// Browser Pilot ref resolution, in the same isolated world as the observation walker.
// Checks that the ref's exact node is still there and still what was observed, scrolls it into
// view (without touching focus), and hit-tests it in this document's top-level viewport.
// For an element inside an out-of-process iframe the broker then maps the points through each
// frame element above it (mode "frame"), hit-testing again at every level.
(function (opts, fn) {
  "use strict";
  const store = globalThis.__browserPilot || {};
  const entry = store[opts.key];  // this Agent's ref table in this document (observe.js)
  if (!entry || entry.table !== opts.table) return {stale: "document_replaced"};

  // The hit test, frame offsets and scrolling are the in-page library's (lib.js), as for the walker.
  const inViewport = (x, y) => x >= 0 && y >= 0 && x < window.innerWidth && y < window.innerHeight;
  const describe = (hit) => ({tagName: hit.localName, role: hit.getAttribute("role") || undefined});

  if (opts.mode === "frame") {
    // Points in an out-of-process child frame's viewport -> points in this viewport, kept only
    // where this document shows that very frame element.
    const fe = (entry.frames || [])[opts.slot];
    if (!fe || !fe.isConnected) return {stale: "frame_detached"};
    const chain = frameChain(fe);
    if (!chain) return {stale: "frame_detached"};
    reveal(fe, false, opts.nested);
    for (const outer of chain) reveal(outer, false, opts.nested);
    const [ox, oy] = offsetOf(chain);
    const [cx, cy] = contentOffset(fe);
    const points = [];  // aligned with opts.points; null where this document hides the point
    let obstruction = null;
    for (const point of opts.points) {
      points.push(null);
      if (!point) continue;
      const [px, py] = point;
      if (px < 0 || py < 0 || px >= fe.clientWidth || py >= fe.clientHeight) continue;
      const x = ox + cx + px, y = oy + cy + py;
      if (!inViewport(x, y)) continue;
      const hit = deepHit(x, y);
      if (hit === fe) points[points.length - 1] = [x, y];
      else if (!obstruction && hit) obstruction = describe(hit);
    }
    if (points.some((p) => p)) return {points: points};
    return obstruction ? {refuse: "obscured", obstruction: obstruction} : {refuse: "outside_viewport"};
  }

  const held = entry.byRef.get(opts.ref);
  if (!held || !held.facts) return {stale: "expired"};  // let go past the table's bound
  const el = held.el;
  if (!el.isConnected) return {stale: "node_detached"};
  if (!el.ownerDocument.defaultView) return {stale: "frame_detached"};
  const frames = frameChain(el);
  if (!frames) return {stale: "frame_detached"};
  const [role, name] = held.facts;
  const currentName = store.nameOf ? store.nameOf(el, role) : name;
  if (opts.mode !== "state" && store.roleOf && ((store.roleOf(el) || "button") !== role || currentName !== name))
    return {stale: "node_changed"};
  if (opts.mode === "call") return {value: fn(el, opts.args || {})};
  const editorKind = store.editorKind && store.editorKind(el);  // CodeMirror 5, Monaco, Ace (observe.js)
  // A rich or code editor on a contenteditable keeps its text in a model the page's world holds
  // (CodeMirror 6 draws only the lines in view; ProseMirror and Lexical draw blocks their way).
  const modelKind = editorKind || (!el.isContentEditable ? null : el.classList.contains("cm-content") ? "codemirror6"
    : el.classList.contains("ProseMirror") ? "prosemirror" : el.getAttribute("data-lexical-editor") === "true" ? "lexical" : null);
  const state = (e) => {
    const active = (() => { let a = document.activeElement; while (a) { const inner = (a.shadowRoot && a.shadowRoot.activeElement) || (a.contentDocument && a.contentDocument.activeElement); if (!inner || inner === a) break; a = inner; } return a; })();
    const checked = e.localName === "input" && ["checkbox", "radio"].includes((e.type || "").toLowerCase()) ? e.checked
      : e.getAttribute("aria-checked") === "mixed" ? "mixed" : e.getAttribute("aria-checked") === "true";
    return {checked: checked, selected: e.localName === "option" ? e.selected : e.getAttribute("aria-selected") === "true",
      pressed: e.getAttribute("aria-pressed") === "true", expanded: e.localName === "summary" && e.parentElement && e.parentElement.localName === "details"
        && !e.hasAttribute("aria-expanded") ? e.parentElement.open : e.getAttribute("aria-expanded") === "true",
      focused: active === e || (!!editorKind && e.contains(active)), activeTag: active ? active.localName : null};
  };
  if (opts.mode === "state") {
    const out = {state: state(el), name: currentName};
    const watch = entry.pressWatch;
    if (opts.pressMark && watch && watch.mark === opts.pressMark) {
      out.pressed = watch.landed;  // true, what took the press instead, or null (none heard)
      watch.stop();
      // A read sent ahead (with the settle's first look) may be dropped and read again: keep it.
      if (!opts.ahead) entry.pressWatch = null;
    }
    return out;
  }
  const editable = () => {
    if (editorKind) {
      // A code editor's own hidden textarea (or EditContext element) takes the keys; its drawn lines show the text.
      const input = store.editorInput(el);
      if (!input) return null;
      return {kind: "code_editor", sensitive: false, value: () => store.editorText(el),
        readOnly: input.readOnly === true || input.getAttribute("aria-readonly") === "true",
        focus: () => input.focus({preventScroll: true})};
    }
    if (el.localName === "input" || el.localName === "textarea") {
      const type = (el.type || "text").toLowerCase();
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file", "color", "range", "hidden"].includes(type)) return null;
      // A date or time field takes no typed characters the way a text field does: its value is set
      // whole (broker/actions/inputs.py fill_value), as a person's picker would.
      if (["date", "time", "datetime-local", "month", "week"].includes(type))
        return {kind: "date", sensitive: false, value: () => el.value, readOnly: el.readOnly};
      return {kind: "input", sensitive: type === "password", value: () => el.value, readOnly: el.readOnly};
    }
    if (el.isContentEditable) return {kind: "contenteditable", sensitive: false, value: () => el.innerText.replace(/\n$/, ""), readOnly: false};
    return null;
  };
  if (opts.mode === "readback") {
    // Compares in the page: a typed secret never travels back, only lengths and a verdict.
    const ed = editable();
    if (!ed) return {readback: null};
    const value = ed.value(), expected = (opts.clear ? "" : (entry.typeBefore || "")) + opts.text;
    const answer = {readback: {kind: ed.kind, sensitive: ed.sensitive, afterLength: value.length,
      expectedLength: expected.length, matches: value === expected}, state: state(el)};
    if (modelKind) {
      // The editor's model lives in the page's own world: the broker reads it there, finding
      // the editor by this short-lived mark (removed by that read).
      answer.model = {kind: modelKind, mark: opts.mark};
      el.setAttribute("data-browser-pilot-readback", opts.mark);
    }
    return answer;
  }
  if (el.matches(":disabled") || el.closest("[aria-disabled='true'], [inert]")) return {refuse: "disabled"};
  const style = getComputedStyle(el);
  if (style.display === "none" || style.visibility === "hidden") return {refuse: "no_layout"};
  // A visually hidden native input is reached through what is drawn for it (lib.js proxyOf).
  const target = proxyOf(el, null, style) || el;
  // The walker's rule (lib.js): what no scrolling can bring into view is not listed, nor acted on.
  if (!scrollReach(target)) return {refuse: "outside_viewport"};
  if (!Array.from(target.getClientRects()).some((r) => r.width > 0 && r.height > 0)) return {refuse: "no_layout"};
  // An element shown whole in the viewport and reachable is pressed where it is: scrolling it to
  // the centre moves what the page anchors to the scroll (a popover that repositions or closes
  // on scroll, React Aria's), and the press would land on what took its place.
  const box = target.getBoundingClientRect();
  const whole = !frames.length && !opts.nested && box.top >= 0 && box.left >= 0 && box.bottom <= window.innerHeight &&
    box.right <= window.innerWidth;
  let found = whole ? hitTest(target, opts.allPoints) : null;
  let scrolled = false;
  if (!found || !found.points.length) {
    reveal(target, true, opts.nested);
    for (const fe of frames) reveal(fe, false, opts.nested);
    scrolled = true;  // the broker lets the page answer the scroll, then resolves again (inputs.py)
    if (!Array.from(target.getClientRects()).some((r) => r.width > 0 && r.height > 0)) return {refuse: "no_layout"};
    found = hitTest(target, opts.allPoints);
  }
  if (!found) return {stale: "frame_detached"};
  const points = found.points;
  if (!points.length) return found.obstruction ? {refuse: "obscured", obstruction: found.obstruction} : {refuse: "outside_viewport"};
  const result = {x: points[0][0], y: points[0][1], points: points, role: role, name: name, state: state(el),
    scrolled: scrolled};
  if (opts.watchPress) {
    // Where the coming press lands, heard first (capture phase, Browser Pilot's world): a layout
    // that moved between this hit test and the press gives it to another element, and the click's
    // evidence must say so rather than claim the element's effects.
    if (entry.pressWatch) entry.pressWatch.stop();
    const win = target.ownerDocument.defaultView, watch = {mark: opts.watchPress, landed: null};
    const heard = (e) => {
      const hit = (e.composedPath && e.composedPath()[0]) || e.target;
      watch.landed = accepts(target, hit) ? true
        : {tagName: hit && hit.localName, role: (hit && hit.getAttribute && hit.getAttribute("role")) || undefined};
      watch.stop();
    };
    watch.stop = () => { win.removeEventListener("pointerdown", heard, true); win.removeEventListener("mousedown", heard, true); };
    win.addEventListener("pointerdown", heard, true);
    win.addEventListener("mousedown", heard, true);
    entry.pressWatch = watch;
  }
  if (opts.focus) {
    const ed = editable();
    if (!ed) return {refuse: "not_editable"};
    if (ed.readOnly) return {refuse: "readonly"};
    if (ed.focus) ed.focus(); else el.focus();
    entry.typeBefore = ed.value();  // stays in this world; only its length leaves
    if (!opts.clear) {
      try { if (el.setSelectionRange) el.setSelectionRange(el.value.length, el.value.length); } catch (e) {}
      if (ed.kind === "contenteditable") {
        const range = el.ownerDocument.createRange(); range.selectNodeContents(el); range.collapse(false);
        const sel = el.ownerDocument.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      }
    }
    result.editable = {kind: ed.kind, sensitive: ed.sensitive, beforeLength: entry.typeBefore.length,
      mac: /Mac/.test(navigator.platform), editor: editorKind || undefined};
    if (modelKind && opts.mark) {
      // The model's length before typing, read by the broker in the page's world (as readback).
      el.setAttribute("data-browser-pilot-readback", opts.mark);
      result.editable.model = modelKind;
    }
    result.state = state(el);
  }
  return result;
})
