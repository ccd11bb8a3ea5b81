"""`bp wait`: poll one browser-visible condition of the selected tab until it holds or the
command's deadline (the global --timeout) passes.

The loop runs on the request thread and never holds the tab's worker: each --text/--selector
probe is one short task on the worker (so other commands of the tab, and dialog answers, still
run between probes); --url, --popup, --dialog and --download read the target table and the tab
session's event buffer without queueing at all. Waiting never creates a tab.

Conditions:
- url: the tab's main-frame URL matches PATTERN, a glob where `*` is any run of characters
  (nothing else is special), case-insensitive, over the WHOLE URL (`*example.com/docs*` for
  "contains"). Already true at the start counts. Matched: the tab as `bp tabs` shows it
  `{title, url, origin, profileContextId}`.
- text: `bp search TEXT --limit 1` finds a match a person can see (with --hidden: any match; rendered text, open shadow roots, same-origin
  frames; case-insensitive; whitespace-insensitive) in the Agent's selected frame.
- selector: `bp find CSS --limit 1` finds an element that is visible (a box, not transparent or
  hidden); with --hidden, any element present in the DOM.
- dialog: a JavaScript dialog is pending on the tab (already open counts); matched: the dialog
  as `bp dialogs` lists it.
- popup: a tab opened by this tab that this Agent has not been shown yet (`bp tabs`, an earlier
  wait): acting first and then waiting does not race. Matched: `{title, url, origin,
  profileContextId}` plus its `index` and `targetId` for `bp tab`. It matches once the popup's
  first navigation has committed and its title is read (so url and title are the popup's own),
  or after POPUP_BLANK_S of a popup that stays blank or untitled.
- idle (our addition, issue 25): no request of the tab pending and no DOM change (top document
  and same-origin frames) for IDLE_S — for answers no action caused (an app's own fetches after
  load). WebSocket, EventSource, beacons and requests open longer than the settle's bound (long
  polls) are not waited for; matched says how many such were left: `{url, title, quietMs,
  longLived?}`. A page that never stops changing (a clock) is not idle: it times out.
- download: a download the tab began that no earlier wait of this Agent reported (its begin is
  looked for in the tab session's bounded event buffer), once Chrome finished it and Browser
  Pilot copied it: matched is its `bp downloads` row. A download that ends otherwise (canceled,
  failed, its copy refused) ends the wait too, with that row's `state` and `reason`.
"""

import threading
import time
import weakref

from bp import globs
from bp.errors import BPError
from broker.page import content
from broker.policy import bounds
from broker.tabs import routing
from broker.tabs.session import session_for
from broker.browser.targets import eligible

CONDITIONS = ("url", "text", "selector", "dialog", "download", "popup", "idle")
DEFAULT_INTERVAL_MS = 250
SLICE_S = 0.05  # how often the loop looks at cancellation and the deadline between probes
PROBE_S = 5.0  # at most this long per in-page probe (queued behind the tab's commands included)
# Probe failures that mean "not yet" (a document being replaced, a dialog blocking the page, a
# tab busy past one probe's budget); anything else ends the wait with that error.
TRANSIENT = frozenset({"internal_error", "action_not_verified", "unknown_outcome", "command_expired"})


def url_matcher(pattern):
    """A case-insensitive full-match glob where only `*` is special, in linear time."""
    return globs.matcher(pattern, "url")


def _cancelled(request):
    if getattr(request, "cancelled", lambda: False)():
        raise BPError("command_cancelled", "The wait was cancelled.", context={"commandId": request.command_id})


class Probe:
    def __init__(self, broker, agent, raw, request, hub, downloads):
        self.broker = broker
        self.agent = agent
        self.raw = raw
        self.request = request
        # The broker's services this wait uses, handed by its handler (broker/commands/waits.py):
        # the network hub (requests, for --idle) and the download tracker (--download).
        self.hub, self.downloads = hub, downloads

    def start(self):
        pass

    def poll(self):
        """The matched facts, or None."""
        raise NotImplementedError

    def idle(self, seconds):
        """Wait up to `seconds`; True when something happened that is worth probing now."""
        time.sleep(seconds)
        return False


TAB_FIELDS = ("title", "url", "origin", "profileContextId")


def tab_row(broker, agent, raw):
    """The tab as `bp tabs` shows it (title read back from Chrome), or None once it is gone."""
    for candidate, row in routing.inventory(broker, agent, fresh_titles=True):
        if candidate == raw:
            return row
    return None


