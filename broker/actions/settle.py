"""The settle of an acting command: wait for what the action caused, not for a clock.

Every command that acts (click, type, keyboard, press, hover, select, dropdown, upload, scroll,
each step of `bp batch`) brackets its dispatch with one `Settle`:

    settle = Settle(session)   # just before the first input event
    ...dispatch...
    record = settle.wait(deadline)            # the evidence's "settle"

What counts as caused, and how it is seen:
- a main-frame navigation (navigation() below): waited for until the new
  document is interactive -> status "navigated";
- the requests the page started from the dispatch on (the network journal's settle hook,
  broker/network/journal.py Hub.watch), except WebSocket, EventSource and beacons (they stay
  open or need no answer) and requests still open REQUEST_BOUND_S after they started: those are
  reported as pending, never awaited; and, seen from the page, a caused fetch or XHR until the
  page has handled its answer (the network reports a request's end before the renderer has run
  the handlers that may send the next one: Dash's callback queue answers, takes a timer turn, then
  sends the newest value) — the handling is caused code at the asking code's level (at least
  1): neither a request nor a zero-delay timer (a task turn) is a level, so a chain of answers
  and turns (Dash's queue, one hop per value) is bounded by the timers that wait, the requests'
  bound and the settle's, not spent by its hops;
- timers (setTimeout up to TIMER_MAX_MS) and animation frames the page scheduled while the input
  was being dispatched, and the timers that a caused timer's callback schedules, two levels deep
  (a library's next step: Bootstrap's modal shows its dialog when the backdrop's timer fires, and
  moves focus into it when the dialog's own fallback timer fires): the page's requestAnimationFrame
  is wrapped for the dispatch only, its setTimeout until the settle stops (a timer scheduled
  later by anything else, a setInterval clock, a longer timeout, a poll re-arming itself are not
  causes);
- DOM changes of the top document and its same-origin frames (a MutationObserver counter);
- motion the action started (the browser's own list, document.getAnimations()): a CSS transition,
  CSS animation or Web Animation that began after the arm, is finite, ends within MOTION_MAX_MS,
  moves or reveals (opacity, transform, size, position, clip; not colours or shadows) and is on an
  element holding a control (a modal fading in, a menu sliding open: its fields take focus, or
  become visible, when it ends) or on an element the page added since the arm that holds text (a
  toast sliding in: Toastify's 0.4 s `top` transition) is waited for until it has finished and the page has drawn a frame
  since (its transitionend/animationend handlers have run then), but no longer than it should
  take: a background tab draws few frames and ends its motion much later (measured: ~1.1 s for
  any transition in a headless background tab), a hidden one never while we wait. A colour fading
  on a hovered button, a button's own press effect, a ripple, a spinner (infinite) or anything
  running before the action are not causes;
- WebSocket frames the page sent while the input was dispatched: each waits (up to WS_ANSWER_S)
  for the DOM change that answers it (received frames are dropped before the broker for their
  volume, so the answer is read from its effect on the page); a page that sends frames on its own
  later in the settle (a heartbeat, a ticker) has none of them awaited;
- a dialog (answers at once: the page is blocked), a popup, a download (effects, not waited for).

The answer comes as soon as nothing caused is pending and a task turn of the page has passed
with no DOM or focus change since the last look (endedBy "turn"; "frame" where Chromium holds
the page's tasks after input until its next frame, as in a person's browser, and after a
request's answer): the page says so itself, in the one awaited call of the tracker (ARM's
settle()), so a synchronous change answers in ~1 ms in `bp launch`'s browser, within a frame in
a person's. (The frame rule's look runs in an animation-frame callback, before the frame's
resize and intersection observers: what it waited for beyond a turn was time, not a signal.)
Where frames are few (a tab behind another in its window draws ~1 a second after input), a
frame's time (FRAME_MS) with no DOM change ends it instead ("frame_time"); a hidden document,
which draws none and throttles timers, is polled by the broker under the quiet window (QUIET_S,
"quiet_window"). An action whose first look shows no change and nothing pending
answers at once (status "quiet", "nothing_caused"). Debounced fields get a grace (DEBOUNCE_GRACE_S): text typed into a search
box, a combobox or a field with a suggestion list, with nothing else pending, waits that long for
a request or a DOM change to start (a debounce whose timer the wrapper did not see: a library that
kept its own setTimeout reference). Figures: tests/bench/bench_settle.py.

The record: {"status": settled|quiet|capped|navigated, "waitedMs": n, "endedBy": rule, "pending": {...}} — pending
only when capped: counts per kind and up to PENDING_URLS redacted URLs (origin and path).
"""

import json
import threading
import time
from urllib.parse import urlsplit

from bp.errors import BPError
from broker.records import phases

