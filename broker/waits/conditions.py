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
  profileContextId}` plus its `index` and `targetId` for `bp tab`.
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
from broker.page import content as page
from broker.tabs import routing
from broker.tabs.session import session_for
from broker.browser.targets import eligible

CONDITIONS = ("url", "text", "selector", "dialog", "download", "popup")
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
    def __init__(self, broker, agent, raw, request):
        self.broker = broker
        self.agent = agent
        self.raw = raw
        self.request = request

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
        return {k: row[k] for k in TAB_FIELDS}


class PageProbe(Probe):
    """--text / --selector: one bounded page.search / page.find on the tab's worker per probe."""

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
            if "text" in args:
                found = page.search(agent, raw, session, {"query": args["text"], "limit": 1,
                                                          "visibleOnly": not args.get("hidden")}, deadline)
                if found["totalMatches"] and found["matches"]:
                    return {"url": found["url"], "title": found["title"], "totalMatches": found["totalMatches"],
                            "match": found["matches"][0]}
                return None
            found = page.find(agent, raw, session, {"selector": args["selector"], "limit": 1,
                                                    "visibleOnly": not args.get("hidden")}, deadline)
            if found["totalMatches"] and found["elements"]:
                return {"url": found["url"], "title": found["title"], "totalMatches": found["totalMatches"],
                        "element": found["elements"][0]}
            return None

        try:
            return broker.browser.workers.run(raw, run, timeout_s=budget)
        except BPError as exc:
            if exc.code in TRANSIENT:
                return None
            raise


def _ensure_session(broker, raw, request):
    """The tab's session (events are only seen on an attached tab): the existing one, else
    attached by the tab's worker."""
    session = broker.browser.workers.session(raw)
    if session is None:
        session = broker.browser.workers.run(raw, lambda worker: session_for(worker, broker.browser),
                                             timeout_s=max(0.1, min(PROBE_S * 2, request.remaining())))
    return session


class DialogProbe(Probe):
    def start(self):
        _ensure_session(self.broker, self.raw, self.request)

    def poll(self):
        session = self.broker.browser.workers.session(self.raw)
        dialog = session.dialog if session is not None else None
        if dialog is None or not dialog.get("id"):
            return None
        from broker.waits import dialogs

        return dialogs.public(self.agent, self.raw, dialog)  # as `bp dialogs` lists it, message included

    def idle(self, seconds):
        session = self.broker.browser.workers.session(self.raw)
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
        current = self.broker.browser.workers.session(self.raw)
        if current is not None and current is not self.session:
            self.session, self.found = current, None  # a re-attached tab: its new session's events
        return self.session

    def poll(self):
        if self.found is None:
            self.idle(0)
        if self.found is None:
            return None
        seq, params = self.found
        record = self.broker.download_tracker.by_guid(self.agent, params.get("guid"))
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


class PopupProbe(Probe):
    """A tab whose opener is this tab and that this Agent has not been shown yet (by 'bp tabs',
    an earlier wait…): one that opened just before the wait counts too."""

    def _popups(self):
        targets = self.broker.browser.targets
        with targets.lock:
            return {t: dict(i) for t, i in targets.infos.items() if i.get("openerId") == self.raw}

    def start(self):
        self.seen = {raw for raw in self._popups() if raw in self.agent.opaque}

    def poll(self):
        for raw, info in sorted(self._popups().items(), key=lambda row: row[1].get("seq", 0)):
            if raw not in self.seen and eligible(info):
                row = tab_row(self.broker, self.agent, raw)  # shows it to this Agent (opaque id)
                if row is None:
                    continue
                return {**{k: row[k] for k in TAB_FIELDS}, "index": row["index"], "targetId": row["targetId"]}
        return None


PROBES = {"url": UrlProbe, "text": PageProbe, "selector": PageProbe, "dialog": DialogProbe,
          "download": DownloadProbe, "popup": PopupProbe}


def wait(broker, request):
    args = request.args
    condition = next(c for c in CONDITIONS if c in args)
    interval = args.get("interval", DEFAULT_INTERVAL_MS) / 1000.0
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request, create=False)  # never opens a tab
    generation = broker.browser.generation
    started = time.monotonic()
    probe = PROBES[condition](broker, agent, raw, request)
    probe.start()
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
