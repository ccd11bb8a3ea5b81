// Browser Pilot's in-page library. broker/observe/snapshot.py script() puts it in front of every other
// script of this folder, so the walker that lists elements and the scripts that act on them
// share one rule for what a person could act on: scrolling can bring the element into view,
// and then a point of it receives the pointer. Geometry is in CSS px of the top-level viewport
// of the world the script runs in (an out-of-process frame's world has its own).

function hostOf(node) { const root = node.getRootNode(); return root && root.host ? root.host : null; }
function composedContains(outer, inner) {
  for (let n = inner; n; n = n.parentNode || n.host || null) if (n === outer) return true;
  return false;
}
// The element under a point, through open shadow roots and same-process frames.
function deepHit(x, y) {
  let d = document, hx = x, hy = y, hit = null;
  for (let guard = 0; guard < 64; guard++) {
    hit = d.elementFromPoint(hx, hy);
    while (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(hx, hy); if (!inner || inner === hit) break; hit = inner; }
    if (!hit || (hit.localName !== "iframe" && hit.localName !== "frame")) return hit;
    let inner = null; try { inner = hit.contentDocument; } catch (e) { inner = null; }
    if (!inner) return hit;  // another process renders it
    const [ox, oy] = contentOffset(hit);
    hx -= ox; hy -= oy; d = inner;
  }
  return hit;
}
// A hit on the element, inside it, on one of its labels, or on a shadow host around it.
function accepts(el, hit) {
  if (!hit) return false;
  if (hit === el || composedContains(el, hit)) return true;
  if (el.labels && Array.from(el.labels).some((l) => l === hit || composedContains(l, hit))) return true;
  for (let h = hostOf(el); h; h = hostOf(h)) if (h === hit) return true;
  // A frame element (`bp keyboard --click iframe`): a hit in its document.
  if (el.localName === "iframe" || el.localName === "frame")
    for (let w = hit.ownerDocument.defaultView; w && w !== window; w = w.parent) if (w.frameElement === el) return true;
  return false;
}
// The frame elements from a node's document up to this world's top document (null: one is gone).
function frameChain(node) {
  const chain = [];
  for (let w = node.ownerDocument.defaultView; w && w !== window; w = w.parent) {
    const fe = w.frameElement;
    if (!fe || !fe.isConnected) return null;
    chain.push(fe);
  }
  return chain;
}
// Geometry that hitTest and shownArea read again for every element: the viewport of each
// document, the client boxes of clipping ancestors, where frames' documents start. A script that
// neither scrolls nor changes the page while it runs (the walker) sets LAYOUT to fixedLayout()
// and each is read once per run: on a page of 10,000 controls, rereading the page's scroll
// range for each cost more than a third of the walk. In scripts that scroll between two reads
// (resolve.js reveals, then tests) LAYOUT stays null and every read is fresh.
let LAYOUT = null;
function fixedLayout() { return {views: new Map(), boxes: new Map(), offsets: new Map()}; }
function remembered(map, key, read) {
  if (!LAYOUT) return read(key);
  let value = LAYOUT[map].get(key);
  if (value === undefined) { value = read(key); LAYOUT[map].set(key, value); }
  return value;
}
// A document's viewport size and its page's scroll range and position.
function viewportOf(doc) {
  return remembered("views", doc, () => {
    const win = doc.defaultView, page = doc.scrollingElement || doc.documentElement;
    return {vw: win.innerWidth, vh: win.innerHeight, sw: page.scrollWidth, sh: page.scrollHeight, sx: win.scrollX,
      sy: win.scrollY};
  });
}
// A box's client area [cl, ct, cr, cb] in its viewport, and its scroll range and position.
function clientBoxOf(a) {
  return remembered("boxes", a, () => {
    const c = a.getBoundingClientRect();
    const cl = c.left + a.clientLeft, ct = c.top + a.clientTop;
    return {cl: cl, ct: ct, cr: cl + a.clientWidth, cb: ct + a.clientHeight, sw: a.scrollWidth, sl: a.scrollLeft,
      sh: a.scrollHeight, st: a.scrollTop};
  });
}
// Where a frame element's document viewport starts, in the frame element's own viewport.
function contentOffset(fe) {
  return remembered("offsets", fe, () => {
    const r = fe.getBoundingClientRect(), s = fe.ownerDocument.defaultView.getComputedStyle(fe);
    return [r.left + fe.clientLeft + (parseFloat(s.paddingLeft) || 0), r.top + fe.clientTop + (parseFloat(s.paddingTop) || 0)];
  });
}
function offsetOf(chain) {
  let ox = 0, oy = 0;
  for (const fe of chain) { const [x, y] = contentOffset(fe); ox += x; oy += y; }
  return [ox, oy];
}