QUIET_S = 0.05  # the DOM unchanged this long after its last change (and nothing pending): settled
FRAME_MS = 20  # a frame's time: no frame drawn and no DOM change in it ends the settle ("frame_time")
POLL_S = 0.025  # the broker's look again at what only it sees (requests, frames), or a hidden page
LOOK_MS = 250  # one in-page look waits at most this long for the page's own causes to end
TIMER_MAX_MS = 1000  # a longer setTimeout is a poll or a clock, not the action's answer
TIMER_SLACK_MS = 50  # a wrapped timer not fired this long past its due time was cleared (a debounce)
MOTION_MAX_MS = 1000  # a longer animation is a decoration, not the action's answer
FRAME_WAIT_MS = 100  # an animation frame a hidden tab never runs
REQUEST_BOUND_S = 5.0  # a caused request still open after this is reported, not awaited (long poll)
BODY_WAIT_S = 0.3  # a response's body still open this long after its headers: a stream, or never read
WS_ANSWER_S = 2.0  # a frame the page sent waits this long for the DOM change that answers it
DEBOUNCE_GRACE_S = 0.5  # typed into a search box: time for the debounce to start its request
SETTLE_MAX_S = 8.0  # the whole settle, besides the command's deadline
OBSERVE_RESERVE_S = 1.0  # kept for the observation after the settle
PENDING_URLS = 3
NAVIGATION_WAIT_S = 10.0
NAVIGATION_STARTS = ("Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameNavigated")
# A load that ends with one of these and no new main-frame loader started no new document.
SAME_DOCUMENT_ENDS = ("Page.frameStoppedLoading", "Page.navigatedWithinDocument", "Page.downloadWillBegin",
                      "Browser.downloadWillBegin")
IGNORED_TYPES = frozenset({"websocket", "eventsource", "ping", "cspviolationreport", "media"})  # media: a <video> streams in ranges