class UrlProbe(Probe):
    def start(self):
        self.match = url_matcher(self.request.args["url"])

    def poll(self):
        info = self.broker.browser.targets.info(self.raw) or {}
        if not self.match(info.get("url") or ""):
            return None
        row = tab_row(self.broker, self.agent, self.raw)
        if row is None or not self.match(row["url"]):
            return None  # gone, or navigated on meanwhile
        bounds.check_shown(self.broker.policy, self.request.op, row["url"])
        return {k: row[k] for k in TAB_FIELDS}


class PageProbe(Probe):
    """--text / --selector: one bounded content.search / content.find on the tab's worker per probe."""

    def poll(self):
        broker, agent, raw, args = self.broker, self.agent, self.raw, self.request.args
        budget = min(PROBE_S, self.request.remaining())
        if budget <= 0:
            return None
        deadline = time.monotonic() + budget

        def run(worker):
            session = session_for(worker, broker.browser)
            if session.dialog_open():
                return None  # the page is blocked: nothing can appear until it is answered
            visible_only = not args.get("hidden")
            if "text" in args:
                found = content.search(agent, raw, session, {"query": args["text"], "limit": 1,
                                                          "visibleOnly": visible_only}, deadline)
                first, listed = "match", "matches"
            else:
                found = content.find(agent, raw, session, {"selector": args["selector"], "limit": 1,
                                                        "visibleOnly": visible_only}, deadline)
                first, listed = "element", "elements"
            bounds.check_shown(broker.policy, self.request.op, found.get("url"))
            if found["totalMatches"] and found[listed]:
                return {"url": found["url"], "title": found["title"], "totalMatches": found["totalMatches"],
                        first: found[listed][0]}
            return None

        try:
            return broker.workers.run(raw, run, timeout_s=budget, record=self.request.record)
        except BPError as exc:
            if exc.code in TRANSIENT:
                return None
            raise


def _ensure_session(broker, raw, request):
    """The tab's session (events are only seen on an attached tab): the existing one, else
    attached by the tab's worker."""
    session = broker.workers.session(raw)
    if session is None:
        session = broker.workers.run(raw, lambda worker: session_for(worker, broker.browser),
                                     timeout_s=max(0.1, min(PROBE_S * 2, request.remaining())), record=request.record)
    return session


class DialogProbe(Probe):
    def start(self):
        _ensure_session(self.broker, self.raw, self.request)

    def poll(self):
        session = self.broker.workers.session(self.raw)
        dialog = session.dialog if session is not None else None
        if dialog is None or not dialog.get("id"):
            return None
        from broker.tabs import dialogs

        return dialogs.public(self.agent, self.raw, dialog)  # as `bp dialogs` lists it, message included

    def idle(self, seconds):
        session = self.broker.workers.session(self.raw)
        if session is None:
            time.sleep(seconds)
            return False
        return session.wait_for(lambda m, p: m == "Page.javascriptDialogOpening", session.mark(), seconds) is not None


_download_cursors = weakref.WeakKeyDictionary()  # TabSession -> {agent key: seq of the last download reported}
_cursor_lock = threading.Lock()


class DownloadProbe(Probe):
    """Page.downloadWillBegin on the tab's session that this Agent has not been told about (by an
    earlier wait) — also one that began just before the wait, so acting and then waiting does
    not race — then that download's row in the Agent's downloads (broker/files/downloads.py) once it
    is no longer in progress. It counts as reported only then: a wait that timed out while the
    download ran leaves it to the next wait."""

    def start(self):
        self.session = _ensure_session(self.broker, self.raw, self.request)
        self.found = None  # (event seq, params) of the begin being followed

    def _session(self):
        current = self.broker.workers.session(self.raw)
        if current is not None and current is not self.session:
            self.session, self.found = current, None  # a re-attached tab: its new session's events
        return self.session

    def poll(self):
        if self.found is None:
            self.idle(0)
        if self.found is None:
            return None
        seq, params = self.found
        record = self.downloads.by_guid(self.agent, params.get("guid"))
        if record is None:
            return None  # not (yet) this Agent's download
        row = record.row()
        if row["state"] in ("in_progress", "copying"):
            return None
        with _cursor_lock:
            cursors = _download_cursors.setdefault(self.session, {})
            cursors[self.agent.key] = max(cursors.get(self.agent.key, 0), seq)
            cursors[(self.agent.key, "guid")] = params.get("guid")
        return row

    def idle(self, seconds):
        session = self._session()
        if self.found is not None or not session.alive:
            time.sleep(seconds)  # the download's progress is polled (poll), not its events
            return False
        with _cursor_lock:
            cursors = _download_cursors.setdefault(session, {})
        since = cursors.get(self.agent.key, 0)
        reported = cursors.get((self.agent.key, "guid"))
        # Chrome may announce one download twice (Page. and Browser.downloadWillBegin): one is reported.
        event = session.next_event(lambda m, p: m in ("Page.downloadWillBegin", "Browser.downloadWillBegin")
                                   and not (reported and p.get("guid") == reported), since, seconds)
        if event is None:
            return False
        self.found = (event[0], event[2])
        return True


