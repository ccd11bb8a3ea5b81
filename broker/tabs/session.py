"""Per physical tab: one named worker thread (commands run in arrival order) and its CDP session.

Commands on one tab are serial; commands on different tabs run concurrently. A worker is stopped
by a sentinel when its tab goes away or the browser generation ends.
"""

import collections
import logging
import os
import queue
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, cast, overload

from bp.errors import BPError, browser_unresponsive, disconnected, invalid_argument, target_crashed
from broker.browser.connection import Abort, BrowserConnection, CDPError, Reply, Started
from broker.records import phases, store

if TYPE_CHECKING:
    from broker.browser.targets import Targets

log = logging.getLogger("broker.tabs")

MAX_WORKERS = 4096
_STOP = object()
EVENT_BUFFER = 512
LOAD_GRACE_S = 3.0
# Cross-origin iframes live in other renderer processes (OOPIFs) with their own CDP sessions:
# attach to them automatically, flattened onto the same WebSocket, and to nothing else. A new
# one waits until its session's hooks have sent what they need (the network hub's Fetch
# interception: the person's bounds, the Agent's rules) and is resumed right after, so that
# none of its requests comes first (measured: a Fetch.enable sent to a frame already running
# does not survive its first commit). Only under the person's navigation bounds
# (Targets.pause_frames): otherwise nothing needs the pause.
AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True,
               "filter": [{"type": "iframe", "exclude": False}]}
MAX_FRAME_SESSIONS = 256
MAX_DIALOG_TEXT = 4096
# A tab whose renderer crashed answers nothing (calls wait forever); these still make sense on it:
# a navigation starts a new renderer (Chrome announces Inspector.targetReloadedAfterCrash).
CRASH_SAFE = frozenset({"Page.navigate", "Page.reload", "Page.stopLoading", "Runtime.releaseObjectGroup"})
PROBE_S = 2.0  # how long a renderer gets to answer a trivial call before it counts as silent


def dialog_record(params):
    """A pending JavaScript dialog as Browser Pilot keeps it (broker/tabs/dialogs.py lists it,
    broker/waits/dialog_answer.py answers it): an opaque id, bounded page text, when it opened.
    Never answered automatically."""
    kind = params.get("type")
    record = {"id": "dialog-" + os.urandom(6).hex(), "type": kind,
              "message": str(params.get("message") or "")[:MAX_DIALOG_TEXT],
              "url": str(params.get("url") or "")[:8192], "openedAt": int(time.time() * 1000),
              "opened": time.monotonic(), "hinted": set(), "hasBrowserHandler": params.get("hasBrowserHandler")}
    if kind == "prompt":
        record["defaultPrompt"] = str(params.get("defaultPrompt") or "")[:MAX_DIALOG_TEXT]
    return record



def auto_attach(targets):
    if not targets.pause_frames:
        return AUTO_ATTACH
    # With the pause on, Chromium holds a new dedicated worker until a debugger lets it go,
    # attached or not (measured, Chromium 156: a page's worker never ran under the bounds); so
    # workers are attached too, given what the bounds need, and let go (FrameSessions._worker).
    return dict(AUTO_ATTACH, waitForDebuggerOnStart=True, filter=AUTO_ATTACH["filter"] + [{"type": "worker",
                                                                                          "exclude": False}])