# Runs in the page's own world (the timers to wrap are the page's); the tracker is reached by its
# object id only, never by a global name. performance.now() is the page's clock.
ARM = """(function (timerMax, frameWait, slack, motionMax, quietWindow, frameMs, requestBound) {
  const w = window, ST = w.setTimeout, RAF = w.requestAnimationFrame, MC = w.MessageChannel, MO = w.MutationObserver;
  const now = () => performance.now();
  const t = {armed: true, timers: [], mutations: 0, last: 0, observers: [], t0: now()};
  // Motion: animations running before the action are not its causes.
  const animations = () => { try { return document.getAnimations ? document.getAnimations() : []; } catch (e) { return []; } };
  const before = new WeakSet(animations()), seen = new WeakSet();
  const CONTROL = "a[href],button,input,select,textarea,summary,[tabindex],[contenteditable]";
  // What moves or reveals a thing (not a colour, a shadow, an outline): CSS names, as a
  // CSSTransition gives them; a keyframe's camelCase names are turned into them.
  const MOTION = new Set(["opacity", "visibility", "display", "transform", "translate", "scale", "rotate", "height",
    "width", "max-height", "max-width", "min-height", "min-width", "top", "left", "right", "bottom", "inset",
    "clip-path", "margin-top", "margin-bottom", "margin-left", "margin-right"]);
  const moves = (a) => {
    if (typeof a.transitionProperty === "string") return MOTION.has(a.transitionProperty);
    for (const frame of a.effect.getKeyframes())
      for (const p in frame) if (MOTION.has(p.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()))) return true;
    return false;
  };
  // Each awaited animation is pending until it has finished and the page has had a frame since
  // (Chromium dispatches transitionend/animationend at the next frame: their handlers have run
  // then), and no longer than it should take (`due`): a tab that draws few frames (a background
  // tab) ends its motion much later, and a hidden one never while we wait: not awaited there.
  const awaited = [];
  const moving = (n) => {
    if (document.hidden) return 0;
    for (const a of animations()) {
      if (before.has(a) || seen.has(a)) continue;
      seen.add(a);
      try {
        const timing = a.effect.getComputedTiming(), target = a.effect.target, rate = Math.abs(a.playbackRate) || 1;
        const left = (timing.endTime - (timing.localTime || 0)) / rate;
        // The element holds a control (a dialog, a menu): its own press or hover effect is not one.
        // Or it arrived with the action and says something (a toast sliding in: not a ripple, empty).
        if (a.playState === "running" && isFinite(left) && left <= motionMax && target && target.nodeType === 1 &&
            (target.querySelector(CONTROL) || (arrived(target) && /\\S/.test(target.textContent || ""))) && moves(a)) {
          const r = {due: n + left, done: false};
          const done = () => { r.done = true; t.wake(); };
          a.finished.then(() => (typeof RAF === "function" ? RAF.call(w, done) : done()), done);
          awaited.push(r);
        }
      } catch (e) {}
    }
    let count = 0;
    for (const r of awaited) if (!r.done && n < r.due + slack) count++;
    return count;
  };

  // Elements the page added since the arm (a toast, a tooltip): their own motion is the action's
  // answer arriving, though they hold no control (see `moving`).
  const added = new WeakSet();
  const count = (records) => {
    t.mutations += records.length; t.last = now();
    for (let i = 0; i < records.length && i < 64; i++) {
      const nodes = records[i].addedNodes;
      for (let j = 0; nodes && j < nodes.length && j < 16; j++) if (nodes[j].nodeType === 1) added.add(nodes[j]);
    }
  };
  const arrived = (el) => {
    for (let n = el, hops = 0; n && hops < 4; n = n.parentElement, hops++) if (added.has(n)) return true;
    return false;
  };
  const watch = (doc, depth) => {
    try {
      const o = new MO(count);
      o.observe(doc, {subtree: true, childList: true, attributes: true, characterData: true});
      t.observers.push(o);
      if (depth < 3) for (const f of doc.querySelectorAll("iframe,frame")) {
        let d = null; try { d = f.contentDocument; } catch (e) {}
        if (d) watch(d, depth + 1);
      }
    } catch (e) {}
  };
  watch(document, 0);
  // A timer the dispatch scheduled is caused (level 1), and so is one that a caused timer's
  // callback schedules, two levels deep (a fade's fallback timer that a library starts when its
  // first step ran: Bootstrap's modal); a page that keeps re-arming one is a poll, not an answer.
  let level = 0;  // the level of the caused timer whose callback runs now (0: none)
  // The page's handling of a caused answer (a fetch's response, its body, an XHR's end) is caused
  // too, at the level of the code that asked (at least 1; a request is no level of its own): from
  // the answer's first microtask (ours, the first registered) to the task turn after it, which the
  // page's own handlers run before.
  const handling = [];
  // The causal depth of the code running now: 0 the dispatch, n a caused callback, -1 not caused.
  const depth = () => Math.max(level, handling.length ? Math.min.apply(Math, handling) : 0) ||
    (t.armed ? 0 : -1);
  // A zero-delay timer is a task turn, not a wait (Dash's store observer yields so before each
  // request): it keeps its caller's level, up to TURNS of them per settle (then a busy loop).
  let turns = 0;
  const TURNS = 100;
  const timeout = function (fn, delay) {
    const ms = Number(delay) || 0, d = depth(), turn = ms <= 0 && turns < TURNS;
    if (d >= 0 && (d < 3 || turn) && typeof fn === "function" && ms <= timerMax) {
      if (turn) turns++;
      const rec = {due: now() + ms, fired: false}, mine = turn ? Math.max(d, 1) : d + 1;
      t.timers.push(rec);
      const args = Array.prototype.slice.call(arguments, 2);
      return ST.call(w, function () {
        rec.fired = true;
        const outer = level;
        level = mine;
        // A look right after a caused timer's callback: its DOM change counts as seen, so the
        // next frame with no further change ends the settle (as for a change the input made).
        try { return fn.apply(this, args); } finally { level = outer; if (t.observers.length) { takeAll(); looked = t.mutations; } t.wake(); }
      }, delay);
    }
    return ST.apply(w, arguments);
  };
  // A caused request is pending in the page until its answer has been handled (the network
  // reports its end before the page has run the handlers that may send the next one), for at most
  // requestBound ms (a long poll is reported by the broker, never awaited).
  const answers = [];
  const answer = () => {  // null where the code asking is not caused
    const d = depth();
    if (d < 0) return null;
    const rec = {due: now() + requestBound, done: false}, mine = Math.max(d, 1);
    answers.push(rec);
    rec.end = () => {  // once: a promise settles once, an XHR's listener lets go of its record first
      handling.push(mine);
      ST.call(w, () => { handling.splice(handling.indexOf(mine), 1); rec.done = true; t.wake(); }, 0);
    };
    return rec;
  };
  const answered = (promise) => {
    const rec = promise && typeof promise.then === "function" ? answer() : null;
    if (rec) promise.then(rec.end, rec.end);
    return promise;
  };
  // Each wrapper the settle puts on the page's request functions, until it stops: [owner, name,
  // the page's own, ours]. A page that made one its own (a throwing setter) keeps it: only the
  // broker sees those requests.
  const patches = [];
  const patch = (owner, name, wrap) => {
    const own = owner && owner[name];
    if (typeof own !== "function") return;
    const mine = wrap(own);
    try { owner[name] = mine; if (owner[name] === mine) patches.push([owner, name, own, mine]); } catch (e) {}
  };
  patch(w, "fetch", (own) => function () { return answered(own.apply(this, arguments)); });
  // A body read is the same answer's handling.
  const R = w.Response && w.Response.prototype;
  for (const name of ["json", "text", "arrayBuffer", "blob", "formData"])
    patch(R, name, (own) => function () { return answered(own.apply(this, arguments)); });
  // An XHR's end is heard by a listener added at open(), before the page sets its own handlers
  // (axios sets onloadend after open): the handling window is open when they run.
  const X = w.XMLHttpRequest && w.XMLHttpRequest.prototype, xhrs = new WeakMap();
  patch(X, "open", (own) => function () {
    const xhr = this;
    if (!xhrs.has(xhr)) {
      xhrs.set(xhr, null);
      const ended = () => { const rec = xhrs.get(xhr); if (rec && xhr.readyState === 4) { xhrs.set(xhr, null); rec.end(); } };
      try { xhr.addEventListener("readystatechange", ended); xhr.addEventListener("loadend", ended); } catch (e) {}
    }
    return own.apply(this, arguments);
  });
  patch(X, "send", (own) => function () {
    if (xhrs.has(this)) { const rec = answer(); if (rec) xhrs.set(this, rec); }
    return own.apply(this, arguments);
  });
  const frame = function (fn) {
    if (t.armed && typeof fn === "function") {
      const rec = {due: now() + frameWait, fired: false, frame: true};
      t.timers.push(rec);
      return RAF.call(w, function (ts) { rec.fired = true; return fn.call(this, ts); });
    }
    return RAF.apply(w, arguments);
  };
  // A message posted while armed (React's scheduler renders so) asks for one task turn first.
  const MP = w.MessagePort && w.MessagePort.prototype, PM = MP && MP.postMessage, WPM = w.postMessage;
  const posting = function () { if (t.armed) t.posted = true; return PM.apply(this, arguments); };
  const windowPosting = function () { if (t.armed) t.posted = true; return WPM.apply(this, arguments); };
  if (typeof ST === "function") w.setTimeout = timeout;
  if (typeof RAF === "function") w.requestAnimationFrame = frame;
  if (typeof PM === "function") MP.postMessage = posting;
  if (typeof WPM === "function") w.postMessage = windowPosting;
  // Disarmed at the first look: what the page schedules from then on is not the dispatch's. The
  // setTimeout wrapper stays until the settle stops, for the timers caused timers schedule.
  t.disarm = () => {
    if (!t.armed) return;
    t.armed = false;
    if (w.requestAnimationFrame === frame) w.requestAnimationFrame = RAF;
    if (MP && MP.postMessage === posting) MP.postMessage = PM;
    if (w.postMessage === windowPosting) w.postMessage = WPM;
  };
  const takeAll = () => { for (const o of t.observers) { const r = o.takeRecords(); if (r.length) count(r); } };
  t.poll = () => {
    takeAll();
    const n = now();
    let timers = 0, frames = 0;
    for (const r of t.timers) if (!r.fired && n < r.due + slack) { if (r.frame) frames++; else timers++; }
    let open = 0;
    for (const r of answers) if (!r.done && n < r.due) open++;
    return {mutations: t.mutations, quietMs: t.mutations ? n - t.last : n - t.t0, timers: timers, frames: frames,
      answers: open, motion: moving(n), debounced: t.debounced, hidden: document.hidden};
  };
  // The settle's end, pushed by the page: resolves as soon as nothing the action caused is pending
  // in the page (timers, frames, motion, answers) and either nothing changed, or a task turn of
  // the page has passed with no DOM or focus change since the last look ("turn": what the page
  // had queued behind the change, a framework's next render step included, has run), or a
  // rendering frame has ("frame", where the page holds its tasks until it draws), or a frame's
  // time has (frameMs, where frames and tasks both lag: "frame_time"), or the DOM has been quiet
  // for quietWindow ms ("quiet_window"). A caused timer, answer or motion that ends wakes it at
  // once. At most maxMs, then the broker looks at what it alone sees (requests, WebSocket frames)
  // and asks again. A hidden document draws no frames and throttles timers: it answers at once,
  // and the broker polls it (endedBy absent). `changed`: whether the DOM or the focus changed
  // after the first look (a read sent right behind that look is the page after the action when
  // it did not: Settle.take_ahead).
  const focused = () => {
    let a = document.activeElement;
    try { for (let i = 0; a && a.shadowRoot && a.shadowRoot.activeElement && i < 16; i++) a = a.shadowRoot.activeElement; } catch (e) {}
    return a;
  };
  const turn = (fn) => {
    if (typeof MC !== "function") return ST.call(w, fn, 0);
    const c = new MC();
    c.port1.onmessage = () => { c.port1.close(); fn(); };
    c.port2.postMessage(0);
  };
  let looked = 0, lookedFocus = null, first = null;  // the DOM change count and focus at the last look
  t.wake = () => {};
  t.settle = (maxMs) => new Promise((resolve) => {
    const started = now();
    let round = 0, ticks = 0, turnsLeft = 8;
    const end = (p, by) => {
      t.wake = () => {};
      p.changed = first !== null && (t.mutations !== first[0] || focused() !== first[1]);
      if (by) p.endedBy = by;
      resolve(p);
    };
    const check = (by, at) => {
      if (at !== round) return;  // another of this round's wake-ups came first
      round++;
      const p = t.poll(), focus = focused(), fresh = t.mutations !== looked || focus !== lookedFocus;
      looked = t.mutations; lookedFocus = focus;
      if (first === null) first = [t.mutations, focus];
      p.ticks = ticks;
      const pending = p.timers || p.frames || p.motion || p.answers;
      if (!pending) {
        if (!p.mutations) return end(p, "nothing_caused");
        // A request's answer ends at a frame, not a turn: a library may send its next request
        // from a step the tracker does not see (Dash's renderer answers a keystroke so).
        if (by === "turn" && !fresh && !answers.length) return end(p, by);
        if (by === "frame" && !fresh) return end(p, by);
        // No frame came within a frame's time (the tab draws few: one behind another in its
        // window runs ~1 frame a second after input) and nothing changed in that time.
        if (by === "clock" && !fresh && p.quietMs >= frameMs) return end(p, "frame_time");
        if (p.quietMs >= quietWindow) return end(p, "quiet_window");
      }
      if (document.hidden || now() - started >= maxMs) return end(p);
      const mine = round;
      // What the page queued behind the change runs before our turn (tasks of one source run in
      // order); a page that holds its tasks after input until it draws answers at the frame.
      // (A page that changes at every turn is left to the frames after a few.)
      if (!pending && !answers.length && turnsLeft-- > 0) turn(() => check("turn", mine));
      t.wake = () => turn(() => check("turn", mine));
      if (typeof RAF === "function") RAF.call(w, () => { ticks++; check("frame", mine); });
      // The clock wakes a frame's time after the last change (not after this look).
      const due = p.mutations ? frameMs - p.quietMs : frameMs;
      ST.call(w, () => check("clock", mine), Math.max(1, Math.min(due, maxMs - (now() - started))));
    };
    check(null, 0);
  });
  t.first = (maxMs) => {
    t.disarm();
    // A render a framework scheduled with postMessage (React's scheduler) runs before the first
    // look: one task turn, only then (in a page in front it may wait for a frame to be drawn).
    if (!t.posted || typeof MC !== "function") return t.settle(maxMs).then((p) => Object.assign(p, {posted: false}));
    return new Promise((resolve) => { const c = new MC(); c.port1.onmessage = () => resolve(t.settle(maxMs)); c.port2.postMessage(0); });
  };
  t.stop = () => {
    t.disarm();
    if (w.setTimeout === timeout) w.setTimeout = ST;
    for (const [owner, name, own, mine] of patches.splice(0)) try { if (owner[name] === mine) owner[name] = own; } catch (e) {}
    for (const o of t.observers) o.disconnect();
    t.observers = [];
  };
  const el = document.activeElement;
  const role = el && el.getAttribute ? (el.getAttribute("role") || "") : "";
  t.debounced = !!(el && (el.type === "search" || role === "combobox" || role === "searchbox" ||
    (el.hasAttribute && (el.hasAttribute("list") || el.hasAttribute("aria-autocomplete")))));
  return t;
})"""


