"""Downloads begun by an Agent's tabs, copied into its private storage when Chrome finishes them.

Chrome's download behaviour is per browser context and browser-wide, so per-tab download
directories cannot isolate anything. For each browser generation and profile context the broker
asks once, at browser scope, for `Browser.setDownloadBehavior {behavior: "default",
eventsEnabled: true}`: Chrome keeps its own configured directory and prompts, and reports
progress. A download is attributed to an Agent only when `Page.downloadWillBegin` arrived on the
session of a tab that Agent holds (managed, popup of one, or controlled); `Browser.downloadWillBegin`
counts too when its frame id is such a tab's main frame. A GUID claimed by two different
Agents is dropped (fails closed); downloads of tabs nobody holds are ignored. On
`Browser.downloadProgress` `completed` (which carries Chrome's `filePath`), the finished file is
copied into the Agent's storage on a separate thread. Chrome's file is only read: never moved,
truncated, deleted, and no download is ever cancelled. GUIDs and Chrome's paths never leave the
broker.
"""

import collections
import logging
import mimetypes
import os
import threading
import time

from bp.errors import BPError
from bp.outputs import safe_basename

log = logging.getLogger("broker.downloads")

MAX_PER_KEY = 64  # listed downloads per key (the oldest are forgotten first, copies included)
MAX_PENDING = 1024  # GUIDs being tracked across all keys
MAX_CONFLICTS = 1024
MAX_NUMBERED_KEYS = 4096  # keys whose last download index is remembered


class Download:
    __slots__ = ("id", "key", "agent", "raw", "generation", "guid", "file_name", "mime", "size", "state", "reason",
                 "created_at", "artifact", "index")

    def __init__(self, key, agent, raw, generation, guid, file_name):
        self.id = "download-" + os.urandom(8).hex()
        self.key = key
        self.agent = agent
        self.raw = raw
        self.generation = generation
        self.guid = guid
        self.file_name = file_name
        self.mime = mimetypes.guess_type(file_name)[0] if file_name else None
        self.size = None
        self.state = "in_progress"
        self.reason = None
        self.created_at = time.time()
        self.artifact = None
        self.index = None  # this key's running number for it: `bp downloads` index, never reused

    def row(self, index=None):
        index = self.index if index is None else index
        state = self.state
        evicted = self.artifact is not None and self.artifact.evicted
        if state == "completed" and (self.artifact is None or self.artifact.expired() or evicted):
            state = "expired"
        row = {"index": index, "id": self.id, "fileName": self.file_name, "state": state,
               "createdAt": int(self.created_at * 1000)}
        if self.mime:
            row["mimeType"] = self.mime
        if self.size is not None:
            row["sizeBytes"] = self.size
        if self.artifact is not None:
            row["expiresAt"] = int(self.artifact.expires_at * 1000)
        if self.reason:
            row["reason"] = self.reason
        elif state == "expired" and evicted:
            row["reason"] = "evicted"  # made room for this key's newer files
        return row