const HIT_POINTS = [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]];
// Where the element receives the pointer now: up to four of its boxes, five points each, kept
// where the hit lands on it. Only points inside what can show of it now (shownArea) are
// tested: scrolling may bring the others in. Returns {reachable, points: [[x, y]...] (the first
// only unless all), obstruction, tested}, or null when a frame element on the way is gone.
// `box`: el.getBoundingClientRect() when the caller has just read it (nothing changed since):
// on a page of 10,000 controls each read is a native call that adds up.
function hitTest(el, all, box) {
  const chain = frameChain(el);
  if (!chain) return null;
  const found = {reachable: false, points: [], obstruction: null, tested: 0};
  const b = box || el.getBoundingClientRect();
  const area = shownArea(el, b);
  if (!area) return found;
  found.reachable = true;
  const [ox, oy] = offsetOf(chain);
  if (b.right + ox <= area[0] || b.bottom + oy <= area[1] || b.left + ox >= area[2] || b.top + oy >= area[3]) return found;
  const rects = Array.from(el.getClientRects()).filter((r) => r.width > 0 && r.height > 0)
    .sort((p, q) => q.width * q.height - p.width * p.height).slice(0, 4);
  for (const r of rects) {
    for (const [fx, fy] of HIT_POINTS) {
      const x = ox + r.left + r.width * fx, y = oy + r.top + r.height * fy;
      if (x < area[0] || y < area[1] || x >= area[2] || y >= area[3]) continue;
      found.tested++;
      const hit = deepHit(x, y);
      if (accepts(el, hit)) found.points.push([x, y]);
      else if (!found.obstruction && hit) found.obstruction = {tagName: hit.localName, role: hit.getAttribute("role") || undefined};
      if (found.points.length && !all) return found;
    }
  }
  return found;
}

// The style facts shownArea() reads of a box, once per script run (the page does not change
// while a script runs). Each computed-style read is a native call, and a page of 10,000 controls
// asks this of every ancestor of each: what only some boxes need (holding a fixed descendant,
// the direction of a scroll range) is read when first asked for.
const BOX_FACTS = new Map();
class BoxFacts {
  constructor(n) {
    const s = this.s = n.ownerDocument.defaultView.getComputedStyle(n);
    const display = this.display = s.display, contain = s.contain;
    // Overflow applies to boxes that contain blocks, not to inline or display:contents elements.
    const boxed = display !== "inline" && display !== "contents";
    this.paint = contain !== "none" && /\b(paint|strict|content)\b/.test(contain);
    this.position = isTopLayer(n) ? "fixed" : s.position;
    this.x = this.paint ? "clip" : boxed ? s.overflowX : "visible";
    this.y = this.paint ? "clip" : boxed ? s.overflowY : "visible";
  }
  // What holds a fixed descendant in place of the viewport.
  get holdsFixed() {
    const s = this.s, contain = s.contain, willChange = s.willChange;
    return s.transform !== "none" || s.filter !== "none" || s.perspective !== "none" || this.paint ||
      (willChange !== "auto" && /\b(transform|filter|perspective)\b/.test(willChange)) ||
      (contain !== "none" && /\b(paint|layout|strict|content)\b/.test(contain));
  }
  // Scroll ranges that start at the end: right to left, or reversed flex lines (a chat log).
  get endX() {
    const flex = this.display === "flex" || this.display === "inline-flex";
    return (this.s.direction === "rtl") !== (flex && this.s.flexDirection === "row-reverse");
  }
  get endY() {
    return (this.display === "flex" || this.display === "inline-flex") && this.s.flexDirection === "column-reverse";
  }
}
function boxFacts(n) {
  let f = BOX_FACTS.get(n);
  if (!f) BOX_FACTS.set(n, f = new BoxFacts(n));
  return f;
}
// In the top layer: a modal dialog, an open popover, the fullscreen element (what :modal and
// :popover-open match); the selector is asked only of elements that can be one (any, while
// something is fullscreen: it can sit in a shadow tree).
function isTopLayer(n) {
  if (n.localName !== "dialog" && !n.hasAttribute("popover") && !n.ownerDocument.fullscreenElement) return false;
  try { return n.matches(":modal, :popover-open"); } catch (e) { return false; }
}
// boxFacts(n).position alone: of the element itself shownArea needs no more, and reading a
// dozen computed styles of every control on a big page costs more than the rest of its walk.
function positionOf(n) {
  const f = BOX_FACTS.get(n);
  if (f) return f.position;
  return isTopLayer(n) ? "fixed" : n.ownerDocument.defaultView.getComputedStyle(n).position;
}
const SCROLLS = /^(auto|scroll|overlay)$/;
// [lo, hi] of what scrolling can show along one axis of a box whose client area is [start, end]
// and whose content is `span` long, scrolled to `at` (negative when the range starts at the end).
function scrollSpan(start, end, span, at, fromEnd) {
  span = Math.max(span, end - start);
  if (fromEnd) { const hi = end - at; return [hi - span, hi]; }
  const lo = start - at;
  return [lo, lo + span];
}
function flatParent(n) {
  return n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
}