def redacted_url(url):
    """Origin and path of a URL: its query and fragment may hold what was typed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme in ("data", "blob"):
        return parts.scheme + ":"
    path = parts.path if len(parts.path) <= 120 else parts.path[:120] + "…"
    return f"{parts.scheme}://{parts.hostname or ''}{(':' + str(parts.port)) if parts.port else ''}{path}" + \
        ("?…" if parts.query else "")


def navigation(session, since, deadline, loader_before=None, round_trip=True):
    """After input: if it started a main-frame navigation, wait until the new document is
    interactive. Returns "navigation" when the main document changed, None otherwise.
    `loader_before` is the main-frame loader before the input (a fast navigation may already
    have replaced it by the time this runs).

    One round trip through the tab's renderer orders us after every event the input caused, so
    no fixed sleep is needed to notice a navigation."""
    loader_before = session.loader if loader_before is None else loader_before
    if round_trip and not session.dialog_open():  # (the settle's first look is its round trip)
        session.call("Runtime.evaluate", {"expression": "0", "returnByValue": True},
                     timeout_s=max(0.1, deadline - time.monotonic()), abort=session.dialog_open)

    def main_frame_navigation(method, params):
        frame = params.get("frame") or {}
        frame_id = params.get("frameId") or frame.get("id")
        return method in NAVIGATION_STARTS and frame_id == session.frame_id and not frame.get("parentId")

    if session.dialog_open() or session.wait_for(main_frame_navigation, since, 0) is None:
        return None

    def outcome(method, params):
        """What the started load turned out to be: a new document (interactive), or a load that
        ended without one — a download, a fragment or history change, a 204, a cancelled one."""
        if params.get("frameId") != session.frame_id:
            return False
        if method == "Page.lifecycleEvent":
            return params.get("name") == "DOMContentLoaded" and params.get("loaderId") != loader_before
        if method in SAME_DOCUMENT_ENDS:
            return session.loader == loader_before  # else the new document's DOMContentLoaded decides
        return False

    cursor = since
    while True:
        found = session.next_event(outcome, cursor, max(0.0, min(NAVIGATION_WAIT_S, deadline - time.monotonic())))
        if found is None or found[1] == "Page.lifecycleEvent":
            break
        if session.loader == loader_before and not session.wait_for(main_frame_navigation, found[0], 0):
            return None  # no new document, and nothing started since
        cursor = found[0]
    if found is None and session.loader == loader_before:
        return None  # a started load that did not replace the document
    if found is None:
        raise BPError("unknown_outcome", "The input started a navigation that did not become interactive in time.",
                      context={"reason": "navigation_stalled"})
    return "navigation"


class Requests:
    """The requests and sent WebSocket frames of one tab from now on, heard live from the journal."""

    def __init__(self, hub, raw):
        self.hub = hub
        self.lock = threading.Lock()
        self.open = {}  # request id -> (started, url)
        self.answered = {}  # request id -> when its response headers came (its body may never be read)
        self.started = 0
        self.ignored = 0  # WebSocket, EventSource, beacons started
        self.frames = []  # monotonic times of WebSocket frames sent
        self.last_end = None
        hub.watch(raw, self.heard)

    def heard(self, method, request_id, event, at):
        if method == "Network.webSocketFrameSent":
            with self.lock:
                self.frames.append(at)
            return
        if method == "Network.responseReceived":
            with self.lock:
                if request_id in self.open:
                    self.answered[request_id] = at
            return
        if method != "Network.requestWillBeSent":
            with self.lock:
                if self.open.pop(request_id, None) is not None:
                    self.last_end = at
                self.answered.pop(request_id, None)
            return
        params = event if isinstance(event, dict) else (json.loads(event).get("params") or {})
        kind = str(params.get("type") or "other").lower()
        url = str((params.get("request") or {}).get("url") or "")
        if kind == "other" and url.split("?", 1)[0].endswith("/favicon.ico"):
            return  # the browser's own fetch of the tab's icon, not the page's answer
        with self.lock:
            if request_id in self.open:
                return  # a redirect: the same request goes on
            if kind in IGNORED_TYPES:
                self.ignored += 1
                return
            self.started += 1
            self.open[request_id] = (at, url)

    def pending(self, now):
        """(awaited, overdue): open requests younger than REQUEST_BOUND_S, and older ones. A request
        whose response came BODY_WAIT_S ago and whose body is still open is answered (a body the
        page never reads ends only when it does; a stream never ends)."""
        with self.lock:
            rows = [row for rid, row in self.open.items()
                    if rid not in self.answered or now - self.answered[rid] < BODY_WAIT_S]
        awaited = [r for r in rows if now - r[0] < REQUEST_BOUND_S]
        return awaited, [r for r in rows if now - r[0] >= REQUEST_BOUND_S]

    def close(self):
        self.hub.unwatch(self.heard)


class Settle:
    """One action's settle: armed before its dispatch, waited for after (see the module)."""

    def __init__(self, session, raw=None, grace=True, requests=None, max_s=None):
        self.session = session
        self.loader = session.loader
        self.since = session.mark()
        self.started = time.monotonic()
        self.grace = grace
        self._tracker = None
        self._arming = None  # the tracker's ARM call, in flight while the input is dispatched
        self.record = None
        self.ahead = None  # the caller's read sent right behind the first look (wait(peek=)), if final
        self.waited = False  # the settle polled again after its first look
        self.stopped = False
        self.mutations = None  # DOM changes counted since the dispatch (None: not known)
        raw = raw or getattr(session, "raw_id", None)
        hub = getattr(session, "network_hub", None)  # handed to the tab by the hub (Hub.attach)
        self.requests = requests or (Requests(hub, raw) if hub is not None and raw else None)
        self.max_s = SETTLE_MAX_S if max_s is None else max_s
        self.after_load = requests is not None  # bp open's settle (after_load)
        if session.dialog_open():
            return
        arm = {"expression": f"{ARM}({TIMER_MAX_MS}, {FRAME_WAIT_MS}, {TIMER_SLACK_MS}, {MOTION_MAX_MS}, {int(QUIET_S * 1000)}, {FRAME_MS}, {int(REQUEST_BOUND_S * 1000)})", "returnByValue": False,
               "silent": True}
        try:
            # Not waited for here: a caller overlaps it with its own checks (scripts run in the order
            # sent) and waits with armed() before the input; otherwise the first look waits for it.
            self._arming = session.call_later("Runtime.evaluate", arm)
        except BPError:
            self._arming = None

    def armed(self):
        """Wait for the arm to be in place: before the input, which reaches the page by another
        road than the arm (the browser's input pipeline) and could overtake it."""
        _ = self.tracker

    @property
    def tracker(self):
        """The in-page tracker's object id, or None (it could not start: a dialog, a new document)."""
        arming, self._arming = self._arming, None
        if arming is not None:
            try:
                reply = arming.result(timeout_s=5.0, abort=self.session.dialog_open)
                self._tracker = ((reply or {}).get("result") or {}).get("objectId")
            except BPError:
                self._tracker = None
        return self._tracker

    def _poll_params(self, first, wait_ms: float = LOOK_MS):
        """The tracker's look: first(ms) at the first (disarms it), settle(ms) later; each answers
        when the page's own causes have ended, or after ms (see ARM)."""
        return {"objectId": self.tracker, "functionDeclaration": "function (ms) { return this.first ? "
                + ("this.first(ms)" if first else "this.settle(ms)") + " : null; }",
                "arguments": [{"value": int(wait_ms)}], "returnByValue": True, "awaitPromise": True, "silent": True}

    def _poll(self, first=False, wait_ms: float = 0):
        """The tracker's {mutations, quietMs, timers, frames, motion, endedBy?}, or None (a new
        document, a dialog)."""
        if self.tracker is None or self.session.dialog_open():
            return None
        try:
            reply = self.session.call("Runtime.callFunctionOn", self._poll_params(first, wait_ms),
                                      timeout_s=5.0 + wait_ms / 1000.0, abort=self.session.dialog_open)
        except BPError:
            return None
        return ((reply or {}).get("result") or {}).get("value")

    def _first_wait_ms(self, deadline):
        """How long the first look may wait in the page: LOOK_MS, within the settle's bound."""
        end = min(self.started + self.max_s, deadline - OBSERVE_RESERVE_S)
        return max(0.0, min(LOOK_MS, (end - time.monotonic()) * 1000))

    def _first_look(self, peek, wait_ms):
        """The first poll, and the caller's read (peek(): a sent script with answer() and drop())
        sent right behind it, so that a settle that ends at its first look costs one round trip
        for both. (state or None, the read or None)."""
        if peek is None or self.tracker is None or self.session.dialog_open():
            return self._poll(first=True, wait_ms=wait_ms), None
        try:
            sent = self.session.call_later("Runtime.callFunctionOn", self._poll_params(True, wait_ms))
        except BPError:
            return None, None
        try:
            ahead = peek()
        except BPError:
            ahead = None  # the caller reads again itself, and meets the same error there
        try:
            reply = sent.result(timeout_s=5.0 + wait_ms / 1000.0, abort=self.session.dialog_open)
        except BPError:
            reply = None
        return ((reply or {}).get("result") or {}).get("value"), ahead

    def take_ahead(self):
        """The caller's read sent with the first look, when the settle ended at that look with
        nothing caused (what it read is the page after the action); else None."""
        ahead, self.ahead = self.ahead, None
        return ahead

    def drop_ahead(self):
        ahead, self.ahead = self.ahead, None
        if ahead is not None:
            ahead.drop()

    def _stop(self):
        if self.stopped:
            return
        self.stopped = True
        if self.requests is not None:
            self.requests.close()
        if self._arming is not None and self.session.dialog_open():
            self._arming.drop()  # blocked behind the dialog: nobody waits for it
            self._arming = None
        if self.tracker is not None and not self.session.dialog_open() and self.session.loader == self.loader:
            try:  # not awaited: the answer need not wait for the page to drop its observers
                self.session.send_nowait("Runtime.callFunctionOn", {
                    "objectId": self.tracker, "functionDeclaration": "function () { if (this.stop) this.stop(); }",
                    "silent": True})
                self.session.send_nowait("Runtime.releaseObject", {"objectId": self.tracker})
            except BPError:
                pass

    def _navigation_started(self):
        session = self.session
        return session.loader != self.loader or session.wait_for(
            lambda m, p: m in NAVIGATION_STARTS and (p.get("frameId") or (p.get("frame") or {}).get("id"))
            == session.frame_id and not (p.get("frame") or {}).get("parentId"), self.since, 0) is not None

    def _done(self, status, ended_by, pending=None):
        record = {"status": status, "waitedMs": int((time.monotonic() - self.started) * 1000), "endedBy": ended_by}
        if pending:
            record["pending"] = pending
        self.record = record
        return record

    def wait(self, deadline, debounce=False, peek=None):
        """Wait for what the dispatch caused; returns the evidence's settle record. A navigation
        the action started is settled as before (navigation(): its BPError passes). `peek`: a
        read to send with the first look (see _first_look, take_ahead)."""
        try:
            return self._wait(deadline, debounce, peek)
        finally:
            self._stop()

    def navigated(self):
        return self.record is not None and self.record["status"] == "navigated"

    def abandon(self):
        """Disarm without waiting (the action failed before dispatch, or armed again)."""
        self.record = self.record or {"status": "quiet", "waitedMs": 0, "endedBy": "nothing_caused"}
        self.drop_ahead()
        self._stop()

    def _wait(self, deadline, debounce, peek):
        self.started = time.monotonic()  # waitedMs counts from the end of the dispatch
        # The first look is one round trip through the renderer (and one task turn of the page):
        # every event the input caused is here after it, a navigation's start included.
        state, ahead = self._first_look(peek, self._first_wait_ms(deadline)) if self.tracker is not None \
            else (None, None)
        if ahead is not None:
            try:
                record = self._settle(deadline, debounce, state)
            except BaseException:
                ahead.drop()
                raise
            # What was read behind the first look is the page after the action only if nothing
            # changed after it: the settle ended in that same awaited call with no DOM or focus
            # change since its first look, and the page had no render pending (a posted message is
            # one more task turn before the first look, which the read may have overtaken).
            if record["status"] in ("quiet", "settled") and not self.waited and state \
                    and state.get("posted") is False and state.get("changed") is False:
                self.ahead = ahead
            else:
                ahead.drop()
            return record
        return self._settle(deadline, debounce, state)

    def _settle(self, deadline, debounce, state):
        session, requests = self.session, self.requests
        first_look = time.monotonic()  # frames sent before this are the dispatch's own
        if navigation(session, self.since, deadline, self.loader, round_trip=state is None):
            return self._done("navigated", "navigation")
        if session.dialog_open():
            return self._done("settled", "dialog")
        state = state or {}
        end = min(self.started + self.max_s, deadline - OBSERVE_RESERVE_S)
        grace_until = time.monotonic() + DEBOUNCE_GRACE_S if debounce and state.get("debounced") else None
        caused = False
        answered, mutations_at_frame = 0, None  # sent WebSocket frames answered by a DOM change so far
        while True:
            now = time.monotonic()
            if self._navigation_started() and navigation(session, self.since, deadline, self.loader):
                return self._done("navigated", "navigation")
            if session.dialog_open():
                return self._done("settled", "dialog")
            awaited, overdue = requests.pending(now) if requests else ([], [])
            mutations = state.get("mutations", 0)
            if "mutations" in state:
                self.mutations = mutations
            timers = state.get("timers", 0) + state.get("frames", 0)
            answers = state.get("answers", 0)  # caused requests the page has not handled yet
            motion = state.get("motion", 0)
            frames = list(requests.frames) if requests else []
            if any(f > first_look for f in frames):
                frames = []  # the page sends on its own (a heartbeat, a ticker): not the action's answer
            if len(frames) > answered:
                if mutations_at_frame is None:
                    mutations_at_frame = mutations
                elif mutations > mutations_at_frame:  # the page changed after the frame: its answer
                    answered, mutations_at_frame = len(frames), None
            unanswered = [f for f in frames[answered:] if now - f < WS_ANSWER_S]
            if mutations or timers or motion or answers or awaited or overdue or frames or (requests and requests.started):
                caused = True
            in_grace = grace_until is not None and now < grace_until and not caused
            # The page said its DOM is done: a frame drawn with no change since the last look, or
            # (few frames: a tab behind another; or a hidden one, polled) the quiet window.
            ended_by = state.get("endedBy")
            if ended_by is None and mutations and state.get("quietMs", 0) >= QUIET_S * 1000:
                ended_by = "quiet_window"
            quiet = not mutations or ended_by in ("turn", "frame", "frame_time", "quiet_window")
            broker_side = awaited or unanswered or in_grace  # what only the broker sees
            if not (broker_side or timers or motion or answers) and quiet:
                if overdue:
                    return self._done("capped", "cap", _pending(overdue, requests))
                if self.after_load and not self.waited:
                    caused = False  # the load's own requests, all done by the first look: nothing to wait for
                if not caused:
                    return self._done("quiet", "nothing_caused")
                return self._done("settled", ended_by if mutations else "nothing_pending")
            if now >= end:
                return self._done("capped", "cap", _pending(awaited + overdue, requests, timers=timers,
                                                            frames=len(unanswered), dom=not quiet, motion=motion))
            left_ms = max(1.0, (end - now) * 1000)
            if broker_side or state.get("hidden") or "endedBy" not in state and "ticks" not in state:
                # Requests, WebSocket frames or a debounce grace the page cannot see, or a page
                # that does not push (hidden): look again after a short sleep.
                time.sleep(POLL_S)
                wait_ms = min(POLL_S * 1000, left_ms) if not state.get("hidden") else 0
            else:
                wait_ms = min(LOOK_MS, left_ms)  # the page answers when its own causes end
            self.waited = True
            polled = self._poll(wait_ms=wait_ms)
            if polled is None and session.loader == self.loader and not session.dialog_open():
                polled = state  # the tracker is gone (it could not start): requests alone decide
            state = polled or {}


