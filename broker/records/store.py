"""Command records: what each browser command of an Agent did, for recovery after a lost reply.

    accepted -> dispatched -> completed | unknown_outcome
    accepted -> cancelled | expired

A record is created when the broker accepts a request, before it waits for the tab. It becomes
`dispatched` immediately before the first browser mutation (`dispatching()`: a tab's session
calls it before sending a MUTATING_CDP method for the command its worker runs
(broker/tabs/session.py), and features call it before a script that may change the page), after
all preflight. The record reaches the work through the request (`Request.record`): the tab
worker is handed it with the function it runs; nothing finds it through the thread. The browser generation is captured at acceptance and checked before dispatch (a
queued stale command never reaches the new browser) and after the executor returns (a dispatched
mutation whose browser went away is `unknown_outcome`; a read is `browser_disconnected`).

With --request-id, the same intended call (key, request id, command, the arguments as the Agent
gave them, the tab it resolved to) finds its record again from any process: a completed command
returns its recorded result, an accepted/dispatched one its status; it never runs twice.
"""

import collections
import hashlib
import json
import threading
import time
from typing import Any, overload

from bp import fastjson
from bp.errors import BPError, disconnected
from broker.records import phases

MAX_RECORDS_PER_AGENT = 256
RECORD_TTL_S = 30 * 60.0  # finished records older than this are dropped
MAX_RESULT_BYTES = 256 * 1024  # a bigger result is recorded as a summary only