class Session:
    """What every session-like object Targets routes events to is: a tab's (TabSession), an
    out-of-process iframe's (FrameSession), a popup guard's (broker/policy/bounds.py PopupGuard).
    Declared once, so that Targets, the network hub and the bounds read attributes instead of
    probing with hasattr/getattr."""

    session_id = None  # the flattened CDP session id
    raw_id = None  # the tab's target id (a tab's session, a popup guard); None on an iframe
    tab_raw_id = None  # an out-of-process iframe's tab; None on a tab's own session and a guard
    is_tab = False  # a TabSession: commands run on it, its events are buffered for waits
    guard = False  # a PopupGuard: Fetch (navigation bounds) only
    one_shot = False  # a guard that leaves once the first document is judged (PopupGuard)
    opener_raw = None  # the opener of a guarded popup (PopupGuard only)
    alive = True
    listeners = ()  # callables(session, method, params) -> True to consume (broker/network/journal.py)
    raw_network = None  # the journal's raw-event hook, shared by a tab's frames (broker/browser/targets.py)
    # The broker's services that serve this tab, handed to it by their session hooks: the network
    # hub (broker/network/journal.py Hub.attach: requests an action's settle awaits) and the
    # download tracker (broker/files/downloads.py Tracker.on_session: downloads an input began).
    network_hub = None
    downloads = None
    blocked_navigations = 0  # navigations the person's bounds stopped here (bounds; read by open and actions)
    blocked_origin = None  # where the last of them was going (bounds)
    blocked_requests = 0  # a page's own requests (subresources, frames) the bounds stopped here: not a navigation
    blocked_request_origin = None  # where the last of them was going
    outside_origin = None  # the origin of a committed main-frame document outside the bounds (bounds.committed)

    def call(self, method, params=None, timeout_s=30.0, abort=None):
        raise NotImplementedError

    def send_nowait(self, method, params=None):
        raise NotImplementedError

    def deliver(self, method, params):
        raise NotImplementedError

    def detached(self):
        raise NotImplementedError

    def sending(self, method):
        """Told each CDP method before it is sent: a tab's session marks its command dispatched
        (TabSession.sending); other sessions speak for no command."""


class FrameSessions(Session):
    """The out-of-process iframes attached under one session (a tab's or another iframe's).

    Runs on the janitor-relay thread (from deliver): bookkeeping and fire-and-forget sends only."""

    # Set by each subclass's __init__.
    conn: BrowserConnection
    targets: "Targets"
    frame_id: str | None  # the frame it renders: an OOPIF's own, a tab's main frame
    children: "dict[str, FrameSession]"

    # Per-feature state, declared here and owned by the feature named (nobody else sets it).
    fetch_state = None  # the Fetch interception sent to this session (broker/network/journal.py)
    socket_state = None  # the bounds' WebSocket conditions sent to it (broker/policy/bounds.py)
    fetch_refreshed = False  # an iframe's Fetch.enable sent again after its first commit (journal)
    runtime_enabled = False  # Runtime events on for the console journal (journal)
    settling = None  # the settle armed for the action running on this tab (broker/actions/settle.py)
    network_enabled = False  # Network events on for the request journal (journal)
    annotation_world = None  # (loader, context id) of the annotated screenshot's world (broker/files/media.py)
    listener_nodes = None  # (document, nodes marked as pointer-listener targets, kept objects): broker/observe/snapshot.py
    console_seen = 0  # console messages seen, for releasing their handles now and then (journal)

    _probe = None  # (document, context id) of the probe world

    def _probe_for(self, document, name):
        """The probe world's context, made once per `document` (without universal access)."""
        if self._probe is None or self._probe[0] != document:
            reply = self.call("Page.createIsolatedWorld", {"frameId": self.frame_id, "worldName": name,
                                                           "grantUniveralAccess": False})
            self._probe = (document, reply["executionContextId"])
        return self._probe[1]

    def _init_children(self):
        self.children = {}  # CDP session id -> FrameSession

    def _child_event(self, method, params):
        if method == "Target.attachedToTarget":
            info = params.get("targetInfo") or {}
            if info.get("type") == "worker" and params.get("sessionId"):
                self._worker(params["sessionId"], params.get("waitingForDebugger"))
                return
            if info.get("type") != "iframe" or len(self.children) >= MAX_FRAME_SESSIONS:
                if params.get("waitingForDebugger") and params.get("sessionId"):
                    try:  # not ours to follow: it must not stay paused
                        self.conn.send_nowait("Runtime.runIfWaitingForDebugger", None, session_id=params["sessionId"])
                        self.conn.send_nowait("Target.detachFromTarget", {"sessionId": params["sessionId"]})
                    except BPError:
                        pass
                return
            child = FrameSession(self.conn, self.targets, self, params.get("sessionId"), info.get("targetId"))
            child.parent_frame_id = info.get("parentFrameId")  # the frame whose document embeds it
            self.children[child.session_id] = child
            self.targets.sessions[child.session_id] = child
            hook = self.targets.on_frame_session
            try:
                if hook is not None:
                    hook(child)  # network rules, bounds and journal follow into the frame's process
            finally:
                try:
                    # Nested OOPIFs (a third site inside the second) attach under the child.
                    self.conn.send_nowait("Target.setAutoAttach", auto_attach(self.targets), session_id=child.session_id)
                    if params.get("waitingForDebugger"):
                        self.conn.send_nowait("Runtime.runIfWaitingForDebugger", None, session_id=child.session_id)
                except BPError:
                    pass
        elif method == "Target.detachedFromTarget":
            child = self.children.pop(params.get("sessionId"), None)
            if child is not None:
                child.detached()

    def _worker(self, session_id, waiting):
        """A dedicated worker of this session's document (attached only under the bounds): the
        network hub gives it what the bounds need for its own sockets, then it runs. It stays
        attached (what was sent lasts as long as the session) and is otherwise left alone."""
        hook = self.targets.on_worker_session
        try:
            if hook is not None:
                hook(self, session_id)
        finally:
            if waiting:
                try:
                    self.conn.send_nowait("Runtime.runIfWaitingForDebugger", None, session_id=session_id)
                except BPError:
                    pass

    def _drop_children(self):
        for child in list(self.children.values()):
            child.detached()
        self.children.clear()

    def live_children(self):
        return [c for c in list(self.children.values()) if c.alive]


