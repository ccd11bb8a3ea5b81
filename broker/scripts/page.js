// Browser Pilot page representations: read, search, find, locate (broker/page/content.py).
// Runs in Browser Pilot's isolated world of the selected frame, so page scripts can neither see
// it nor change what it reports. Read-only except `locate`, which scrolls its match into view.
// Geometry is in CSS px of the top-level viewport: opts.offset is where the selected frame's
// viewport sits in it (the broker measures that), plus the offsets of same-origin iframes below.
// Never reads the `value` property of any field: a password must not leave the page this way.
(function (opts) {
  "use strict";
  const started = performance.now();
  const WORK_MS = opts.workMs || 5000, MAX_NODES = 500000, MAX_DEPTH = 1024;
  const OFFSET = opts.offset || [0, 0];
  let nodes = 0, workCut = false;

  function spent() {
    nodes++;
    if (nodes > MAX_NODES || ((nodes & 255) === 0 && performance.now() - started > WORK_MS)) workCut = true;
    return workCut;
  }
  function clean(text) { return (text || "").replace(/\s+/g, " ").trim(); }
  function cut(text, max) { text = text || ""; return text.length > max ? text.slice(0, max) : text; }
  function styleOf(el) { return (el.ownerDocument.defaultView || window).getComputedStyle(el); }
  function validSelector(sel) {
    try { document.createDocumentFragment().querySelector(sel); return true; } catch (e) { return false; }
  }
  function box(rect, ctx) {
    return {x: Math.round(rect.left + ctx.ox + OFFSET[0]), y: Math.round(rect.top + ctx.oy + OFFSET[1]),
      width: Math.round(rect.width), height: Math.round(rect.height)};
  }
  // The document of a same-origin child frame, and where its viewport sits in ours.
  function frameCtx(el, ctx) {
    let doc = null;
    try { doc = el.contentDocument; } catch (e) { doc = null; }
    if (!doc || !doc.documentElement) return null;
    const [x, y] = contentOffset(el);
    return {doc: doc, ox: ctx.ox + x, oy: ctx.oy + y};
  }
  const TOP = {doc: document, ox: 0, oy: 0};

  // Elements in document order, through open shadow roots (unless shadow is false) and
  // same-origin frames (unless frames is false). fn returning false skips the subtree.
  function eachElement(fn, shadow, frames) {
    function visit(el, ctx, depth) {
      if (workCut || depth > MAX_DEPTH || spent()) return;
      if (fn(el, ctx) === false) return;
      if (shadow && el.shadowRoot) for (const child of el.shadowRoot.children) visit(child, ctx, depth + 1);
      if (el.localName === "iframe" || el.localName === "frame") {
        const inner = frames ? frameCtx(el, ctx) : null;
        if (inner) visit(inner.doc.documentElement, inner, depth + 1);
        return;
      }
      for (const child of el.children) visit(child, ctx, depth + 1);
    }
    if (document.documentElement) visit(document.documentElement, TOP, 0);
  }
  function firstMatch(sel, frames) {
    let found = null;
    eachElement((el, ctx) => {
      if (found) return false;
      if (el.matches(sel)) { found = {el: el, ctx: ctx}; return false; }
    }, true, frames);
    return found;
  }

  // ---- read ------------------------------------------------------------------------------------
  const READ_DROP = new Set(["script", "style", "noscript", "nav", "footer", "aside", "svg", "iframe", "frame",
    "frameset", "object", "embed", "template", "head", "input", "textarea", "select"]);
  const READ_DROP_ROLES = new Set(["navigation", "banner", "contentinfo"]);

  const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
  // Text for screen readers only (a 1 px clipped box: notyf's live region repeating the toast a
  // person sees, a "skip to content" link): nothing of it shows.
  function srOnly(el, style) {
    if (style.position !== "absolute" || (style.overflow !== "hidden" && style.clip === "auto")) return false;
    const box = el.getBoundingClientRect();
    return box.width <= 1 && box.height <= 1;
  }
  function read() {
    let root = null;
    if (opts.selector) {
      // The first match a person can see (a hidden first match — a collapsed duplicate, a
      // template copy — would read as ""); the first match when none is visible.
      let first = null, shown = null;
      eachElement((el) => {
        if (shown) return false;
        if (!el.matches(opts.selector)) return;
        if (!first) first = el;
        if (!el.checkVisibility || el.checkVisibility()) { shown = el; return false; }
      }, true, false);
      if (!first) return {miss: true};
      root = shown || first;
    } else {
      root = document.querySelector("main") || document.querySelector("article") ||
        document.querySelector("[role=main]") || document.body || document.documentElement;
    }
    // --from-anchor (else the URL's fragment): text starts at that element, when the root holds it.
    let anchorId = opts.anchor || null;
    if (!anchorId && !opts.selector && location.hash.length > 1) {
      try { anchorId = decodeURIComponent(location.hash.slice(1)); } catch (e) { anchorId = location.hash.slice(1); }
    }
    let anchor = anchorId ? (document.getElementById(anchorId) || document.getElementsByName(anchorId)[0] || null) : null;
    if (anchor && !(anchor === root || root.contains(anchor))) anchor = null;
    if (opts.anchor && !anchor) return {anchorMissing: true};
    let reading = !anchor;
    const budget = opts.budget;
    const items = [];  // strings, or numbers: required line breaks
    let size = 0, more = false;

    function push(item) {
      if (!reading) return;
      if (typeof item === "string") {
        if (!item) return;
        size += item.length;
        if (size > budget) more = true;
      }
      items.push(item);
    }
    // A read-only or disabled field shows the page's answer (a <textarea disabled> holding the
    // reply): its value is read like text. Never an editable field's, never a password.
    function shownValue(el) {
      if (el.localName !== "textarea" && el.localName !== "input") return null;
      if (!(el.disabled || el.readOnly)) return null;
      const type = (el.type || "text").toLowerCase();
      if (el.localName === "input" && !["text", "search", "url", "email", "tel", "number", "date", "time",
        "datetime-local", "month", "week"].includes(type)) return null;
      return el.value || null;
    }
    function dropped(el) {
      if (READ_DROP.has(el.localName)) return true;
      const role = (el.getAttribute("role") || "").trim().toLowerCase();
      if (role && READ_DROP_ROLES.has(role)) return true;
      return el.getAttribute("aria-hidden") === "true";
    }
    // innerText of a detached clone is just textContent (no layout), so walk the live flat tree
    // instead, skipping what a clone would have dropped and what is not rendered.
    function visitChildren(parent, visible, pre, depth) {
      let children = parent.childNodes;
      if (parent.shadowRoot) children = parent.shadowRoot.childNodes;
      else if (parent.localName === "slot") {
        const assigned = parent.assignedNodes({flatten: true});
        if (assigned.length) children = assigned;
      }
      if (parent.nodeType === 1 && !parent.shadowRoot && parent.localName !== "slot" && parent.children.length > 1) {
        // Positioned or aria-rowindex'd rows in the order shown (lib.js visualRows).
        const rows = visualRows(parent, parent.children);
        if (rows !== parent.children) children = rows;
      }
      for (const child of children) visit(child, visible, pre, depth + 1);
    }
    function visit(node, visible, pre, depth) {
      if (more || workCut || depth > MAX_DEPTH || spent()) { if (workCut || depth > MAX_DEPTH) more = true; return; }
      if (node.nodeType === 3) {
        if (!visible) return;
        // Preformatted text (code) keeps its spaces and line breaks: protected from the final
        // whitespace collapsing by private-use stand-ins, restored at the end.
        const text = pre ? node.data.replace(/\r\n?/g, "\n").replace(/ /g, "\ue000").replace(/\t/g, "\ue001")
          .replace(/\n/g, "\ue002") : node.data.replace(/[ \t\n\r\f]+/g, " ");
        push(text);
        return;
      }
      if (node.nodeType === 11) { visitChildren(node, visible, pre, depth); return; }
      if (node.nodeType !== 1) return;
      const el = node;
      if (el === anchor) reading = true;
      const field = shownValue(el);
      if (field === null && !roots.has(el) && dropped(el)) return;
      const style = styleOf(el);
      const display = style.display;
      if (display === "none") return;
      if (display !== "contents" && el.checkVisibility && !el.checkVisibility()) return;
      if (srOnly(el, style)) return;
      if (field !== null) {
        if (!visible || style.visibility !== "visible") return;
        push(1);
        push(field.replace(/\r\n?/g, "\n").replace(/ /g, "\ue000").replace(/\t/g, "\ue001").replace(/\n/g, "\ue002"));
        push(1);
        return;
      }
      if (el.localName === "br") { if (style.visibility === "visible") push("\n"); return; }
      const isVisible = style.visibility === "visible";
      const isPre = /^(pre|break-spaces)/.test(style.whiteSpace) || style.whiteSpace === "pre-line" ||
        /^(preserve)/.test(style.whiteSpaceCollapse || "");
      let breaks = 0;
      if (el.localName === "p") breaks = 2;
      // (A grid's cells drawn as inline blocks, Tabulator's: apart, like a table's.)
      else if (display === "table-cell" || CELL_ROLES.has((el.getAttribute("role") || "").trim())) push(" ");
      else if (display !== "contents" && !display.startsWith("inline") && display !== "table-column") breaks = 1;
      if (breaks) push(breaks);
      visitChildren(el, isVisible, isPre, depth);
      if (breaks) push(breaks);
    }
    const roots = new Set([root]);
    visit(root, true, false, 0);
    if (!opts.selector && root !== document.body && root !== document.documentElement) {
      // What a person sees besides the main text: open dialogs and popovers (often portaled to
      // the end of <body>), toasts and live regions, <output>s — read after it when outside it.
      const EXTRA = "dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true], :popover-open, [role=status]," +
        " [role=alert], [role=log], [aria-live=polite], [aria-live=assertive], output";
      const extras = [];
      let all = [];
      try { all = Array.from(document.querySelectorAll(EXTRA)); } catch (e) { all = []; }
      for (const el of all) {
        if (root.contains(el) || extras.some((x) => x.contains(el))) continue;
        if (el.checkVisibility && !el.checkVisibility()) continue;
        if (srOnly(el, styleOf(el))) continue;
        extras.push(el);
      }
      for (const el of extras) {
        if (more || workCut) break;
        roots.add(el);
        push(2);
        visit(el, true, false, 0);
      }
    }

    let text = "", pending = 0;
    for (const item of items) {
      if (typeof item === "number") { pending = Math.max(pending, item); continue; }
      if (pending && text) text += "\n".repeat(pending);
      pending = 0;
      text += item;
    }
    text = text.replace(/\u00a0/g, " ").replace(/[ \t]+/g, " ").replace(/ ?\n ?/g, "\n")
      .replace(/\n{3,}/g, "\n\n").trim().replace(/\ue000/g, " ").replace(/\ue001/g, "\t").replace(/\ue002/g, "\n");
    return {title: cut(document.title, 4096), url: cut(location.href, 16384), text: text, more: more || workCut};
  }

  // ---- search ----------------------------------------------------------------------------------
  const SEARCH_SKIP = new Set(["script", "style", "noscript", "template", "head", "textarea", "select", "input",
    "object", "embed"]);

  function fieldValue(el) {
    if (el.localName !== "textarea" && el.localName !== "input") return null;
    if (!(el.disabled || el.readOnly) || styleOf(el).display === "none") return null;
    const type = (el.type || "text").toLowerCase();
    if (el.localName === "input" && !["text", "search", "url", "email", "tel", "number", "date", "time",
      "datetime-local", "month", "week"].includes(type)) return null;
    return el.value || null;
  }
  function search() {
    const scope = opts.selector || null;
    const segments = [];  // {node, start, map: flat index - start -> offset in node.data, ctx}
    const flat = [];
    let length = 0, lastSpace = true, lastBlock = null, textCut = false, scopeHit = false;
    const MAX_FLAT = 2000000;

    function addText(node, ctx, block) {
      const data = node.data;
      if (!data) return;
      if (block !== lastBlock && length) { flat.push("\n"); length++; lastSpace = true; }
      lastBlock = block;
      const chars = [], map = [];
      for (let i = 0; i < data.length; i++) {
        let ch = data[i];
        if (/\s/.test(ch)) {
          if (lastSpace) continue;
          ch = " ";
          lastSpace = true;
        } else lastSpace = false;
        chars.push(ch);
        map.push(i);
      }
      if (!chars.length) return;
      segments.push({node: node, start: length, map: map, ctx: ctx});
      flat.push(chars.join(""));
      length += chars.length;
      if (length > MAX_FLAT) textCut = true;
    }
    function visit(node, ctx, block, inScope, depth) {
      if (textCut || workCut || depth > MAX_DEPTH || spent()) return;
      if (node.nodeType === 3) { if (inScope) addText(node, ctx, block); return; }
      if (node.nodeType !== 1) return;
      const el = node;
      if (SEARCH_SKIP.has(el.localName)) {
        // A read-only or disabled field's value is text the page shows (read() above).
        const value = inScope || (scope !== null && el.matches(scope)) ? fieldValue(el) : null;
        if (value) addText({data: value, field: el}, ctx, el);
        return;
      }
      const own = scope !== null && el.matches(scope);
      if (own) scopeHit = true;
      const style = styleOf(el);
      if (style.display === "none") return;
      const here = inScope || own;
      const blockHere = style.display.startsWith("inline") || style.display === "contents" ? block : el;
      if (el.localName === "iframe" || el.localName === "frame") {
        const inner = frameCtx(el, ctx);
        if (inner && inner.doc.documentElement) visit(inner.doc.documentElement, inner, inner.doc, here, depth + 1);
        return;
      }
      if (el.shadowRoot) for (const child of el.shadowRoot.childNodes) visit(child, ctx, blockHere, here, depth + 1);
      for (const child of el.childNodes) visit(child, ctx, blockHere, here, depth + 1);
    }
    visit(document.documentElement, TOP, null, scope === null, 0);
    if (scope !== null && !scopeHit && !workCut && !textCut) return {miss: true};
    const text = flat.join("");

    function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&"); }
    let pattern = escapeRe(opts.query);
    if (opts.wholeWord) pattern = "(?<![\\p{L}\\p{N}_])" + pattern + "(?![\\p{L}\\p{N}_])";
    const re = new RegExp(pattern, "gu" + (opts.caseSensitive ? "" : "i"));

    function segmentAt(index) {
      let lo = 0, hi = segments.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (segments[mid].start <= index) lo = mid; else hi = mid - 1;
      }
      return segments[lo];
    }
    // bp wait --text: only a match a person can see counts (the text of a dialog still fading
    // in, of a collapsed panel, does not).
    // The element that holds the text of segment `first` (a form field's own value, a text
    // node's parent or its shadow host), and the box of the text from s (in `first`) to e (null
    // for a match across tree scopes, which a range cannot span).
    function holder(first) {
      const node = first.node;
      return node.field || node.parentElement || (node.parentNode && node.parentNode.host) || null;
    }
    function textBox(first, s, e) {
      const last = segmentAt(e - 1), node = first.node;
      if (node.field) return node.field.getBoundingClientRect();
      try {
        const range = node.ownerDocument.createRange();
        range.setStart(node, first.map[s - first.start]);
        range.setEnd(last.node, last.map[e - 1 - last.start] + 1);
        return range.getBoundingClientRect();
      } catch (err) { return null; }
    }
    function shown(s, e) {
      const first = segmentAt(s), parent = holder(first);
      if (!parent || (parent.checkVisibility && !parent.checkVisibility({opacityProperty: true, visibilityProperty: true})))
        return false;
      const rect = textBox(first, s, e);
      return rect !== null && rect.width > 0 && rect.height > 0;
    }
    const matches = [];
    let total = 0, m, countCut = false;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) { re.lastIndex++; continue; }
      if (opts.visibleOnly && !shown(m.index, m.index + m[0].length)) continue;
      total++;
      if (matches.length < opts.limit) matches.push([m.index, m.index + m[0].length]);
      if (total >= 100000 || ((total & 1023) === 0 && performance.now() - started > WORK_MS)) {
        countCut = true;
        break;
      }
    }
    // Contexts: CONTEXT_PAD characters either side, bounded; matches whose contexts would
    // overlap share the first one's (sameContextAs), so six matches in a paragraph cost one.
    const CONTEXT_PAD = 80, MAX_CONTEXT = 400;
    let group = null;
    const out = matches.map(([s, e], i) => {
      const first = segmentAt(s), parent = holder(first);
      const from = Math.max(0, s - CONTEXT_PAD), to = Math.min(text.length, e + CONTEXT_PAD);
      let context = null, same = null;
      if (group && from < group.to && e <= group.limit) { same = group.index; group.to = Math.max(group.to, to); }
      else {
        group = {index: i + 1, from: from, to: to, limit: from + MAX_CONTEXT, item: null};
      }
      if (same === null) context = "";  // filled once its group is complete
      const rect = textBox(first, s, e) || {left: 0, top: 0, width: 0, height: 0};  // across tree scopes: none
      const style = parent ? styleOf(parent) : null;
      const visible = rect.width > 0 && rect.height > 0 && !!style && style.visibility === "visible" &&
        parseFloat(style.opacity) !== 0;
      const item = Object.assign({index: i + 1, text: cut(text.slice(s, e), 500)},
        same === null ? {context: context} : {sameContextAs: same},
        {tagName: parent ? parent.localName : "", visible: visible}, box(rect, first.ctx));
      if (same === null) group.item = item;
      group.item.context = cut(clean(text.slice(group.from, Math.min(group.to, group.limit)).replace(/\n/g, " ")), MAX_CONTEXT);
      return item;
    });
    return {title: cut(document.title, 4096), url: cut(location.href, 16384), totalMatches: total, matches: out,
      truncated: total > out.length || countCut || textCut || workCut};
  }

  // ---- find ------------------------------------------------------------------------------------
  const IMPLICIT = {a: "link", button: "button", select: "combobox", textarea: "textbox", img: "img", h1: "heading",
    h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading", nav: "navigation", main: "main",
    ul: "list", ol: "list", li: "listitem", table: "table", tr: "row", td: "cell", th: "columnheader",
    form: "form", dialog: "dialog", article: "article", aside: "complementary", header: "banner",
    footer: "contentinfo", summary: "button", option: "option", progress: "progressbar", hr: "separator"};
  const INPUT_ROLES = {checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
    search: "searchbox", button: "button", submit: "button", reset: "button", image: "button"};
  const NAME_FROM_CONTENT = new Set(["button", "link", "heading", "option", "cell", "columnheader", "listitem",
    "tab", "menuitem"]);

  function roleOf(el) {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();
    if (explicit) return explicit;
    const tag = el.localName;
    if (tag === "a") return el.hasAttribute("href") ? "link" : null;
    if (tag === "input") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      return type === "hidden" ? null : (INPUT_ROLES[type] || "textbox");
    }
    if (tag === "select" && (el.multiple || el.size > 1)) return "listbox";
    return IMPLICIT[tag] || null;
  }
  function textOf(el) {
    if (!el) return "";
    if (["input", "textarea", "select"].includes(el.localName)) return "";
    let text = el.innerText;
    if (typeof text !== "string") text = el.textContent;
    return clean(text);
  }
  function nameOf(el, role) {
    let name = "";
    const labelledby = el.getAttribute("aria-labelledby");
    if (labelledby) {
      const root = el.getRootNode();
      name = clean(labelledby.split(/\s+/).map((id) => {
        const target = (root.getElementById ? root.getElementById(id) : null) || el.ownerDocument.getElementById(id);
        return textOf(target);
      }).join(" "));
    }
    if (!name) name = clean(el.getAttribute("aria-label"));
    if (!name && el.labels && el.labels.length) name = clean(Array.from(el.labels).map(textOf).join(" "));
    if (!name && el.localName === "img") name = clean(el.getAttribute("alt"));
    if (!name && NAME_FROM_CONTENT.has(role)) name = textOf(el);
    if (!name) name = clean(el.getAttribute("title"));
    if (!name) name = clean(el.getAttribute("placeholder"));
    return cut(name, 500);
  }
  function describe(el, ctx, index) {
    const style = styleOf(el), rect = el.getBoundingClientRect(), role = roleOf(el);
    const visible = rect.width > 0 && rect.height > 0 && style.visibility === "visible" &&
      parseFloat(style.opacity) !== 0 &&
      (!el.checkVisibility || el.checkVisibility({opacityProperty: true, visibilityProperty: true}));
    let enabled = !el.matches(":disabled");
    if (enabled && (el.closest("[inert]") || el.closest("[aria-disabled=true]"))) enabled = false;
    const password = el.localName === "input" && (el.getAttribute("type") || "").toLowerCase() === "password";
    const attributes = [];
    for (const name of opts.attributes || []) {
      if (!el.hasAttribute(name)) continue;
      if (password && name.toLowerCase() === "value") continue;  // a prefilled secret stays in the page
      attributes.push({name: name, value: cut(el.getAttribute(name), 2048)});
    }
    const found = Object.assign({index: index, tagName: el.localName, role: role, name: nameOf(el, role),
      text: cut(textOf(el), 500), visible: visible, enabled: enabled}, box(rect, ctx), {attributes: attributes});
    const ref = refOf(el);
    if (ref) found.ref = ref;
    return found;
  }
  // The number this Agent's ref table (observe.js) holds for the element, if any.
  const refTable = opts.refs && (globalThis.__browserPilot || {})[opts.refs.key];
  function refOf(el) {
    if (!refTable || refTable.table !== opts.refs.table) return null;
    const ref = refTable.ids.get(el), held = ref && refTable.byRef.get(ref);
    return held && held.facts ? ref : null;
  }
  function find() {
    const out = [];
    let total = 0;
    eachElement((el, ctx) => {
      if (!el.matches(opts.selector)) return;
      if (opts.visibleOnly) {  // bp wait --selector: only what a person can see counts
        const found = describe(el, ctx, out.length + 1);
        // Clipped away for good by an ancestor (a 0x0 overflow:hidden wrapper): not shown.
        if (!found.visible || shownArea(el) === null) return;
        total++;
        if (out.length < opts.limit) out.push(found);
        return;
      }
      total++;
      if (out.length < opts.limit) out.push(describe(el, ctx, out.length + 1));
    }, opts.shadow !== false, true);
    return {title: cut(document.title, 4096), url: cut(location.href, 16384), totalMatches: total, elements: out,
      truncated: total > out.length || workCut};
  }

  // ---- locate ----------------------------------------------------------------------------------
  function centreLocally(el) {
    // Each document on its own, in this process only (lib.js scrollBoxIntoView).
    let boxOf = () => el.getBoundingClientRect();
    scrollBoxIntoView(el, boxOf, true);
    for (let doc = el.ownerDocument; doc !== document && doc.defaultView && doc.defaultView.frameElement; ) {
      const fe = doc.defaultView.frameElement, inner = boxOf;
      boxOf = () => {
        const r = inner(), [x, y] = contentOffset(fe);
        return {left: x + r.left, top: y + r.top, width: r.width, height: r.height};
      };
      scrollBoxIntoView(fe, boxOf, true);
      doc = fe.ownerDocument;
    }
  }
  function locate() {
    const hit = firstMatch(opts.selector, true);
    if (!hit) return {miss: true};
    if (opts.noScroll) { /* the person's policy denies scrolling: measure where it is */ }
    else if (opts.local) centreLocally(hit.el);
    else reveal(hit.el, true, false);
    const rect = hit.el.getBoundingClientRect();
    if (!(rect.width > 0 || rect.height > 0)) return {noLayout: true};
    // Where the frame sits may have moved with the scroll: measure frames afresh.
    let ctx = TOP;
    if (hit.ctx !== TOP) {
      const chain = [];
      for (let doc = hit.el.ownerDocument; doc !== document && doc.defaultView; ) {
        const owner = doc.defaultView.frameElement;
        if (!owner) break;
        chain.unshift(owner);
        doc = owner.ownerDocument;
      }
      for (const owner of chain) ctx = frameCtx(owner, ctx) || ctx;
    }
    const b = box(rect, ctx);
    return {x: Math.round(rect.left + rect.width / 2 + ctx.ox + OFFSET[0]),
      y: Math.round(rect.top + rect.height / 2 + ctx.oy + OFFSET[1]), top: b.y, left: b.x,
      width: b.width, height: b.height,
      // Unrounded, in this frame's viewport: the broker maps it through out-of-process frames.
      exact: {left: rect.left + ctx.ox, top: rect.top + ctx.oy, width: rect.width, height: rect.height}};
  }

  if (opts.selector && !validSelector(opts.selector)) return {badSelector: true};
  if (opts.op === "read") return read();
  if (opts.op === "search") return search();
  if (opts.op === "find") return find();
  if (opts.op === "locate") return locate();
  return null;
})