// Whether some scrolling — of the page, of scroll containers, of the frames above — can bring
// part of the element's box into the top-level viewport: null when an ancestor clips it away
// for good (overflow hidden or clip, contain: paint, a zero-size clip) or when it lies where no
// scroll range reaches (a drawer translated off-screen, a fixed panel outside the window,
// content left of the page); else [left, top, right, bottom], the part of the viewport where it
// can show now (its clipping ancestors' boxes and the frames' viewports; may be empty). Follows
// containing blocks: a clip does not hold an absolutely positioned descendant placed by a box
// outside it, nor a fixed one. `box`: el.getBoundingClientRect(), when the caller has it.
function shownArea(el, box) {
  const first = box || el.getBoundingClientRect();
  // [l, t, r, b]: where the element's box can be brought, in the current document's viewport;
  // clip: the boxes that clip it now, intersected.
  let l = first.left, t = first.top, r = first.right, b = first.bottom;
  let clip = [-Infinity, -Infinity, Infinity, Infinity];
  const cut = (q) => { clip = [Math.max(clip[0], q[0]), Math.max(clip[1], q[1]), Math.min(clip[2], q[2]), Math.min(clip[3], q[3])]; };
  const none = !(r > l && b > t);  // no box: other checks say why; still, where would it show
  let node = el, position = positionOf(el);
  for (;;) {
    const doc = node.ownerDocument, win = doc.defaultView, root = doc.documentElement;
    const rootFacts = boxFacts(root), body = doc.body;
    // The root's overflow applies to the viewport, or the body's when the root's is visible.
    const bodyToViewport = !!body && rootFacts.x === "visible" && rootFacts.y === "visible";
    const view = bodyToViewport ? boxFacts(body) : rootFacts;
    for (let a = flatParent(node); a && a !== root; a = flatParent(a)) {
      const f = boxFacts(a);
      if (position === "fixed" && !f.holdsFixed) continue;
      if (position === "absolute" && f.position === "static" && !f.holdsFixed) continue;
      position = f.position;
      if ((f.x === "visible" && f.y === "visible") || (a === body && bodyToViewport)) continue;
      const box = clientBoxOf(a);
      const cl = box.cl, ct = box.ct, cr = box.cr, cb = box.cb;
      cut([f.x === "visible" ? -Infinity : cl, f.y === "visible" ? -Infinity : ct,
        f.x === "visible" ? Infinity : cr, f.y === "visible" ? Infinity : cb]);
      if (SCROLLS.test(f.x)) {
        const [lo, hi] = scrollSpan(cl, cr, box.sw, box.sl, f.endX);
        if (!none && (r <= lo || l >= hi)) return null;
        l = cl; r = cr;
      } else if (f.x !== "visible") { l = Math.max(l, cl); r = Math.min(r, cr); }
      if (SCROLLS.test(f.y)) {
        const [lo, hi] = scrollSpan(ct, cb, box.sh, box.st, f.endY);
        if (!none && (b <= lo || t >= hi)) return null;
        t = ct; b = cb;
      } else if (f.y !== "visible") { t = Math.max(t, ct); b = Math.min(b, cb); }
      if (!none && (r <= l || b <= t)) return null;
    }
    const viewport = viewportOf(doc), vw = viewport.vw, vh = viewport.vh;
    if (position !== "fixed") {
      if (view.x !== "hidden" && view.x !== "clip") {
        const [lo, hi] = scrollSpan(0, vw, viewport.sw, viewport.sx, rootFacts.endX);
        if (!none && (r <= lo || l >= hi)) return null;
        l = 0; r = vw;
      }
      if (view.y !== "hidden" && view.y !== "clip") {
        const [lo, hi] = scrollSpan(0, vh, viewport.sh, viewport.sy, false);
        if (!none && (b <= lo || t >= hi)) return null;
        t = 0; b = vh;
      }
    }
    l = Math.max(l, 0); t = Math.max(t, 0); r = Math.min(r, vw); b = Math.min(b, vh);
    if (!none && (r <= l || b <= t)) return null;
    cut([0, 0, vw, vh]);
    const fe = win === window ? null : win.frameElement;
    if (!fe) return clip;
    const [x, y] = contentOffset(fe);
    l += x; r += x; t += y; b += y;
    clip = [clip[0] + x, clip[1] + y, clip[2] + x, clip[3] + y];
    node = fe;
    position = boxFacts(fe).position;
  }
}
function scrollReach(el) { return shownArea(el) !== null; }

