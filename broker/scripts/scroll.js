// Browser Pilot scrolling, in Browser Pilot's isolated world. Programmatic scrolling
// (scrollBy/scrollTo, behavior "instant") instead of wheel input: wheel events in a background
// tab are aligned to animation frames it barely gets. Evidence is measured, not assumed: the
// scroll offsets before and after. `target` is the container element (null: the page).
(function (target, opts) {
  "use strict";
  const MAX_MATCH = 200, MAX_NODES = 200000;
  const doc = target ? target.ownerDocument : document, win = doc.defaultView;
  const page = doc.scrollingElement || doc.documentElement;
  const styleOf = (e) => e.ownerDocument.defaultView.getComputedStyle(e);
  const parentOf = (n) => n.parentElement || (n.getRootNode && n.getRootNode().host) || null;
  const clean = (t) => (t || "").replace(/\s+/g, " ").trim();

  function scrollable(e, axis) {
    if (e === page) return axis === "y" ? page.scrollHeight > win.innerHeight : page.scrollWidth > win.innerWidth;
    const s = styleOf(e)[axis === "y" ? "overflowY" : "overflowX"];
    if (!["auto", "scroll", "overlay"].includes(s)) return false;
    return axis === "y" ? e.scrollHeight > e.clientHeight : e.scrollWidth > e.clientWidth;
  }
  // The container itself when it scrolls along the axis, else its nearest scrolling ancestor
  // (a ref often names an element inside the scroller), else the page.
  function scrollerFor(el, axis) {
    for (let e = el; e; e = parentOf(e)) {
      if (e === doc.body || e === doc.documentElement) break;
      if (scrollable(e, axis)) return e;
    }
    return page;
  }
  // No container named and the document itself does not scroll (an app shell whose <main> or
  // a panel scrolls): the real scroller — the one under the middle of the viewport, else the
  // largest shown one.
  function mainScroller(axis) {
    if (scrollable(page, axis)) return page;
    const hit = doc.elementFromPoint(win.innerWidth / 2, win.innerHeight / 2);
    if (hit) { const s = scrollerFor(hit, axis); if (s !== page) return s; }
    let best = null, area = 0, seen = 0;
    for (const e of doc.body ? doc.body.querySelectorAll("*") : []) {
      if (++seen > 20000) break;
      if (!scrollable(e, axis)) continue;
      const r = e.getBoundingClientRect();
      const shown = Math.max(0, Math.min(r.right, win.innerWidth) - Math.max(r.left, 0)) *
        Math.max(0, Math.min(r.bottom, win.innerHeight) - Math.max(r.top, 0));
      if (shown > area) { best = e; area = shown; }
    }
    return best || page;
  }
  const position = (s) => s === page ? {x: win.scrollX, y: win.scrollY} : {x: s.scrollLeft, y: s.scrollTop};
  function scrollTo(s, left, top) {
    const to = {behavior: "instant"};
    if (left !== null) to.left = left;
    if (top !== null) to.top = top;
    (s === page ? win : s).scrollTo(to);
  }
  function evidence(mode, kind, before, after, extra) {
    const r = (v) => Math.round(v);
    const ev = {action: "scroll", mode: mode, target: kind, moved: false,
      deltaX: r(after.x) - r(before.x), deltaY: r(after.y) - r(before.y),
      beforeX: r(before.x), beforeY: r(before.y), afterX: r(after.x), afterY: r(after.y)};
    ev.moved = ev.deltaX !== 0 || ev.deltaY !== 0;
    Object.assign(ev, extra || {});
    if (!ev.status) {
      ev.status = ev.moved ? "verified" : "mismatch";
      if (!ev.moved) ev.reason = "at_boundary";
    }
    return ev;
  }

  if (opts.mode === "relative" || opts.mode === "position") {
    const horizontal = opts.mode === "relative" && (opts.direction === "left" || opts.direction === "right");
    const axis = horizontal ? "x" : "y";
    const s = target ? scrollerFor(target, axis) : mainScroller(axis);
    const kind = s === page ? "page" : "element";
    const before = position(s);
    if (opts.mode === "relative") {
      const view = s === page ? (horizontal ? doc.documentElement.clientWidth : doc.documentElement.clientHeight)
        : (horizontal ? s.clientWidth : s.clientHeight);
      const step = opts.unit === "pixels" ? opts.amount : opts.amount * view;
      const sign = opts.direction === "up" || opts.direction === "left" ? -1 : 1;
      if (horizontal) scrollTo(s, before.x + sign * step, null);
      else scrollTo(s, null, before.y + sign * step);
    } else {
      const end = s === page ? Math.max(page.scrollHeight, doc.documentElement.scrollHeight) : s.scrollHeight;
      scrollTo(s, null, opts.to === "end" ? end : 0);
    }
    return evidence(opts.mode, kind, before, position(s));
  }

  // mode "text": the first visible match in document order, open shadow roots included.
  const exact = !!opts.exact, query = exact ? clean(opts.text) : opts.text.toLowerCase();
  const SKIP = new Set(["script", "style", "noscript", "template", "head"]);
  let visited = 0;
  function rectsOf(range) { return Array.from(range.getClientRects()).filter((r) => r.width > 0 && r.height > 0); }
  function matchIn(node) {
    const data = node.data;
    if (!data || !clean(data)) return null;
    let start = -1, end = -1;
    if (exact) {
      if (clean(data) !== query) return null;
      start = data.search(/\S/); end = data.length - (data.length - data.trimEnd().length);
    } else {
      start = data.toLowerCase().indexOf(query);
      if (start < 0) return null;
      end = start + query.length;
    }
    const parent = node.parentElement;
    if (!parent) return null;
    const style = styleOf(parent);
    if (style.visibility === "hidden" || style.visibility === "collapse") return null;
    const range = node.ownerDocument.createRange();
    range.setStart(node, start); range.setEnd(node, Math.min(end, data.length));
    if (!rectsOf(range).length) return null;
    return {range: range, parent: parent, text: clean(data.slice(start, end))};
  }
  function walk(root) {
    const tw = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => n.nodeType === 1 && SKIP.has(n.localName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    for (let n = tw.currentNode; n; n = tw.nextNode()) {
      if (++visited > MAX_NODES) return null;
      if (n.nodeType === 3) {
        const found = matchIn(n);
        if (found) return found;
      } else if (n.shadowRoot) {
        const found = walk(n.shadowRoot);
        if (found) return found;
      }
    }
    return null;
  }
  const root = target || doc.body || doc.documentElement;
  const before = position(page);
  const found = query ? walk(root) : null;
  if (!found) return evidence("text", "text", before, before, {status: "mismatch", reason: "text_not_found"});
  // Every scroller around the match, to tell whether anything moved (page deltas are reported).
  const scrollers = [page];
  for (let e = parentOf(found.parent); e; e = parentOf(e)) if (e !== page && (scrollable(e, "y") || scrollable(e, "x"))) scrollers.push(e);
  const offsets = scrollers.map(position);
  const inView = () => {
    const r = found.range.getBoundingClientRect();
    if (r.bottom <= 0 || r.right <= 0 || r.top >= win.innerHeight || r.left >= win.innerWidth) return false;
    const hit = doc.elementFromPoint(Math.max(0, Math.min(win.innerWidth - 1, r.left + r.width / 2)),
                                     Math.max(0, Math.min(win.innerHeight - 1, r.top + r.height / 2)));
    for (let n = hit; n; n = parentOf(n)) if (n === found.parent) return true;
    for (let n = found.parent; n; n = parentOf(n)) if (n === hit) return true;  // a shadow host, a label
    return false;
  };
  if (!inView()) {
    found.parent.scrollIntoView({block: "center", inline: "nearest", behavior: "instant"});
    const r = found.range.getBoundingClientRect();
    if (r.top < 0 || r.bottom > win.innerHeight)  // a tall parent: bring the match itself to the centre
      win.scrollBy({top: r.top + r.height / 2 - win.innerHeight / 2, behavior: "instant"});
  }
  const moved = scrollers.some((s, i) => { const p = position(s); return Math.round(p.x) !== Math.round(offsets[i].x) || Math.round(p.y) !== Math.round(offsets[i].y); });
  const visible = inView();
  const ev = evidence("text", "text", before, position(page), {
    status: visible ? "verified" : "mismatch", matchedText: found.text.slice(0, MAX_MATCH)});
  ev.moved = moved;
  if (!visible) ev.reason = "at_boundary";
  return ev;
})