class Later:
    """A CDP call sent by TabSession.call_later: waited for once, or dropped."""

    def __init__(self, session, method, started):
        self.session, self.method, self.started = session, method, started

    def result(self, timeout_s=30.0, abort=None):
        started, self.started = self.started, None
        if started is None:
            raise RuntimeError("a call's answer is waited for once")
        return self.session.call(self.method, None, timeout_s, abort, started=started)

    def drop(self):
        if self.started is not None:
            self.session.conn.forget(self.started)
            self.started = None


class FrameSession(FrameSessions):
    """An out-of-process iframe's CDP session. Browser Pilot only reads and resolves refs in it
    (its isolated world); input always goes through the tab's own session."""

    def __init__(self, conn: BrowserConnection, targets: "Targets", parent: FrameSessions, session_id: str,
                 frame_id: str | None):
        self.conn = conn
        self.targets = targets
        self.parent = parent
        self.session_id = session_id
        self.frame_id = frame_id  # an OOPIF's target id is its frame id
        self.parent_frame_id: str | None = None
        self.alive = True
        self._world: int | None = None  # execution context id of Browser Pilot's isolated world
        # context ids of its worlds that keep the library (broker/observe/worlds.py)
        self.scripts_sent: set[int] = set()
        self._init_children()
        # Network/Fetch/console hooks of the tab (broker/network/journal.py): shared with the tab's session.
        self.listeners = parent.listeners
        self.raw_network = parent.raw_network
        self.tab_raw_id = parent.tab_raw_id or parent.raw_id
        # The tab's own session: a mutation sent here is its command's dispatch too.
        self.tab: FrameSessions = parent if parent.is_tab else cast(FrameSession, parent).tab

    @overload
    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0,
             abort: None = None) -> Reply: ...
    @overload
    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0,
             abort: Abort | None = None) -> Reply | None: ...
    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0,
             abort: Abort | None = None) -> Reply | None:
        if not self.alive:
            raise BPError("stale_ref", "The frame is gone.", context={"field": "ref", "reason": "frame_detached"})
        self.tab.sending(method)
        return self.conn.cdp(method, params, session_id=self.session_id, timeout_s=timeout_s, abort=abort)

    def send_nowait(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self.tab.sending(method)
        self.conn.send_nowait(method, params, session_id=self.session_id)

    def deliver(self, method, params):
        for listener in self.listeners:
            if listener(self, method, params):
                return
        if method.startswith("Target."):
            self._child_event(method, params)

    def detached(self):
        self.alive = False
        self.targets.sessions.pop(self.session_id, None)
        self._drop_children()

    def world(self, name):
        """Execution context id of Browser Pilot's isolated world in this frame's document. The
        frame's navigations are not tracked: a caller that finds the context gone forgets it."""
        if self._world is None:
            reply = self.call("Page.createIsolatedWorld", {"frameId": self.frame_id, "worldName": name,
                                                           "grantUniveralAccess": True})
            self._world = reply["executionContextId"]
        return self._world, None

    def forget_world(self):
        self._world = None

    def probe_world(self, name):
        """A second isolated world of this frame's document (see TabSession.probe_world); made
        again whenever Browser Pilot's own world had to be."""
        return self._probe_for(self._world, name)


class TabSession(FrameSessions):
    """A flattened CDP session attached to one tab; events for it arrive through Targets."""

    is_tab = True

    def __init__(self, conn: BrowserConnection, targets: "Targets", raw_id: str, timeout_s: float = 10.0,
                 worker: "TabWorker | None" = None):
        self.conn = conn
        self.raw_id = raw_id
        self.worker = worker  # the tab's worker (None: a session of the broker's own, profiles' identify)
        self.targets = targets
        self.listeners = []  # callables(session, method, params) -> True to consume (broker/network/journal.py)
        self._events = collections.deque(maxlen=EVENT_BUFFER)
        self._seq = 0
        self._cond = threading.Condition()
        self.alive = True
        self.frame_id = None  # main frame
        self.loader: str | None = None  # main frame's current loader: a new one means a new document
        self.dialog: dict[str, Any] | None = None  # an open JavaScript dialog blocks the page's scripts
        # (loader, execution context id) of Browser Pilot's isolated world
        self._world: tuple[str | None, int] | None = None
        self._frame_worlds: dict[str, int] = {}  # subframe id -> context id of our world there (same process)
        # context ids of its worlds that keep the library (broker/observe/worlds.py)
        self.scripts_sent: set[int] = set()
        self._init_children()
        reply = conn.cdp("Target.attachToTarget", {"targetId": raw_id, "flatten": True}, timeout_s=timeout_s)
        self.session_id = reply["sessionId"]
        targets.sessions[self.session_id] = self
        self.call("Page.enable", timeout_s=timeout_s)
        self.call("Inspector.enable", timeout_s=timeout_s)  # Inspector.targetCrashed / targetReloadedAfterCrash
        self.call("Page.setLifecycleEventsEnabled", {"enabled": True}, timeout_s=timeout_s)
        # Background tabs behave as focused (menus, focus events) without raising any window.
        self.call("Emulation.setFocusEmulationEnabled", {"enabled": True}, timeout_s=timeout_s)
        self.call("Target.setAutoAttach", auto_attach(self.targets), timeout_s=timeout_s)
        tree = self.call("Page.getFrameTree", timeout_s=timeout_s)["frameTree"]["frame"]
        if self.loader is None:
            self.frame_id, self.loader = tree["id"], tree.get("loaderId")

    # Without `abort` a reply always comes (or an error is raised): never None.
    @overload
    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0,
             abort: None = None, started: Started | None = None) -> Reply: ...
    @overload
    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0,
             abort: Abort | None = None, started: Started | None = None) -> Reply | None: ...
    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 30.0,
             abort: Abort | None = None, started: Started | None = None) -> Reply | None:
        """One CDP call on the tab. On a crashed or silent renderer it fails at once with
        target_crashed, and a call in flight when the renderer crashes stops waiting. `started`:
        the call was sent by call_later(), only its reply is waited for."""
        if phases.ON:  # the step-budget benchmark counts the command's CDP waits
            waited_from = time.perf_counter()
            try:
                return self._call(method, params, timeout_s, abort, started)
            finally:
                phases.cdp(self.command(), waited_from, method)
        return self._call(method, params, timeout_s, abort, started)

    def _call(self, method: str, params: Mapping[str, Any] | None, timeout_s: float, abort: Abort | None,
              started: Started | None) -> Reply | None:
        if not self.alive:
            if started is not None:
                self.conn.forget(started)
            raise BPError("target_not_owned", "The tab is gone.", context={"reason": "target_detached"})
        if started is None:
            if method not in CRASH_SAFE:
                self.check_answers()
            self.sending(method)
        if method in CRASH_SAFE:
            return self.conn.cdp(method, params, session_id=self.session_id, timeout_s=timeout_s, abort=abort,
                                 started=started)
        crashed = self.targets.crashed
        stop = (lambda: self.raw_id in crashed or abort()) if abort else (lambda: self.raw_id in crashed)
        try:
            reply = self.conn.cdp(method, params, session_id=self.session_id, timeout_s=timeout_s, abort=stop,
                                  started=started)
        except BPError as exc:
            if exc.code == "unknown_outcome" and (exc.context or {}).get("method") == method and not self.dialog_open() \
                    and not self.answers():
                if not self.browser_answers():
                    # The browser itself is silent (paused, suspended): not this tab's fault.
                    raise browser_unresponsive(method=method) from None
                if not self.answers():  # the browser may only just have resumed: one more chance
                    # Not a slow answer: the renderer answers nothing at all (a hung main thread).
                    self.targets.mark_crashed(self.raw_id, "unresponsive")
                    raise target_crashed("unresponsive", method=method) from None
            raise
        if reply is None and (abort is None or not abort()):
            state = self.targets.crash_state(self.raw_id) or {"reason": "renderer_crashed"}
            raise target_crashed(state["reason"], method=method)
        return reply

    def call_later(self, method, params=None):
        """Send a CDP call now; its answer is `later.result(timeout_s, abort)` (call()'s rules), or
        `later.drop()` when nobody will wait for it. Lets a round trip overlap the next sends."""
        if not self.alive:
            raise BPError("target_not_owned", "The tab is gone.", context={"reason": "target_detached"})
        self.check_answers()
        self.sending(method)
        return Later(self, method, self.conn.cdp_start(method, params, session_id=self.session_id))

    def answers(self):
        """Whether the renderer answers a trivial call within PROBE_S; clears a silence mark."""
        crashed = self.targets.crashed

        def dead():
            known = crashed.get(self.raw_id)
            return known is not None and known["reason"] == "renderer_crashed"

        try:
            reply = self.conn.cdp("Runtime.evaluate", {"expression": "0"}, session_id=self.session_id,
                                  timeout_s=PROBE_S, abort=dead)
        except BPError:
            return False
        if reply is None or dead():
            return False
        self.targets.clear_crashed(self.raw_id, "unresponsive")
        return True

    def browser_answers(self):
        """Whether the browser process itself answers a browser-level call within PROBE_S. A
        connection found lost meanwhile (a killed browser: the janitor saw its socket close) is
        browser_disconnected, never a silent browser."""
        try:
            answered = self.conn.cdp("Browser.getVersion", None, timeout_s=PROBE_S) is not None
        except BPError as exc:
            if exc.code == "browser_disconnected":
                raise
            answered = False
        if not answered and not self.conn.alive:
            raise disconnected("The browser connection was lost.")
        return answered

    def check_answers(self):
        """target_crashed if the tab is marked crashed, or marked silent and still silent
        (browser_unresponsive when the whole browser is the silent one)."""
        state = self.targets.crash_state(self.raw_id)
        if state is not None and (state["reason"] != "unresponsive" or not self.answers()):
            if state["reason"] == "unresponsive" and not self.browser_answers():
                raise browser_unresponsive()
            raise target_crashed(state["reason"])

    def send_nowait(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self.sending(method)
        self.conn.send_nowait(method, params, session_id=self.session_id)

    # --- the command this tab works for ----------------------------------------------------------

    def command(self) -> "store.Record | None":
        """The record of the command the tab's worker runs, when asked from that worker (a dialog
        answer or a wait's reader on another thread speaks for its own command, not this one)."""
        worker = self.worker
        if worker is None or threading.current_thread() is not worker.thread:
            return None
        return worker.record

    def dispatching(self) -> None:
        """What the command sends next may change the page: from here on its outcome is unknown
        (store.Record.dispatching; it refuses when the command may no longer reach the browser)."""
        record = self.command()
        if record is not None:
            record.dispatching()

    def sending(self, method: str) -> None:
        """Before a CDP method is sent for the command: a mutating one is its dispatch."""
        if method in store.MUTATING_CDP:
            self.dispatching()

    def dialog_open(self):
        return self.dialog is not None

    def dialog_brief(self):
        """What an action or navigation that opened a dialog reports about it."""
        dialog = self.dialog or {}
        out = {"type": dialog.get("type")}
        if dialog.get("id"):
            out["dialogId"] = dialog["id"]
        if "message" in dialog:
            out["message"] = dialog["message"]  # what the Agent is asked to confirm (page text, bounded)
        return out

    def dialog_context(self):
        """Error context for a command the open dialog stops: how to find and answer it."""
        dialog = self.dialog or {}
        context = {"reason": "dialog_open", "dialogType": dialog.get("type")}
        if dialog.get("id"):
            context["dialogId"] = dialog["id"]
        return context

    def deliver(self, method, params):
        for listener in self.listeners:
            if listener(self, method, params):
                return  # consumed (network, fetch, console events): kept out of the event buffer
        if method.startswith("Target."):
            self._child_event(method, params)
        elif method == "Page.frameNavigated":
            frame = params.get("frame") or {}
            if not frame.get("parentId"):
                self.frame_id, self.loader, self._world = frame.get("id"), frame.get("loaderId"), None
                self.targets.clear_crashed(self.raw_id, "unresponsive")
        elif method == "Inspector.targetCrashed":
            self.targets.mark_crashed(self.raw_id, "renderer_crashed")
        elif method == "Inspector.targetReloadedAfterCrash":
            self.targets.clear_crashed(self.raw_id)
        elif method == "Page.javascriptDialogOpening":
            self.dialog = dialog_record(params)
        elif method == "Page.javascriptDialogClosed":
            self.dialog = None
        with self._cond:
            self._seq += 1
            self._events.append((self._seq, method, params))
            self._cond.notify_all()

    def detached(self):
        with self._cond:
            self.alive = False
            self._cond.notify_all()
        self._drop_children()

    def mark(self):
        with self._cond:
            return self._seq

    def wait_for(self, predicate, since, timeout_s):
        """The first event after `since` for which predicate(method, params) is true, or None."""
        found = self.next_event(predicate, since, timeout_s)
        return found[1:] if found is not None else None

    def next_event(self, predicate, since, timeout_s):
        """Like wait_for, as (seq, method, params): seq is a cursor for the next call."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for seq, method, params in self._events:
                    if seq > since and predicate(method, params):
                        return seq, method, params
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.alive:
                    return None
                state = self.targets.crash_state(self.raw_id)
                if state is not None and state["reason"] == "renderer_crashed":
                    raise target_crashed(state["reason"])  # no event will ever come from this renderer
                self._cond.wait(remaining)

    def world(self, name):
        """(execution context id, loader) of Browser Pilot's isolated world in the current
        main-frame document, created once per document."""
        world = self._world
        if world is None or world[0] != self.loader:
            loader = self.loader
            # Universal access lets the walker enter cross-origin frames that share the page's
            # process; page scripts still cannot see or reach this world.
            reply = self.call("Page.createIsolatedWorld", {"frameId": self.frame_id, "worldName": name,
                                                           "grantUniveralAccess": True})
            world = self._world = (loader, reply["executionContextId"])
        return world[1], world[0]

    def forget_world(self):
        self._world = None
        self._frame_worlds = {}

    def probe_world(self, name):
        """A second isolated world of the current main document, for resolving Chrome's node ids
        (broker/observe/worlds.py node_paths) without touching Browser Pilot's own world."""
        return self._probe_for(self.loader, name)

    def frame_world(self, frame_id, name):
        """Execution context of Browser Pilot's isolated world in a subframe rendered by this
        tab's process, created once per frame document (a navigation of the main frame forgets
        them all; a context found gone is recreated)."""
        if self._world is None or self._world[0] != self.loader:
            self._frame_worlds = {}
        known = self._frame_worlds.get(frame_id)
        if known is not None:
            try:
                self.call("Runtime.evaluate", {"expression": "0", "contextId": known}, timeout_s=5.0)
                return known
            except BPError:
                pass
        reply = self.call("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": name,
                                                       "grantUniveralAccess": True})
        if len(self._frame_worlds) > 256:
            self._frame_worlds.clear()
        self._frame_worlds[frame_id] = reply["executionContextId"]
        return reply["executionContextId"]

    def evaluate(self, expression, timeout_s=10.0):
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, timeout_s=timeout_s)
        if reply.get("exceptionDetails"):
            raise BPError("internal_error", "A page script failed.")
        return (reply.get("result") or {}).get("value")

    def navigate(self, url, timeout_s):
        """Navigate and wait until the new document is interactive (DOMContentLoaded). A JavaScript
        dialog that opens meanwhile (the old page's beforeunload, an alert of the new one) ends the
        wait at once with {"dialog": True}: the page is blocked until someone answers it."""
        if self.dialog_open():
            raise BPError("action_not_verified", "A JavaScript dialog is open in this tab; answer it first ('bp dialogs').",
                          retryable=True, context=self.dialog_context())
        since = self.mark()
        # Page.navigate itself does not answer while a beforeunload dialog is pending.
        try:
            reply = self.call("Page.navigate", {"url": url}, timeout_s=timeout_s, abort=self.dialog_open)
        except CDPError as exc:
            if exc.invalid_url:  # the Agent's URL, not the service, is at fault
                raise invalid_argument("url", "The browser refuses this URL as invalid.") from None
            raise
        if reply is None:
            return {"dialog": True}
        if reply.get("errorText"):
            return {"navigationError": reply["errorText"][:200]}
        loader = reply.get("loaderId")
        if loader:
            done = self.wait_for(lambda m, p: m == "Page.javascriptDialogOpening" or (
                m == "Page.lifecycleEvent" and p.get("name") == "DOMContentLoaded" and p.get("loaderId") == loader),
                since, timeout_s)
            if done is None:
                raise BPError("unknown_outcome", "The navigation did not become interactive in time.",
                              context={"reason": "navigation_stalled"})
            # Frames and late resources: give the load event a short, bounded chance. A page
            # that never finishes loading is still observable once interactive.
            if done[0] != "Page.javascriptDialogOpening":
                done = self.wait_for(lambda m, p: m == "Page.javascriptDialogOpening" or (
                    m == "Page.lifecycleEvent" and p.get("name") == "load" and p.get("loaderId") == loader),
                    since, min(LOAD_GRACE_S, timeout_s))
            if self.dialog_open():
                return {"dialog": True}
        return {}

    def page_state(self):
        state = self.evaluate("[document.title, location.href]") or ["", ""]
        return {"title": (state[0] or "")[:4096], "url": (state[1] or "")[:8192]}

    def close(self):
        self.targets.sessions.pop(self.session_id, None)
        self.alive = False
        self._drop_children()