POPUP_BLANK_S = 2.0  # a popup still at about:blank (or untitled) this long is reported as it is


class PopupProbe(Probe):
    """A tab whose opener is this tab and that this Agent has not been shown yet (by 'bp tabs',
    an earlier wait…): one that opened just before the wait counts too."""

    def _popups(self):
        targets = self.broker.browser.targets
        with targets.lock:
            return {t: dict(i) for t, i in targets.infos.items() if i.get("openerId") == self.raw}

    def start(self):
        self.seen = {raw for raw in self._popups() if self.agent.opaque_of(raw) is not None}
        self.first_seen = {}  # popup -> when it was first seen not yet committed or untitled

    def _committed(self, raw, info, row=None):
        """The popup's first navigation has committed (its url is its own, not the initial
        about:blank) and its title is read — or it stayed so for POPUP_BLANK_S (a popup that
        really is blank, a page without a title)."""
        first = self.first_seen.setdefault(raw, time.monotonic())
        if time.monotonic() - first >= POPUP_BLANK_S:
            return True
        url = (info.get("url") or "")
        if not url or url == "about:blank":
            return False
        return row is None or bool(row.get("title")) and row.get("title") != row.get("url")

    def poll(self):
        for raw, info in sorted(self._popups().items(), key=lambda row: row[1].get("seq", 0)):
            if raw not in self.seen and eligible(info):
                if not self._committed(raw, info):
                    continue
                row = tab_row(self.broker, self.agent, raw)  # shows it to this Agent (opaque id)
                if row is None or not self._committed(raw, info, row):
                    continue
                return {**{k: row[k] for k in TAB_FIELDS}, "index": row["index"], "targetId": row["targetId"]}
        return None


IDLE_S = 0.5  # nothing pending and no DOM change this long: the page is idle (Playwright's networkidle: 500 ms)


