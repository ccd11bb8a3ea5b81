// Browser Pilot's view of the focused element, in its isolated world of the tab's top document,
// for keyboard and press: pin the element before keys are sent, check it is still the one
// focused between steps, and read back lengths and verdicts — never a value.
(function (opts) {
  "use strict";
  const store = (globalThis.__browserPilot = globalThis.__browserPilot || {});
  const slot = "focus:" + opts.key;

  const deepActive = () => {
    // Through open shadow roots and same-process frames; an out-of-process frame stops it.
    let a = document.activeElement;
    for (let guard = 0; a && guard < 64; guard++) {
      let inner = null;
      if (a.shadowRoot && a.shadowRoot.activeElement) inner = a.shadowRoot.activeElement;
      else if (a.localName === "iframe" || a.localName === "frame") { try { inner = a.contentDocument && a.contentDocument.activeElement; } catch (e) { inner = null; } }
      if (!inner || inner === a) break;
      a = inner;
    }
    return a;
  };
  const editable = (el) => {
    if (!el) return null;
    // The hidden textarea (or Monaco's EditContext element) of a code editor: the editor's drawn text is the value (the textarea
    // is emptied by the editor after every key).
    const root = store.editorKind && (el.localName === "textarea" || el.classList.contains("native-edit-context"))
      ? el.closest(".CodeMirror, .monaco-editor, .ace_editor") : null;
    if (root && store.editorKind(root)) return {kind: "code_editor", sensitive: false, value: () => store.editorText(root),
      readOnly: el.readOnly === true || el.getAttribute("aria-readonly") === "true"};
    if (el.localName === "input" || el.localName === "textarea") {
      const type = (el.type || "text").toLowerCase();
      if (["checkbox", "radio", "button", "submit", "reset", "image", "file", "color", "range", "hidden"].includes(type)) return null;
      return {kind: "input", sensitive: type === "password", value: () => el.value, readOnly: el.readOnly || el.disabled};
    }
    if (el.isContentEditable) return {kind: "contenteditable", sensitive: false, value: () => el.innerText.replace(/\n$/, ""), readOnly: false};
    return null;
  };
  const described = (el) => {
    if (!el || el === document.body || el === document.documentElement) return "none";
    if (el.localName === "iframe" || el.localName === "frame") return "frame";
    return "element";
  };

  if (opts.mode === "click") {
    // `bp keyboard --click CSS`: where to click to focus the first match in the top document.
    let el = null;
    try { el = document.querySelector(opts.selector); } catch (e) { return {invalid: true}; }
    if (!el) return {missing: true};
    if (el.matches(":disabled") || el.closest("[aria-disabled='true'], [inert]")) return {refuse: "disabled"};
    // Where a click focuses it, by the ref resolver's rule (lib.js).
    if (!scrollReach(el)) return {refuse: "outside_viewport"};
    reveal(el, true, false);
    if (!Array.from(el.getClientRects()).some((q) => q.width > 0 && q.height > 0)) return {refuse: "no_layout"};
    const found = hitTest(el, false);
    if (!found || !found.points.length)
      return found && found.obstruction ? {refuse: "obscured", obstruction: found.obstruction} : {refuse: "outside_viewport"};
    return {x: found.points[0][0], y: found.points[0][1]};
  }
  if (opts.mode === "pin") {
    const el = deepActive();
    const ed = editable(el);
    const pinned = {el: el, before: ed ? ed.value() : null, mutations: 0};
    const previous = store[slot];
    if (previous && previous.observer) previous.observer.disconnect();
    // Counts DOM changes caused by the keys (menus opening, results appearing).
    pinned.observer = new MutationObserver((records) => { pinned.mutations += records.length; });
    pinned.observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    store[slot] = pinned;
    return {kind: ed ? ed.kind : "unsupported", focus: described(el), sensitive: !!(ed && ed.sensitive),
      beforeLength: ed ? pinned.before.length : 0, readOnly: !!(ed && ed.readOnly),
      mac: /Mac/.test(navigator.platform)};
  }
  if (opts.mode === "watch" || opts.mode === "changes") {
    // DOM changes since an input began: the broker waits for a quiet period before it observes,
    // and a change counts as an effect of the input.
    const watchSlot = "watch:" + opts.key;
    if (opts.mode === "watch") {
      const previous = store[watchSlot];
      if (previous) previous.observer.disconnect();
      const watch = {count: 0};
      watch.observer = new MutationObserver((records) => { watch.count += records.length; });
      watch.observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
      store[watchSlot] = watch;
      return {count: 0};
    }
    const watch = store[watchSlot];
    if (!watch) return {lost: true};
    watch.count += watch.observer.takeRecords().length;
    if (opts.stop) { watch.observer.disconnect(); delete store[watchSlot]; }
    return {count: watch.count};
  }
  const pinned = store[slot];
  if (!pinned) return {lost: true};
  if (opts.mode === "check") return {same: deepActive() === pinned.el && (!pinned.el || pinned.el.isConnected)};
  if (opts.mode === "readback") {
    const el = deepActive();
    const ed = el === pinned.el ? editable(el) : null;
    if (!ed || pinned.before === null) return {readback: null};
    const value = ed.value(), expected = (opts.clear ? "" : pinned.before) + opts.text;
    return {readback: {kind: ed.kind, sensitive: ed.sensitive, afterLength: value.length,
      expectedLength: expected.length, matches: value === expected}};
  }
  if (opts.mode === "effects") {
    const el = deepActive();
    pinned.mutations += pinned.observer.takeRecords().length;
    pinned.observer.disconnect();
    const effects = [];
    if (el !== pinned.el) effects.push("focus_changed");
    const ed = editable(pinned.el);
    if (ed && pinned.before !== null && ed.value() !== pinned.before) effects.push("value_changed");
    if (pinned.mutations && !effects.includes("value_changed")) effects.push("content_changed");
    return {effects: effects, sensitive: !!(ed && ed.sensitive)};
  }
  return {lost: true};
})