class Tracker:
    def __init__(self, browser, agents, store):
        # Handed by the broker (broker/server.py): the browser, the Agents, the artifact store.
        self.browser, self.agents, self.store = browser, agents, store
        self.lock = threading.Lock()
        self.enabled = set()  # (generation, browserContextId) configured
        self.pending = {}  # guid -> Download (until completed, canceled or failed)
        self.conflicts = collections.OrderedDict()  # guids claimed twice: ignored for good
        self.by_key = {}  # key -> OrderedDict(id -> Download), oldest first
        self.dropped = {}  # key -> (Agent, downloads forgotten to keep MAX_PER_KEY): `bp downloads` says so
        # key -> the last index given: indexes are stable (1 stays the key's first download, even
        # once the oldest are forgotten); kept for keys that were released too, so that an index
        # an Agent still holds never comes to mean another download.
        self.numbers = collections.OrderedDict()

    # --- configuration (on a tab worker, when a tab session is attached) ------------------------

    def on_session(self, session):
        """Hook of every newly attached tab session: it may be where a download begins."""
        session.downloads = self  # what an input's evidence asks for the download it began
        self.ensure_events(self.browser, session)

    def ensure_events(self, browser, session):
        """Browser.setDownloadBehavior once per generation and profile context, at browser scope."""
        conn = session.conn
        info = browser.targets.info(session.raw_id) or {}
        context = info.get("browserContextId")
        slot = (conn.generation, context)
        with self.lock:
            if slot in self.enabled:
                return
            self.enabled = {s for s in self.enabled if s[0] == conn.generation}
            self.enabled.add(slot)
        browser.targets.on_download = self.on_event
        params = {"behavior": "default", "eventsEnabled": True}
        if context:
            params["browserContextId"] = context
        try:
            conn.cdp("Browser.setDownloadBehavior", params, timeout_s=10.0)
        except BPError:
            log.warning("download events are unavailable in this browser context")
            with self.lock:
                self.enabled.discard(slot)

    # --- events (on the janitor-relay thread: bookkeeping only) ---------------------------------

    def on_event(self, method, params, raw):
        try:
            if method in ("Page.downloadWillBegin", "Browser.downloadWillBegin"):
                if method == "Browser.downloadWillBegin":
                    raw = params.get("frameId")  # a main frame's id is its tab's target id
                self._begin(params, raw)
            elif method == "Browser.downloadProgress":
                self._progress(params)
        except Exception:
            log.exception("download event handling failed")

    def _owner(self, raw):
        if raw is None or self.browser.targets.info(raw) is None:
            return None
        key, _ = self.agents.owner(raw, self.browser.popups())
        if key is None:
            return None
        agent = self.agents.get(key)
        if agent is None or not agent.lease_active(time.time()) or agent.generation != self.browser.generation:
            return None
        return agent

    def _begin(self, params, raw):
        guid = params.get("guid")
        if not isinstance(guid, str) or not guid:
            return
        agent = self._owner(raw)
        with self.lock:
            if guid in self.conflicts:
                return
            known = self.pending.get(guid)
            if known is not None:
                if agent is not None and known.agent is not agent:
                    self._conflict_locked(guid)  # two owners: nobody gets it
                return
            if agent is None or len(self.pending) >= MAX_PENDING:
                return  # a tab nobody holds: ignored
            name = safe_basename(params.get("suggestedFilename"), "download")
            record = Download(agent.key, agent, raw, self.browser.generation, guid, name)
            record.index = self.numbers.pop(agent.key, 0) + 1
            self.numbers[agent.key] = record.index
            while len(self.numbers) > MAX_NUMBERED_KEYS:
                self.numbers.popitem(last=False)
            self.pending[guid] = record
            rows = self.by_key.setdefault(agent.key, collections.OrderedDict())
            rows[record.id] = record
            while len(rows) > MAX_PER_KEY:
                _, old = rows.popitem(last=False)
                self._forget_locked(old)
                known = self.dropped.get(agent.key)
                self.dropped[agent.key] = (agent, (known[1] if known and known[0] is agent else 0) + 1)

    def _conflict_locked(self, guid):
        record = self.pending.pop(guid, None)
        if record is not None:
            rows = self.by_key.get(record.key)
            if rows is not None:
                rows.pop(record.id, None)
        self.conflicts[guid] = True
        while len(self.conflicts) > MAX_CONFLICTS:
            self.conflicts.popitem(last=False)
        log.warning("a download was claimed by two Agents; it is not tracked")

    def _forget_locked(self, record):
        if self.pending.get(record.guid) is record:
            del self.pending[record.guid]
        if record.artifact is not None:
            self.store.release(record.artifact)

    def _progress(self, params):
        guid = params.get("guid")
        state = params.get("state")
        with self.lock:
            record = self.pending.get(guid)
            if record is None:
                return
            if isinstance(params.get("totalBytes"), (int, float)) and params["totalBytes"] >= 0:
                record.size = int(params["totalBytes"])
            if state == "canceled":
                record.state = "canceled"
                del self.pending[guid]
                return
            if state != "completed":
                return
            del self.pending[guid]
            record.state = "copying"
        source = params.get("filePath")
        threading.Thread(target=self._copy, args=(record, source), name="download-copy", daemon=True).start()

    def _copy(self, record, source):
        """Copy Chrome's finished file into the Agent's storage (Chrome's file is only read)."""
        state, reason, item = "failed", None, None
        try:
            if not isinstance(source, str) or not os.path.isabs(source):
                reason = "path_unavailable"
            elif self.agents.get(record.key) is not record.agent or record.generation != self.browser.generation:
                reason = "released"
            else:
                item = self.store.copy_file(
                    record.agent, "download", source, record.mime or "application/octet-stream", "data",
                    meta={"fileName": record.file_name},
                    refuse=lambda why: BPError("artifact_not_found", "Chrome's finished file cannot be read.",
                                               context={"reason": why}))
                state = "completed"
        except BPError as exc:
            reason = exc.code if exc.code in ("quota_exceeded", "storage_full") else (exc.context or {}).get("reason", exc.code)
        except Exception:
            log.exception("copying a finished download failed")
            reason = "copy_failed"
        with self.lock:
            rows = self.by_key.get(record.key)
            live = rows is not None and rows.get(record.id) is record
            if live:
                record.state, record.reason, record.artifact = state, reason, item
                if item is not None:
                    record.size = item.size
        if item is not None and not live:
            self.store.release(item)  # forgotten meanwhile (released key)

    # --- the Agent's view -------------------------------------------------------------------------

    def rows(self, agent):
        """[(Download, public row)], oldest first; each keeps its index (1 = the key's first)."""
        with self.lock:
            rows = self.by_key.get(agent.key) or {}
            for record in [r for r in rows.values() if r.agent is not agent]:
                del rows[record.id]  # an earlier Agent of this key (its lease ran out)
                self._forget_locked(record)
            records = list(rows.values())
        return [(r, r.row()) for r in records]

    def find(self, agent, selector):
        rows = self.rows(agent)
        for record, _ in rows:
            if record.index == selector if isinstance(selector, int) else record.id == selector:
                return record
        if isinstance(selector, int):
            raise BPError("artifact_not_found", f"No download {selector} in this Agent's list; run 'bp downloads'.",
                          context={"field": "selector", "count": len(rows)})
        raise BPError("artifact_not_found", "No such download for this Agent; run 'bp downloads'.",
                      context={"field": "selector"})

    def by_guid(self, agent, guid):
        """The Agent's download with this GUID, or None."""
        for record, _ in self.rows(agent):
            if guid and record.guid == guid:
                return record
        return None

    def started(self, agent, guid):
        """{index, fileName} of the Agent's download with this GUID (as `bp downloads` lists it
        now), or None when it is not this Agent's."""
        for record, row in self.rows(agent):
            if record.guid == guid:
                return {"index": row["index"], "fileName": row["fileName"]}
        return None

    def dropped_of(self, agent):
        """How many of this key's downloads were forgotten past MAX_PER_KEY."""
        with self.lock:
            known = self.dropped.get(agent.key)
            return known[1] if known and known[0] is agent else 0  # not an earlier Agent's of this key

    def forget_key(self, key):
        with self.lock:
            self.dropped.pop(key, None)
            rows = self.by_key.pop(key, None) or {}
            for record in rows.values():
                self._forget_locked(record)