class IdleProbe(Probe):
    """Requests of the tab (the journal's entries open now, and those heard from the wait on)
    and the DOM change counter of broker/actions/settle.py, polled on the tab's worker."""

    def start(self):
        from broker.actions import settle

        self.settle = settle
        self.session = _ensure_session(self.broker, self.raw, self.request)
        self.requests = settle.Requests(self.hub, self.raw)
        self.earlier = self._open_entries()  # requests already open when the wait began
        self.tracker = self.loader = None
        self.idle_since = None

    def _open_entries(self):
        hub = self.hub
        state = hub.state(self.agent, create=False)
        if state is None:
            return []
        with hub.lock:
            entries = list(hub.materialized(state))
        tab = self.raw
        return [e for e in entries if not e.finished and (e.session.tab_raw_id or getattr(e.session, "raw_id", None)) == tab]

    def _pending(self):
        """(open requests awaited, long-lived ones not awaited)."""
        settle, hub, now = self.settle, self.hub, time.monotonic()
        awaited, overdue = self.requests.pending(now)
        state = hub.state(self.agent, create=False)
        with hub.lock:
            if state is not None:
                for entry in self.earlier:
                    hub._materialize(state, entry)  # its end may still be raw bytes
        self.earlier = [e for e in self.earlier if not e.finished]
        waited = [e for e in self.earlier if e.type not in settle.IGNORED_TYPES
                  and now - e.started_mono < settle.REQUEST_BOUND_S]
        return len(awaited) + len(waited), len(overdue) + len(self.earlier) - len(waited) + self.requests.ignored

    def _dom_quiet_ms(self):
        """Milliseconds since the last DOM change (since the tracker began, if none), or None."""
        settle, session = self.settle, self.session

        def run(worker):
            if session.dialog_open():
                return None
            if self.tracker is None or self.loader != session.loader:
                self.loader = session.loader
                reply = session.call("Runtime.evaluate", {
                    "expression": f"{settle.ARM}({settle.TIMER_MAX_MS}, {settle.FRAME_WAIT_MS}, {settle.TIMER_SLACK_MS})",
                    "silent": True}, timeout_s=PROBE_S)
                self.tracker = ((reply or {}).get("result") or {}).get("objectId")
                if self.tracker is None:
                    return None
                session.call("Runtime.callFunctionOn", {"objectId": self.tracker, "silent": True,
                                                        "functionDeclaration": "function () { this.disarm(); }"},
                             timeout_s=PROBE_S)
            reply = session.call("Runtime.callFunctionOn", {
                "objectId": self.tracker, "functionDeclaration": "function () { return this.poll(); }",
                "returnByValue": True, "silent": True}, timeout_s=PROBE_S)
            value = ((reply or {}).get("result") or {}).get("value")
            if value is None:
                self.tracker = None
                return None
            return value.get("quietMs", 0)

        try:
            return self.broker.workers.run(self.raw, run, timeout_s=min(PROBE_S, max(0.1, self.request.remaining())),
                                           record=self.request.record)
        except BPError as exc:
            if exc.code in TRANSIENT or exc.code == "target_crashed":
                self.tracker = None
                return None
            raise

    def poll(self):
        pending, longlived = self._pending()
        quiet_ms = self._dom_quiet_ms()
        now = time.monotonic()
        if pending or quiet_ms is None:
            self.idle_since = None  # the network must be idle for IDLE_S too, not just now
            return None
        if self.idle_since is None:
            self.idle_since = now
        if quiet_ms < IDLE_S * 1000 or now - self.idle_since < IDLE_S:
            return None
        session = self.session
        try:
            state = self.broker.workers.run(self.raw, lambda worker: session.page_state(),
                                            timeout_s=min(PROBE_S, max(0.1, self.request.remaining())),
                                            record=self.request.record)
        except BPError as exc:
            if exc.code in TRANSIENT:
                return None
            raise
        matched = {"url": state["url"], "title": state["title"], "quietMs": int(quiet_ms)}
        if longlived:
            matched["longLived"] = longlived
        return matched

    def idle(self, seconds):
        time.sleep(min(seconds, self.settle.POLL_S * 4))
        return True

    def stop(self):
        self.requests.close()
        if self.tracker is not None:
            try:
                self.session.send_nowait("Runtime.callFunctionOn", {
                    "objectId": self.tracker, "functionDeclaration": "function () { this.stop(); }"})
            except BPError:
                pass


PROBES = {"url": UrlProbe, "text": PageProbe, "selector": PageProbe, "dialog": DialogProbe,
          "download": DownloadProbe, "popup": PopupProbe, "idle": IdleProbe}


def wait(broker, request, *, hub, downloads):
    args = request.args
    condition = next(c for c in CONDITIONS if c in args)
    interval = args.get("interval", DEFAULT_INTERVAL_MS) / 1000.0
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request, create=False)  # never opens a tab
    generation = broker.browser.generation
    started = time.monotonic()
    probe = PROBES[condition](broker, agent, raw, request, hub, downloads)
    probe.start()
    try:
        return _loop(broker, request, condition, interval, raw, generation, started, probe)
    finally:
        getattr(probe, "stop", lambda: None)()


def _loop(broker, request, condition, interval, raw, generation, started, probe):
    next_probe = started
    while True:
        _cancelled(request)
        broker.browser.require()
        if broker.browser.generation != generation:
            raise BPError("browser_disconnected", "The browser connection changed during the wait.", retryable=True,
                          context={"condition": condition})
        if broker.browser.targets.info(raw) is None:
            raise BPError("target_not_owned", "The tab closed during the wait.",
                          context={"field": "target", "reason": "target_closed", "condition": condition})
        now = time.monotonic()
        if now >= next_probe:
            routing.check_tab(broker, raw, request.op)  # every probe: the tab may have left the bounds
            matched = probe.poll()
            if matched is not None:
                return {"condition": condition, "matched": matched,
                        "elapsedMs": int((time.monotonic() - started) * 1000), "timeoutMs": request.timeout_ms}
            next_probe = max(next_probe + interval, time.monotonic())
        remaining = request.remaining()
        if remaining <= 0:
            raise BPError("wait_timeout", f"The {condition} condition was not met within {request.timeout_ms} ms.",
                          retryable=True, context={"condition": condition, "timeoutMs": request.timeout_ms})
        if probe.idle(max(0.0, min(SLICE_S, next_probe - time.monotonic(), remaining))):
            next_probe = time.monotonic()
