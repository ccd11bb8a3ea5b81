"""What the browser has open, learnt passively from Target events on the one WebSocket.

The table is per connection generation. Raw CDP target and context ids stay in here and in the
janitor; Agents only ever see opaque ids (broker/agents.py) and profile ids minted below.
"""

import logging
import re
import threading
import uuid
from typing import Any, cast

from bp import text
from bp.errors import BPError

log = logging.getLogger("broker.targets")

# Chrome ends an event of a session with its session id.
_SESSION_TAIL = re.compile(rb'"sessionId":"([0-9A-Za-z]{1,64})"\}\s*$')
Message = dict[str, Any]  # a CDP event as text.loads decodes it: always a JSON object
MAX_TARGETS = 4096
MAX_PROFILE_CONTEXTS = 128
EXCLUDED_SCHEMES = ("devtools:", "chrome:", "chrome-extension:", "chrome-untrusted:", "edge:", "edge-extension:",
                    "brave:", "vivaldi:", "chrome-search:", "extension:")


def eligible(info):
    """A page target an Agent may see: not DevTools, browser-internal or extension-owned."""
    if info.get("type") != "page":
        return False
    url = (info.get("url") or "").lower()
    if url.startswith(EXCLUDED_SCHEMES):
        return False
    if info.get("internal"):
        return False  # Browser Pilot's own temporary pages (profile identification)
    return True