def _pending(rows, requests, timers=0, frames=0, dom=False, motion=0):
    """What was still pending when the settle stopped: counts and a few redacted URLs."""
    counts = {"requests": len(rows), "timers": timers, "webSocketFrames": frames, "animations": motion}
    out: dict[str, object] = {name: count for name, count in counts.items() if count}
    if rows:
        out["urls"] = [redacted_url(url) for _, url in rows[:PENDING_URLS]]
    if dom:
        out["domChanging"] = True
    if requests is not None and requests.ignored and out:
        out["longLived"] = requests.ignored  # WebSocket / EventSource / beacons: never awaited
    return out


# --- bp open: the app's own requests after the load -----------------------------------------

LOAD_SETTLE_MAX_S = 3.0  # what `bp open` waits at most, after DOMContentLoaded, for an app's first answers


def heard_from_now(hub, raw):
    """The requests of tab `raw` from now on (started before a navigation, read after it), or None."""
    return Requests(hub, raw) if hub is not None else None


def after_load(session, raw, requests, deadline):
    """After `bp open`'s navigation is interactive: wait (at most LOAD_SETTLE_MAX_S) for the requests
    the navigation started (an app's data fetches; long-lived ones and long polls are not awaited)
    and for the DOM to be quiet — the same rule as an action's settle, from the load on."""
    settle = Settle(session, raw, grace=False, requests=requests, max_s=LOAD_SETTLE_MAX_S)
    return settle.wait(deadline)