// Scroll the node into view: natively, or (local) only within this process — inside an
// out-of-process frame a native scrollIntoView is carried on to the embedding documents later,
// asynchronously, and would move the node after its position was measured.
function reveal(node, center, local) {
  if (!local) {
    const where = center ? "center" : "nearest";
    node.scrollIntoView({block: where, inline: where, behavior: "instant"});
    return;
  }
  scrollBoxIntoView(node, () => node.getBoundingClientRect(), center);
}
// Scroll node's scroll containers, then its window, so that box() — a box in node's viewport,
// measured afresh each time — is centred (center) or just shown.
function scrollBoxIntoView(node, box, center) {
  const doc = node.ownerDocument, win = doc.defaultView;
  const delta = (lo, size, min, max) => {
    if (center) return lo + size / 2 - (min + max) / 2;
    if (lo < min) return lo - min;
    if (lo + size > max) return Math.min(lo - min, lo + size - max);
    return 0;
  };
  for (let n = node.parentElement || hostOf(node); n; n = n.parentElement || hostOf(n)) {
    if (n === doc.scrollingElement || n === doc.documentElement) continue;
    const s = win.getComputedStyle(n);
    if (!/(auto|scroll|overlay)/.test(s.overflowX + s.overflowY)) continue;
    const r = box(), c = n.getBoundingClientRect();
    n.scrollTop += delta(r.top, r.height, c.top + n.clientTop, c.top + n.clientTop + n.clientHeight);
    n.scrollLeft += delta(r.left, r.width, c.left + n.clientLeft, c.left + n.clientLeft + n.clientWidth);
  }
  const r = box();
  win.scrollBy({left: delta(r.left, r.width, 0, win.innerWidth), top: delta(r.top, r.height, 0, win.innerHeight),
    behavior: "instant"});
}