class Targets:
    """Raw target table + per-session event routing for one browser connection."""

    def __init__(self):
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.infos = {}  # raw target id -> targetInfo (+ "seq", "internal")
        self._seq = 0
        self.sessions = {}  # CDP session id -> a Session (broker/tabs/session.py): tab, iframe, popup guard
        # With navigation bounds, out-of-process iframes start paused until their interception is
        # set (broker/policy/bounds.py). Only then: a page's dedicated worker was seen to stay
        # paused under a paused auto-attach (Material's search worker), so it is not the default.
        self.pause_frames = False
        self.on_frame_session = None  # callback(FrameSession) as an out-of-process iframe attaches (network hub)
        self.on_worker_session = None  # callback(parent session, worker's session id) (network hub)
        self.profile_ids = {}  # browserContextId -> (public id, label)
        self.internal = set()  # raw ids of Browser Pilot's temporary pages
        self.on_destroyed = []  # callbacks(raw id)
        self.on_download = None  # callback(method, params, raw tab id or None): broker/files/downloads.py
        self.on_attached = None  # callback(params) for browser-level auto-attach (broker/network/journal.py popup guard)
        self.overflow = False
        # Targets announced while the table was full: not listed anywhere (results say
        # `truncated`); a destroyed target the table does not know is taken to be one of them.
        self.untracked = 0
        # raw target id -> {"reason": "renderer_crashed" | "unresponsive", "at": ms}: tabs whose
        # renderer cannot answer; commands on them fail at once with target_crashed.
        self.crashed = {}

    # --- events (called on the janitor-relay thread: keep it short) ------------------------------

    def on_event(self, method, raw):
        # Page text (titles, URLs, console text) may hold lone surrogates: text.loads replaces them.
        if method is None:
            return
        if self.on_download is not None and (method.startswith("Browser.download") or method == "Page.downloadWillBegin"):
            message = cast(Message, text.loads(raw))
            session = self.sessions.get(message.get("sessionId")) if message.get("sessionId") else None
            self.on_download(method, message.get("params") or {}, session.raw_id if session is not None else None)
            if method == "Browser.downloadWillBegin":
                # Chrome announces a download at browser scope only: hand it to the tab whose main
                # frame began it, so input settling and `bp wait --download` see it in order.
                frame_id = (message.get("params") or {}).get("frameId")
                for tab in list(self.sessions.values()):
                    if tab.is_tab and tab.raw_id == frame_id:
                        tab.deliver(method, message.get("params") or {})
                        break
        if method == "Target.attachedToTarget" and self.on_attached is not None:
            message = cast(Message, text.loads(raw))
            if "sessionId" not in message:  # browser level: a new tab waiting for the popup guard
                self.on_attached(message.get("params") or {})
                return
            session = self.sessions.get(message.get("sessionId"))
            if session is not None:
                session.deliver(method, message.get("params") or {})
            return
        if method.startswith("Target.") and b'"sessionId"' not in raw[-160:]:
            message = cast(Message, text.loads(raw))
            self.apply(method, message.get("params") or {})
            return
        if b'"sessionId"' in raw[-160:]:
            if method.startswith("Network."):
                # A journaled tab's Network events: routed by their tail and head, parsed only
                # when the journal is read (broker/network/journal.py Hub.raw_event).
                found = _SESSION_TAIL.search(raw, max(0, len(raw) - 160))
                session = self.sessions.get(found.group(1).decode()) if found else None
                hook = session.raw_network if session is not None else None
                if hook is not None and hook(session, method, raw):
                    return
            message = cast(Message, text.loads(raw))
            session = self.sessions.get(message.get("sessionId"))
            if session is not None:
                session.deliver(method, message.get("params") or {})

    def apply(self, method, params):
        if method in ("Target.targetCreated", "Target.targetInfoChanged"):
            info = params.get("targetInfo") or {}
            target_id = info.get("targetId")
            if not target_id:
                return
            with self.lock:
                known = self.infos.get(target_id)
                if known is None and method != "Target.targetCreated":
                    return  # an update for a target already gone (or never announced)
                if known is None:
                    if len(self.infos) >= MAX_TARGETS:
                        self.overflow = True
                        self.untracked += 1
                        return
                    self._seq += 1
                    info = dict(info, seq=self._seq)
                else:
                    info = dict(known, **info)
                if target_id in self.internal:
                    info["internal"] = True
                self.infos[target_id] = info
                context = info.get("browserContextId")
                if context and context not in self.profile_ids and info.get("type") == "page" \
                        and len(self.profile_ids) < MAX_PROFILE_CONTEXTS:
                    self.profile_ids[context] = (f"profile-context:{uuid.uuid4()}", f"Profile {len(self.profile_ids) + 1}")
        elif method == "Target.targetCrashed":
            self.mark_crashed(params.get("targetId"), "renderer_crashed")
        elif method == "Target.targetDestroyed":
            target_id = params.get("targetId")
            with self.lock:
                if self.infos.pop(target_id, None) is None and self.untracked:
                    self.untracked -= 1
                self.crashed.pop(target_id, None)
                self.changed.notify_all()
            for callback in list(self.on_destroyed):
                callback(target_id)
        elif method == "Target.detachedFromTarget":
            session = self.sessions.pop(params.get("sessionId"), None)
            if session is not None:
                session.detached()

    def refresh(self, conn, timeout_s=2.0):
        """Read the current titles (and URLs) back from Chrome: it announces a navigation with
        Target.targetInfoChanged, but not a title the page sets afterwards (a <title> parsed
        later, document.title = …), so the table would keep the URL-like placeholder title.
        Only targets already known are updated; a failure leaves the table as it is."""
        try:
            infos = conn.cdp("Target.getTargets", timeout_s=timeout_s).get("targetInfos", [])
        except BPError:  # the table from events is still a valid answer
            return
        for info in infos:
            if info.get("type") == "page":
                self.apply("Target.targetInfoChanged", {"targetInfo": info})

    def load(self, target_infos):
        """Reconcile with Target.getTargets after connecting."""
        for info in target_infos:
            self.apply("Target.targetCreated", {"targetInfo": info})

    # --- queries ---------------------------------------------------------------------------------

    def pages(self):
        """Eligible page targets in first-seen order: [(raw id, info)]."""
        with self.lock:
            rows = [(t, dict(i)) for t, i in self.infos.items() if eligible(i)]
        rows.sort(key=lambda row: row[1]["seq"])
        return rows

    def info(self, target_id):
        with self.lock:
            info = self.infos.get(target_id)
            return dict(info) if info else None

    def profile(self, context_id):
        return self.profile_ids.get(context_id)

    def context_for_profile(self, public_id):
        for context, (pid, _) in self.profile_ids.items():
            if pid == public_id:
                return context
        return None

    def live_contexts(self):
        """browserContextIds that currently hold at least one page target, in label order."""
        with self.lock:
            live = {i.get("browserContextId") for i in self.infos.values()
                    if i.get("type") == "page" and not i.get("internal")}
        return [c for c in self.profile_ids if c in live]

    def unlisted_contexts(self):
        """How many browser contexts hold pages but have no profile id (past MAX_PROFILE_CONTEXTS):
        their tabs have no profileContextId and `bp profiles` cannot list them."""
        with self.lock:
            live = {i.get("browserContextId") for i in self.infos.values()
                    if i.get("type") == "page" and not i.get("internal") and i.get("browserContextId")}
            return len(live - set(self.profile_ids))

    def wait_gone(self, target_ids, timeout_s):
        """Wait until Chrome reports these targets destroyed; returns those still present."""
        import time

        deadline = time.monotonic() + timeout_s
        with self.changed:
            while True:
                left = [t for t in target_ids if t in self.infos]
                remaining = deadline - time.monotonic()
                if not left or remaining <= 0:
                    return left
                self.changed.wait(remaining)

    def mark_crashed(self, target_id, reason):
        import time

        with self.lock:
            tab = (self.infos.get(target_id) or {}).get("type") == "page"  # not an iframe's own process
            if target_id and (tab or target_id in self.sessions_raw()):
                known = self.crashed.get(target_id)
                if known is None or known["reason"] != "renderer_crashed":  # a crash outranks silence
                    self.crashed[target_id] = {"reason": reason, "at": int(time.time() * 1000)}
                self.changed.notify_all()

    def clear_crashed(self, target_id, reason=None):
        """The tab answers again (reloaded after a crash, or a silent renderer replied)."""
        with self.lock:
            known = self.crashed.get(target_id)
            if known is not None and (reason is None or known["reason"] == reason):
                del self.crashed[target_id]

    def crash_state(self, target_id):
        with self.lock:
            known = self.crashed.get(target_id)
            return dict(known) if known else None

    def sessions_raw(self):
        return {s.raw_id for s in list(self.sessions.values())}

    def mark_internal(self, target_id):
        with self.lock:
            self.internal.add(target_id)
            if target_id in self.infos:
                self.infos[target_id]["internal"] = True