# --- one rule for every acting command (broker/actions/pipeline.py brackets each with these) --

def begin(session, raw=None, overlap=False):
    """Arm the settle of the action about to dispatch on `session` (replacing one armed earlier,
    whose dispatch had not started: the marks of the action's own checks are not its causes).
    With `overlap`, the arm is only sent: the caller's next scripts overlap its round trip, and it
    calls armed() before its input."""
    previous = getattr(session, "settling", None)
    if previous is not None and previous.record is None:
        previous.abandon()
    session.settling = Settle(session, raw)
    if not overlap:
        session.settling.armed()
    return session.settling


def end(session, deadline, debounce=False, peek=None):
    """Wait for what the action armed with begin() caused; the record (the same on a second call).
    Without an armed settle (a caller outside the pipeline), only a navigation is waited for.
    `peek`: a read sent with the first look (Settle.take_ahead)."""
    armed = getattr(session, "settling", None)
    if armed is None:
        navigated = navigation(session, session.mark(), deadline)
        return {"status": "navigated" if navigated else "quiet", "waitedMs": 0,
                "endedBy": "navigation" if navigated else "nothing_caused"}
    if armed.record is None:
        record = session.command() if phases.ON else None  # (the step-budget benchmark's marks)
        phases.mark(record, "settle")
        try:
            return armed.wait(deadline, debounce, peek)
        finally:
            phases.mark(record, "settled")
    return armed.record


def finish(session, evidence):
    """The settle's word in the evidence: `settle`, and never "no change" while something the
    action caused was still pending when it stopped (the Agent waits with `bp wait --idle`)."""
    armed = getattr(session, "settling", None)
    session.settling = None
    if armed is not None:
        armed.drop_ahead()  # a read sent ahead that the action did not take
    if armed is None or armed.record is None or not isinstance(evidence, dict):
        return evidence
    evidence["settle"] = armed.record
    if armed.record["status"] == "capped" and evidence.get("reason") in ("no_observable_effect", "coordinate_target") \
            and evidence.get("status") == "unavailable":
        evidence["reason"] = "answer_pending"
    return evidence
