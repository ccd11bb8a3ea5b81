// Browser Pilot ref resolution, in the same isolated world as the observation walker.
// Checks that the ref's exact node is still there and still what was observed, scrolls it into
// view (without touching focus), and hit-tests it in top-level viewport coordinates.
(function (opts) {
  "use strict";
  const store = globalThis.__browserPilot || {};
  const entry = store[opts.key];
  if (!entry || entry.id !== opts.obs) return {stale: "document_replaced"};
  const el = entry.els[opts.index];
  if (!el) return {stale: "document_replaced"};
  if (!el.isConnected) return {stale: "node_detached"};
  const doc = el.ownerDocument, win = doc.defaultView;
  if (!win) return {stale: "frame_detached"};
  // The chain of frame elements from the element's document up to the top document.
  const frames = [];
  for (let w = win; w !== window; w = w.parent) {
    const fe = w.frameElement;
    if (!fe || !fe.isConnected) return {stale: "frame_detached"};
    frames.push(fe);
  }
  const [role, name] = entry.facts[opts.index];
  const currentName = store.nameOf ? store.nameOf(el, role) : name;
  if (opts.mode !== "state" && store.roleOf && ((store.roleOf(el) || "button") !== role || currentName !== name))
    return {stale: "node_changed"};
  const state = (e) => {
    const active = (() => { let a = document.activeElement; while (a) { const inner = (a.shadowRoot && a.shadowRoot.activeElement) || (a.contentDocument && a.contentDocument.activeElement); if (!inner || inner === a) break; a = inner; } return a; })();
    const checked = e.localName === "input" && ["checkbox", "radio"].includes((e.type || "").toLowerCase()) ? e.checked
      : e.getAttribute("aria-checked") === "mixed" ? "mixed" : e.getAttribute("aria-checked") === "true";
    return {checked: checked, selected: e.localName === "option" ? e.selected : e.getAttribute("aria-selected") === "true",
      pressed: e.getAttribute("aria-pressed") === "true", expanded: e.getAttribute("aria-expanded") === "true",
      focused: active === e, activeTag: active ? active.localName : null};
  };
  if (opts.mode === "state") return {state: state(el), name: currentName};
  const editable = () => {
    if (el.localName === "input" || el.localName === "textarea") {
      const type = (el.type || "text").toLowerCase();
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file", "color", "range", "hidden"].includes(type)) return null;
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
    return {readback: {kind: ed.kind, sensitive: ed.sensitive, afterLength: value.length,
      expectedLength: expected.length, matches: value === expected}, state: state(el)};
  }
  if (el.matches(":disabled") || el.closest("[aria-disabled='true'], [inert]")) return {refuse: "disabled"};
  const style = getComputedStyle(el);
  if (style.display === "none" || style.visibility === "hidden") return {refuse: "no_layout"};
  el.scrollIntoView({block: "center", inline: "center", behavior: "instant"});
  for (const fe of frames) fe.scrollIntoView({block: "nearest", inline: "nearest", behavior: "instant"});
  // Offset of the element's viewport inside the top-level viewport.
  let ox = 0, oy = 0;
  for (const fe of frames) {
    const r = fe.getBoundingClientRect(), s = getComputedStyle(fe);
    ox += r.left + fe.clientLeft + parseFloat(s.paddingLeft);
    oy += r.top + fe.clientTop + parseFloat(s.paddingTop);
  }
  const rects = Array.from(el.getClientRects()).filter((r) => r.width > 0 && r.height > 0)
    .sort((a, b) => b.width * b.height - a.width * a.height).slice(0, 4);
  if (!rects.length) return {refuse: "no_layout"};
  const composedContains = (outer, inner) => { for (let n = inner; n; n = n.parentNode || n.host || null) if (n === outer) return true; return false; };
  const hostOf = (node) => { const root = node.getRootNode(); return root && root.host ? root.host : null; };
  const accepts = (hit) => {
    if (!hit) return false;
    if (hit === el || composedContains(el, hit)) return true;
    if (el.labels && Array.from(el.labels).some((l) => l === hit || composedContains(l, hit))) return true;
    for (let h = hostOf(el); h; h = hostOf(h)) if (h === hit) return true;
    return false;
  };
  const deepHit = (x, y) => {
    // Descend from the top document through same-origin frames and open shadow roots.
    let d = document, hx = x, hy = y, hit = null;
    for (let guard = 0; guard < 64; guard++) {
      hit = d.elementFromPoint(hx, hy);
      while (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(hx, hy); if (!inner || inner === hit) break; hit = inner; }
      if (hit && (hit.localName === "iframe" || hit.localName === "frame")) {
        let inner = null; try { inner = hit.contentDocument; } catch (e) {}
        if (!inner) return hit;
        const r = hit.getBoundingClientRect(), s = getComputedStyle(hit);
        hx -= r.left + hit.clientLeft + parseFloat(s.paddingLeft);
        hy -= r.top + hit.clientTop + parseFloat(s.paddingTop);
        d = inner;
        continue;
      }
      return hit;
    }
    return hit;
  };
  let obstruction = null;
  for (const r of rects) {
    for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]]) {
      const x = ox + r.left + r.width * fx, y = oy + r.top + r.height * fy;
      if (x < 0 || y < 0 || x >= window.innerWidth || y >= window.innerHeight) continue;
      const hit = deepHit(x, y);
      if (accepts(hit)) {
        const result = {x: x, y: y, role: role, name: name, state: state(el)};
        if (opts.focus) {
          const ed = editable();
          if (!ed) return {refuse: "not_editable"};
          if (ed.readOnly) return {refuse: "readonly"};
          el.focus();
          entry.typeBefore = ed.value();  // stays in this world; only its length leaves
          if (!opts.clear) {
            try { if (el.setSelectionRange) el.setSelectionRange(el.value.length, el.value.length); } catch (e) {}
            if (ed.kind === "contenteditable") {
              const range = el.ownerDocument.createRange(); range.selectNodeContents(el); range.collapse(false);
              const sel = el.ownerDocument.getSelection(); sel.removeAllRanges(); sel.addRange(range);
            }
          }
          result.editable = {kind: ed.kind, sensitive: ed.sensitive, beforeLength: entry.typeBefore.length,
            mac: /Mac/.test(navigator.platform)};
          result.state = state(el);
        }
        return result;
      }
      if (!obstruction && hit) obstruction = {tagName: hit.localName, role: hit.getAttribute("role") || undefined};
    }
  }
  return obstruction ? {refuse: "obscured", obstruction: obstruction} : {refuse: "outside_viewport"};
})