// The "visually hidden input" of design systems (React Aria, Radix, MUI, Quasar, ...): a native
// checkbox, radio or range input made 1px, clipped away or transparent, operated through what
// is drawn for it — its label, or the styled box, track or thumb around it. Returns that proxy
// (the walker offers the input with the proxy's box; the resolver hit-tests and clicks the
// proxy: a click on a label toggles its control natively), or null when the input shows itself.
// A file input too: a styled button or label drawn over a transparent one (MUI's
// <Button component="label">, Quasar's uploader button) is what a person presses.
const PROXIED_INPUTS = new Set(["checkbox", "radio", "range", "file"]);
function proxyOf(el, box, style) {
  if (el.localName !== "input" || !PROXIED_INPUTS.has((el.type || "").toLowerCase())) return null;
  const r = box || el.getBoundingClientRect();
  const s = style || el.ownerDocument.defaultView.getComputedStyle(el);
  const win = el.ownerDocument.defaultView;
  const clipsAway = (st) => /rect\(\s*0(px)?[\s,]+0(px)?[\s,]+0(px)?[\s,]+0(px)?\s*\)/.test(st.clip || "") ||
    /inset\(\s*50%/.test(st.clipPath || "");
  let hidden = r.width <= 2 || r.height <= 2 || clipsAway(s) || parseFloat(s.opacity) === 0;
  // Or the pattern applied to a wrapper (React Aria's <VisuallyHidden> span around the input).
  for (let a = el.parentElement, hops = 0; !hidden && a && hops < 3 && a.localName !== "label"; a = a.parentElement, hops++) {
    const st = win.getComputedStyle(a), b = a.getBoundingClientRect();
    hidden = clipsAway(st) || parseFloat(st.opacity) === 0 ||
      ((b.width <= 2 || b.height <= 2) && st.overflow !== "visible");
  }
  if (!hidden) return null;
  const shown = (n) => {
    const b = n.getBoundingClientRect();
    if (!(b.width > 2 && b.height > 2)) return false;
    const st = n.ownerDocument.defaultView.getComputedStyle(n);
    return st.visibility !== "hidden" && parseFloat(st.opacity) !== 0;
  };
  for (const label of el.labels || []) if (shown(label)) return label;
  // No label drawn: the nearest box around it that holds no other control (the track of a
  // slider, the styled square of a checkbox); never a container of several fields.
  let n = el.parentElement;
  for (let hops = 0; n && hops < 4 && n !== el.ownerDocument.body; hops++, n = n.parentElement) {
    if (n.querySelectorAll("input:not([type=hidden]), select, textarea, button, a[href]").length > 1) return null;
    if (shown(n)) return n;
  }
  return null;
}

// Rows in the order a person sees them: a data grid that positions its rows (virtualised grids
// place rows with transforms or absolute tops, and reorder them after a sort without moving
// the nodes) or numbers them with aria-rowindex is read and listed by that order, not the
// DOM's. `kids`: the element's children (an array or HTMLCollection); returned unchanged for
// every other element.
const ROW_HOLDERS = new Set(["grid", "treegrid", "table", "rowgroup"]);
function rowHolder(el) {
  if (el.localName === "tbody") return true;
  const role = el.getAttribute("role");
  return role !== null && ROW_HOLDERS.has(role.trim().toLowerCase());
}
function visualRows(el, kids) {
  if (!rowHolder(el)) return kids;
  const list = Array.from(kids);
  if (list.length < 2) return kids;
  if (list.every((k) => k.hasAttribute("aria-rowindex"))) {
    const at = (k) => parseInt(k.getAttribute("aria-rowindex"), 10) || 0;
    return list.map((k, i) => [at(k), i, k]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
  }
  const win = el.ownerDocument.defaultView;
  const positioned = list.some((k) => {
    const s = win.getComputedStyle(k);
    return s.position === "absolute" || s.transform !== "none";
  });
  if (!positioned) return kids;
  return list.map((k, i) => [k.getBoundingClientRect().top, i, k]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
}

// An element handed over by its position below the document (broker/observe/worlds.py
// node_paths: elements Chrome names reach this world by position, never as objects).
function fromPath(steps) {
  let cur = document.documentElement;
  for (const step of steps || []) { if (!cur) return null; cur = step === -1 ? cur.shadowRoot : cur.children[step]; }
  return steps ? cur || null : null;
}