class TabWorker:
    def __init__(self, raw_id, name):
        self.raw_id = raw_id
        self.record: store.Record | None = None  # the command it runs now, handed over by Workers.run
        self.queue: queue.Queue[Any] = queue.Queue()  # (fn, future) pairs, then _STOP
        self.session: TabSession | None = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def submit(self, fn):
        future = Future()
        self.queue.put((fn, future))
        return future

    def stop(self):
        self.queue.put(_STOP)

    def _run(self):
        while True:
            item = self.queue.get()
            if item is _STOP:
                if self.session is not None:
                    self.session.close()
                return
            fn, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(self))
            except BaseException as exc:  # handed to the waiting request thread
                future.set_exception(exc)


class Workers:
    """One TabWorker per physical tab of the current generation."""

    def __init__(self):
        self._workers: dict[str, TabWorker] = {}
        self._lock = threading.Lock()
        self._names = 0

    def run(self, raw_id, fn, timeout_s, record=None):
        """Run fn(worker) on the tab's worker after the commands queued before it, for the command
        whose `record` it is (None: the broker's own work, or a command without a record)."""
        with self._lock:
            worker = self._workers.get(raw_id)
            if worker is None:
                if len(self._workers) >= MAX_WORKERS:
                    raise BPError("result_too_large", "Too many tabs in use.", retryable=True,
                                  context={"limit": "tabs", "max": MAX_WORKERS})
                self._names += 1
                worker = self._workers[raw_id] = TabWorker(raw_id, f"tab-{self._names}")

        def bound(worker):
            if record is not None and record.cancel_requested:
                raise BPError("command_cancelled", "The command was cancelled before it started.",
                              context={"commandId": record.id})
            worker.record = record  # the worker works for this command (its session's dispatch marks it)
            phases.mark(record, "worker")
            try:
                return fn(worker)
            finally:
                worker.record = None

        future = worker.submit(bound)
        deadline = time.monotonic() + timeout_s
        try:
            while record is not None and record.cancel_requested is False:
                # Wait in slices so that a cancel of a queued command takes effect at once.
                try:
                    return future.result(timeout=max(0.0, min(0.05, deadline - time.monotonic())))
                except FutureTimeout:
                    if time.monotonic() >= deadline:
                        raise
            if record is not None and future.cancel():
                raise BPError("command_cancelled", "The command was cancelled while it waited for the tab.",
                              context={"commandId": record.id})
            return future.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            queued = future.cancel()
            session = worker.session
            if session is not None and session.alive and not session.browser_answers():
                # Out of time because the whole browser is silent (paused, suspended), not the tab.
                raise browser_unresponsive(reason="deadline") from None
            if queued:
                raise BPError("command_expired", "The tab was busy with earlier commands past this command's deadline.",
                              retryable=True) from None
            raise BPError("unknown_outcome", "The command did not finish before its deadline.",
                          context={"reason": "deadline"}) from None

    def session(self, raw_id):
        """The live CDP session a tab's worker already has, or None. Never attaches one: for
        readers that must not queue behind the tab's commands (dialogs, waits)."""
        with self._lock:
            worker = self._workers.get(raw_id)
        session = worker.session if worker is not None else None
        return session if session is not None and session.alive else None

    def sessions(self):
        """[(raw id, live session)] of every worker that has one."""
        with self._lock:
            workers = list(self._workers.items())
        return [(raw, w.session) for raw, w in workers if w.session is not None and w.session.alive]

    def stop(self, raw_id):
        with self._lock:
            worker = self._workers.pop(raw_id, None)
        if worker:
            worker.stop()

    def stop_all(self):
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for worker in workers:
            worker.stop()


def session_for(worker, browser, crashed_ok=False):
    """The worker's CDP session, attached on first use (and again after a detach). A tab whose
    renderer crashed or went silent answers target_crashed at once, except to a command that
    may bring it back (`crashed_ok`: bp open)."""
    conn = browser.require()
    state = browser.targets.crash_state(worker.raw_id)
    if state is not None and not crashed_ok:
        session = worker.session
        if state["reason"] != "unresponsive" or session is None or not session.alive or session.conn is not conn:
            raise target_crashed(state["reason"])
        session.check_answers()
    if worker.session is None or not worker.session.alive or worker.session.conn is not conn:
        worker.session = TabSession(conn, browser.targets, worker.raw_id, worker=worker)
        _run_hooks(browser.session_hooks, worker.session)
    else:
        _run_hooks(browser.session_use_hooks, worker.session)
    return worker.session


def _run_hooks(hooks, session):
    """The features' hooks (registered by the broker, broker/server.py start_services): on the
    tab's worker, in order; one that fails is logged and never breaks the tab's command."""
    for hook in hooks:
        try:
            hook(session)
        except Exception:
            log.exception("a tab session hook failed: %s", getattr(hook, "__qualname__", hook))