def _encoded(reply):
    """The reply as the broker sends it (compact UTF-8 JSON), or None where the broker's encoder
    must first replace lone surrogates; and its size in bytes."""
    try:
        data = fastjson.compact(reply)
        return data, len(data)
    except UnicodeEncodeError:  # lone surrogates, replaced on the way out
        return None, len(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace"))
ACTIVE = ("accepted", "dispatched")

# CDP methods that change the page or the browser: the first one sent marks the command dispatched.
MUTATING_CDP = frozenset({
    "Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Input.insertText", "Input.dispatchTouchEvent",
    "Input.dispatchDragEvent",
    "Page.navigate", "Page.reload", "Page.navigateToHistoryEntry", "Page.handleJavaScriptDialog",
    "Page.bringToFront", "Target.createTarget", "Target.closeTarget", "Target.activateTarget",
    "DOM.setFileInputFiles", "Fetch.fulfillRequest", "Fetch.continueRequest", "Fetch.failRequest",
    "Network.setCookie", "Network.deleteCookies", "Storage.clearCookies",
})

def _now_ms():
    return int(time.time() * 1000)


class Record:
    __slots__ = ("id", "op", "mutating", "status", "accepted_at", "deadline_at", "dispatched_at", "completed_at",
                 "target", "generation", "digest", "request_id", "cancel_requested", "reply", "error_code",
                 "done", "browser", "definite", "parent", "marks", "encoded", "_lock")

    def __init__(self, command_id, op, mutating, deadline_s, generation, digest, request_id, target, browser):
        self.id = command_id
        self.op = op
        self.mutating = mutating
        self.status = "accepted"
        self.accepted_at = _now_ms()
        self.deadline_at = self.accepted_at + int(deadline_s * 1000)
        self.dispatched_at = None
        self.completed_at = None
        self.target = target  # the Agent's opaque tab id, if the command resolved one
        self.generation = generation
        self.digest = digest
        self.request_id = request_id
        self.cancel_requested = False
        self.reply = None  # the recorded public reply once finished
        self.error_code = None
        self.done = threading.Event()
        self.browser = browser
        self.definite = False  # its failures are its own answer, never made unknown_outcome (attempting)
        self.parent = None  # a batch step's batch: dispatching the step dispatches the batch
        self.marks = phases.new_marks()  # where its time goes (broker/records/phases.py), None when off
        self.encoded = None  # (reply, its bytes) as finish() measured it: the broker sends those bytes
        self._lock = threading.Lock()

    # --- state changes (any thread) --------------------------------------------------------------

    def dispatching(self):
        """Called right before the first browser mutation; raises instead when the command may
        no longer reach the browser."""
        if self.parent is not None:
            self.parent.dispatching()  # a cancelled batch sends no further step
        with self._lock:
            if self.status == "dispatched":
                return
            if self.cancel_requested:
                self.status = "cancelled"
                raise BPError("command_cancelled", "The command was cancelled before it reached the browser.",
                              context={"commandId": self.id})
            if self.browser.generation != self.generation:
                raise disconnected("The browser connection changed after this command was accepted; it was not sent.",
                                   context={"commandId": self.id, "reason": "generation_changed"})
            self.status = "dispatched"
            self.dispatched_at = _now_ms()
            phases.mark(self, "dispatched")

    def attempting(self):
        """For a command that acts from its first step and whose failures are definite (connect:
        a refused or impossible connection connected nothing): dispatched now, so a cancel is
        never called certain, yet a failure stays what it is. No generation fence: connecting
        is what makes a new generation."""
        with self._lock:
            if self.cancel_requested:
                self.status = "cancelled"
                raise BPError("command_cancelled", "The command was cancelled before it started.",
                              context={"commandId": self.id})
            self.status = "dispatched"
            self.dispatched_at = _now_ms()
            self.definite = True

    def cancel(self):
        """Request cancellation; deterministic before dispatch, best effort after."""
        with self._lock:
            self.cancel_requested = True
            if self.status == "accepted":
                self.status = "cancelled"
                self.completed_at = _now_ms()
            return self.status

    def cancelled(self):
        return self.cancel_requested and self.status in ("accepted", "cancelled")

    def finish(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Record the reply; returns the reply to send (a fenced one when the browser went away)."""
        with self._lock:
            if reply.get("ok") and self.browser.generation != self.generation:
                if self.status == "dispatched" and self.mutating:
                    reply = BPError("unknown_outcome", "The browser connection was lost while the command ran.",
                                    context={"commandId": self.id, "reason": "browser_disconnected"}).envelope()
                else:
                    reply = disconnected("The browser connection changed while the command ran; its result is not current.",
                                         context={"commandId": self.id}).envelope()
            code = None if reply.get("ok") else reply.get("code")
            if code == "browser_disconnected" and self.status == "dispatched" and self.mutating and not self.definite:
                reply = BPError("unknown_outcome", "The browser connection was lost after the command reached the browser.",
                                context={"commandId": self.id, "reason": "browser_disconnected"}).envelope()
                code = "unknown_outcome"
            if code == "unknown_outcome" and self.status != "dispatched":
                # Nothing that changes the page was sent (a read, or a mutation before its first
                # input): the command only ran out of time, and a retry is safe.
                context = dict(reply.get("context") or {}, commandId=self.id)
                context.pop("method", None)
                reply = BPError("command_expired", "The command ran out of time before it changed anything; "
                                "it is safe to retry.", retryable=True, context=context).envelope()
                code = "command_expired"
            elif code in ("unknown_outcome", "target_crashed", "browser_unresponsive"):
                context = dict(reply.get("context") or {}, commandId=self.id)
                if code in ("target_crashed", "browser_unresponsive"):
                    context["dispatched"] = self.status == "dispatched"  # input may have reached the page first
                reply = {**reply, "context": context}
                if code == "browser_unresponsive" and self.mutating and context["dispatched"]:
                    reply["retryable"] = False  # sent input may still run when the browser resumes
            if self.status == "cancelled" or code == "command_cancelled":
                if self.status == "dispatched":
                    self.status = "unknown_outcome"
                else:
                    self.status = "cancelled"
            elif code == "command_expired":
                self.status = "expired"
            elif code == "unknown_outcome":
                self.status = "unknown_outcome"
            else:
                self.status = "completed"
            self.error_code = code
            self.completed_at = _now_ms()
            data, encoded = _encoded(reply)
            self.encoded = (reply, data) if data is not None else None
            self.reply = reply if encoded <= MAX_RESULT_BYTES else {
                "ok": reply.get("ok", False), "resultOmitted": True, "code": code, "sizeBytes": encoded}
        self.done.set()
        phases.mark(self, "finished")
        return reply

    def expire_if_lost(self, browser_alive):
        """A browser loss ends in-flight records: dispatched mutations are unknown_outcome."""
        with self._lock:
            if self.status == "dispatched" and not browser_alive:
                self.status = "unknown_outcome" if self.mutating else self.status

    # --- views -----------------------------------------------------------------------------------

    def descriptor(self):
        out = {"id": self.id, "method": f"browser.{self.op}", "mutating": self.mutating, "status": self.status,
               "acceptedAt": self.accepted_at, "deadlineAt": self.deadline_at}
        if self.target:
            out["targetId"] = self.target
        if self.dispatched_at:
            out["dispatchedAt"] = self.dispatched_at
        if self.completed_at:
            out["completedAt"] = self.completed_at
        if self.cancel_requested:
            out["cancellationRequested"] = True
        if self.error_code:
            out["errorCode"] = self.error_code
        return out


class Commands:
    """One Agent's records, newest last, bounded in count and age."""

    def __init__(self):
        self._records = collections.OrderedDict()  # id -> Record
        self._by_request = {}  # request id -> Record
        self._lock = threading.Lock()

    def add(self, record):
        with self._lock:
            self._prune()
            self._records[record.id] = record
            if record.request_id:
                self._by_request[record.request_id] = record

    def by_request(self, request_id):
        with self._lock:
            record = self._by_request.get(request_id)
            return record if record is not None and record.id in self._records else None

    def get(self, command_id):
        with self._lock:
            return self._records.get(command_id)

    def list(self, statuses=None, limit=50):
        with self._lock:
            self._prune()
            rows = [r for r in reversed(self._records.values()) if not statuses or r.status in statuses]
        return rows[:limit]

    def _prune(self):
        now = _now_ms()
        for command_id in [i for i, r in self._records.items()
                           if r.status not in ACTIVE and r.completed_at and now - r.completed_at > RECORD_TTL_S * 1000]:
            self._drop(command_id)
        while len(self._records) >= MAX_RECORDS_PER_AGENT:
            oldest = next((i for i, r in self._records.items() if r.status not in ACTIVE), None)
            if oldest is None:
                break  # every record is in flight: keep them, they are bounded by request threads
            self._drop(oldest)

    def _drop(self, command_id):
        record = self._records.pop(command_id)
        if record.request_id and self._by_request.get(record.request_id) is record:
            del self._by_request[record.request_id]

    def __len__(self):
        return len(self._records)


class CommandBook:
    """Records of every key, kept apart from Agent leases (a lost reply is often found again
    after a lease ended), bounded in keys; `bp disconnect` of a key forgets its records."""

    MAX_KEYS = 1024

    def __init__(self):
        self._books = collections.OrderedDict()  # key -> Commands
        self._lock = threading.Lock()

    @overload
    def for_key(self, key: str) -> "Commands": ...
    @overload
    def for_key(self, key: str, create: bool) -> "Commands | None": ...

    def for_key(self, key, create=True):
        """The key's book of commands; with create=False, None when it has none."""
        with self._lock:
            book = self._books.get(key)
            if book is None and create:
                while len(self._books) >= self.MAX_KEYS:
                    self._books.popitem(last=False)
                book = self._books[key] = Commands()
            elif book is not None:
                self._books.move_to_end(key)
            return book

    def forget(self, key):
        with self._lock:
            self._books.pop(key, None)

    def all_active(self):
        with self._lock:
            books = list(self._books.values())
        return [r for book in books for r in book.list(ACTIVE, limit=MAX_RECORDS_PER_AGENT)]


def digest(client, request_id, op, args, target):
    """The idempotency key of an intended call: never anything per process."""
    material = json.dumps([client, request_id, op, args, target], sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode()
    return hashlib.sha256(material).hexdigest()
