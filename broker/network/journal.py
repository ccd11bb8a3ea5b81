"""Per-Agent request journal: the Hub that routes every held tab's Network, Fetch and Runtime
events to its part, and the commands that read the journal (`bp net`, `net show`, `net clear`).

Everything here is attributed by tab: an event of a tab session counts for the Agent that holds
the tab (managed, popup of a managed tab, or controlled user tab) at the moment it arrives;
tabs nobody holds are not journaled and never intercepted. State lives in memory per key, is
bounded, and goes with `bp disconnect` or the key's lease (a state whose Agent object is not the
key's live Agent any more is ignored and dropped).

Cost decisions (README "Decisions worth knowing"):
- A held tab is journaled from the moment the Agent holds it: `Network.enable` and
  `Runtime.enable` go out when the tab's session attaches for its holder (before the command
  that made it held: the navigation of `bp open`, `bp tab N` of a user tab) and again whenever
  the holder changes; a tab nobody holds any more gets `Network.disable` / `Runtime.disable`.
  So `bp open URL` then `bp net` lists the page's own document, scripts and XHRs. To keep the
  cost bounded, the janitor drops the Network events nobody reads (`dataReceived`, WebSocket
  and EventSource frames, priority changes: bp/janitor_pipe.py DROPPED_EVENTS) before they
  cross the pipe, and the broker parses a Network event only far enough to route it (its
  request id), keeping the raw bytes until the journal is read (Entry.pending). Figures:
  tests/bench/bench_journal.py, README.
  Network events are consumed by a listener on the relay thread and never enter the tab's event
  buffer, so they cannot push out lifecycle events.
- Fetch interception for the Agent's rules and credentials: broker/network/interception.py;
  console and page errors: broker/network/console.py; the person's navigation bounds and the
  popup guard: broker/policy/bounds.py. The Hub below is made of those parts.

Out-of-process iframes of a tab share its listeners, journal and rules from the moment their
session attaches (broker/tabs/session.py calls `targets.on_frame_session`): a new frame waits
(waitForDebuggerOnStart) until `Fetch.enable` is sent, so none of its requests escapes the
bounds or the rules; `Fetch.enable` is sent again 0.3 s later and on the tab's next command
(a frame that was already running when the tab was attached). Service workers' own requests
are judged by the bounds only (with subresources, broker/policy/bounds.py), never journaled.

Secrets: header values, bodies, cookies, credentials and console text never reach the log or
an error message. In results, Cookie / Set-Cookie / Authorization / Proxy-Authorization and
API-key headers are redacted unless asked for (`bp net show --reveal`).
"""

import base64
import collections
import logging
import re
import threading
import time
from collections.abc import Callable, ValuesView
from typing import Any, Literal, cast, overload

from bp import policy
from bp.text import loads as load_event
from bp.errors import BPError, invalid_argument
from broker.network.console import Console, MAX_CONSOLE, MAX_ERRORS
from broker.network.entries import JOURNALED, MAX_ENTRIES, Entry, apply_event, redact
from broker.network.interception import Interception, Rule, glob_matcher
from broker.policy.bounds import ALL_REQUESTS, Bounds

log = logging.getLogger("broker.network")

MAX_PENDING_EVENT = 64 * 1024  # a larger Network event is parsed as it arrives
MAX_PENDING_BYTES = 4 * 1024 * 1024  # per key: past this, everything pending is parsed
MAX_BODY = 64 * 1024
MAX_POST_SHOWN = 64 * 1024
FRAME_REFRESH_S = 0.3
NETWORK_BUFFERS = {"maxTotalBufferSize": 16 * 1024 * 1024, "maxResourceBufferSize": 4 * 1024 * 1024}
# Chrome writes the event's method, then its params in protocol order: requestId comes first.
# What an acting command's settle hears (Hub.watch): requests starting and ending, and the
# WebSocket frames the page sends (bp/janitor_pipe.py lets those through; received ones stay dropped).
SETTLE_HEARS = frozenset({"Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished",
                          "Network.loadingFailed", "Network.webSocketFrameSent"})
_REQUEST_ID = re.compile(rb'\{"method":"Network\.[A-Za-z]{1,64}","params":\{"requestId":"([^"\\]{1,128})"')


class KeyState:
    def __init__(self, agent):
        self.agent = agent
        self.entries: collections.OrderedDict[str, Entry] = collections.OrderedDict()  # id -> Entry, oldest first
        self.by_request: dict[tuple[str | None, str | None], Entry] = {}  # (session id, CDP request id) -> Entry
        self.seq = 0
        self.dropped = 0
        self.rules: list[Rule] = []  # newest last
        self.auth: dict[str, str] | None = None  # {"username", "password", "origin"?}
        self.auth_attempts: dict[str | None, int] = {}  # Fetch request id -> attempts (bounded)
        self.console: collections.deque[dict[str, Any]] = collections.deque(maxlen=MAX_CONSOLE)
        self.errors: collections.deque[dict[str, Any]] = collections.deque(maxlen=MAX_ERRORS)
        self.console_seq = 0
        self.console_dropped = 0
        self.errors_dropped = 0
        self.pending_bytes = 0  # raw Network events kept unparsed (Entry.pending)

    def add(self, entry):
        self.entries[entry.id] = entry
        self.by_request[(entry.session.session_id, entry.request_id)] = entry
        while len(self.entries) > MAX_ENTRIES:
            _, old = self.entries.popitem(last=False)
            self.dropped += 1
            self.pending_bytes -= old.pending_bytes
            key = (old.session.session_id, old.request_id)
            if self.by_request.get(key) is old:
                del self.by_request[key]


# What an acting command's settle is told of each Network event: sink(method, request_id, event, at).
SettleSink = Callable[[str, Any, Any, float], None]


class Hub(Bounds, Interception, Console):
    def __init__(self, rules: policy.Policy, agents: Any, browser: Any, workers: Any):
        # Handed by the broker (broker/server.py): the person's policy, the Agents, the browser
        # and the tab workers; Agents, Browser and Workers are described by Bounds, not imported here.
        self.policy, self.agents, self.browser, self.workers = rules, agents, browser, workers
        self.lock = threading.RLock()
        self.states: dict[str, KeyState] = {}  # key -> KeyState
        self._checks = None  # threads that read Chrome's answer to a rule's change (_send_checked)
        # (tab raw id, sink) of actions settling now (broker/actions/settle.py)
        self.settles: tuple[tuple[str, SettleSink], ...] = ()

    # --- settle hook: an acting command hears its tab's requests and sent WebSocket frames -------

    def watch(self, raw: str, sink: SettleSink) -> None:
        """sink(method, request_id, raw_bytes_or_params, at) on the relay thread for each Network
        event of tab `raw` (its frames included) until unwatch(sink). Cheap when nobody watches."""
        with self.lock:
            self.settles = self.settles + ((raw, sink),)

    def unwatch(self, sink: SettleSink) -> None:
        with self.lock:
            self.settles = tuple(w for w in self.settles if w[1] != sink)  # a bound method is made anew

    def _tell(self, session, method, request_id, event, at):
        tab = session.tab_raw_id or session.raw_id
        for raw, sink in self.settles:
            if raw == tab:
                try:
                    sink(method, request_id, event, at)
                except Exception:
                    log.exception("settle hook failed (%s)", method)

    # --- state per key ---------------------------------------------------------------------------

    @overload
    def state(self, agent, create: Literal[True] = True) -> KeyState: ...
    @overload
    def state(self, agent, create: bool) -> KeyState | None: ...

    def state(self, agent, create: bool = True) -> KeyState | None:
        with self.lock:
            found = self.states.get(agent.key)
            if found is not None and found.agent is not agent:
                found = None  # the key was released and came back: start clean
                del self.states[agent.key]
            if found is None and create:
                found = self.states[agent.key] = KeyState(agent)
            return found

    def release_key(self, key: str) -> None:
        with self.lock:
            self.states.pop(key, None)
        self.sync_all()  # its tabs are nobody's now: not journaled, and their interception goes

    def _owner_state(self, session) -> KeyState | None:
        """The KeyState of the live Agent holding this session's tab (made on first need: the
        journal starts when the tab is held), or None."""
        key = self._holder(session)
        agent = self.agents.get(key) if key else None
        return self.state(agent) if agent is not None else None

    # --- sessions --------------------------------------------------------------------------------

    def attach(self, session):
        """Hook of every newly attached tab session (on the tab's worker, broker/server.py)."""
        session.raw_network = self.raw_event  # frames' sessions share it (broker/tabs/session.py FrameSession)
        session.network_hub = self  # what an action's settle hears the tab's requests from
        session.listeners.append(self.listener)
        session.targets.on_frame_session = self.frame_attached
        session.targets.on_worker_session = self.worker_attached
        self.sync(session)

    def frame_attached(self, child):
        """An out-of-process iframe of a tab attached (relay thread): same journal and rules as
        its tab. Its requests before this moment are not seen."""
        child.fetch_state = child.socket_state = None
        child.runtime_enabled = child.network_enabled = False
        child.fetch_refreshed = False
        self.sync(child)
        # Measured: a Fetch.enable sent as the frame attaches does not survive the frame's first
        # commit (Network.enable does). Send it again shortly after, and on the tab's next command.
        timer = threading.Timer(FRAME_REFRESH_S, self.refresh_frame, (child,))
        timer.daemon = True
        timer.start()

    def worker_attached(self, parent, session_id):
        """A dedicated worker of a held tab (or of its frame) attached, paused (relay thread): its
        WebSockets are its own requests, so the bounds' socket conditions go to it too."""
        want = self.socket_rules(parent)
        if want is None:
            return
        try:
            parent.conn.send_nowait("Network.enable", NETWORK_BUFFERS, session_id=session_id)
            parent.conn.send_nowait("Network.emulateNetworkConditionsByRule", {"matchedNetworkConditions": want},
                                    session_id=session_id)
        except BPError:
            pass

    def refresh_frame(self, child):
        if child.alive and not child.fetch_refreshed:
            child.fetch_refreshed = True
            if child.fetch_state is not None:
                child.fetch_state = "refresh"  # differs from any wanted state: sent again
            if child.socket_state is not None:
                child.socket_state = "refresh"
            self.sync(child)

    def sync(self, session):
        """Fetch interception on this session exactly while its holder has rules or credentials."""
        state = self._owner_state(session)
        held = state is not None
        if session.alive and session.network_enabled != held:
            # Journaled while held (sent before the command that made it held reaches the tab).
            session.network_enabled = session.runtime_enabled = held
            self._send(session, "Network.enable" if held else "Network.disable", NETWORK_BUFFERS if held else None)
            self._send(session, "Runtime.enable" if held else "Runtime.disable", None)
        self._sync_sockets(session)
        want = None
        if state is not None and (state.rules or state.auth):
            want = (ALL_REQUESTS, bool(state.auth))  # every request: bounds are checked first
        else:
            bounds = self.bounds_patterns(session)
            if bounds is not None:
                want = (bounds, False)
        if session.fetch_state == want or not session.alive:
            return
        session.fetch_state = want
        try:
            if want is None:
                session.send_nowait("Fetch.disable")
            else:
                # One Fetch.enable per session with the union of what bounds and rules need.
                session.send_nowait("Fetch.enable", {"patterns": [dict(p) for p in want[0]], "handleAuthRequests": want[1]})
        except BPError:
            session.fetch_state = None

    def _sync_sockets(self, session):
        """The bounds' WebSocket conditions (broker/policy/bounds.py socket_conditions) on this
        session exactly while it is held, sent after Network.enable."""
        want = self.socket_rules(session)
        if session.socket_state == want or not session.alive:
            return
        if want is None and session.socket_state is None:
            return
        session.socket_state = want
        self._send(session, "Network.emulateNetworkConditionsByRule", {"matchedNetworkConditions": want or []})

    def on_use(self, session):
        """Hook of every later use of a tab session: interception follows the tab's current holder."""
        self.sync_tree(session)

    def resync(self, raw):
        """A tab changed hands (released, or another one taken instead): its interception follows."""
        for candidate, session in self.workers.sessions():
            if candidate == raw:
                try:
                    self.sync_tree(session)
                except Exception:
                    log.exception("network sync of a released tab failed")

    def sync_tree(self, session):
        """sync for the tab's session and the out-of-process iframes under it."""
        self.sync(session)
        for child in session.live_children():
            if not child.fetch_refreshed:
                self.refresh_frame(child)
            self.sync_tree(child)

    def sync_all(self):
        for _, session in self.workers.sessions():
            self.sync_tree(session)

    # --- events (janitor-relay thread: bookkeeping and fire-and-forget sends only) ---------------

    def listener(self, session, method, params):
        """True when the event is consumed here (it then stays out of the tab's event buffer)."""
        domain = method.split(".", 1)[0]
        if method == "Page.frameNavigated":
            try:
                self.committed(session, params)  # the person's bounds (broker/policy/bounds.py)
            except Exception:
                log.exception("the bounds could not judge a committed document")
            return False
        if domain not in ("Network", "Fetch", "Runtime"):
            return False
        if domain == "Runtime" and method not in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown"):
            # Runtime is on for every held tab; its context events would only crowd the tab's
            # event buffer (nobody waits for them on a tab's session: broker/page/content.py has its own).
            return method.startswith("Runtime.executionContext")
        try:
            if domain == "Fetch":
                self._fetch(session, method, params)
            elif domain == "Network":
                self._network(session, method, params)
            else:
                self._runtime(session, method, params)
        except Exception:
            log.exception("network event handling failed (%s)", method)
            if method == "Fetch.requestPaused":
                self._send(session, "Fetch.continueRequest", {"requestId": params.get("requestId")})
            elif method == "Fetch.authRequired":
                self._send(session, "Fetch.continueWithAuth", {"requestId": params.get("requestId"),
                                                               "authChallengeResponse": {"response": "Default"}})
        return True

    @staticmethod
    def _send(session, method: str, params: dict[str, Any] | None) -> None:
        try:
            session.send_nowait(method, params)
        except BPError:
            pass

    def _network(self, session, method, params):
        """A Network event parsed already (Targets could not route it raw): applied at once."""
        if self.settles and method in SETTLE_HEARS:
            self._tell(session, method, params.get("requestId"), params, time.monotonic())
        if method not in JOURNALED:
            return
        state = self._owner_state(session)
        if state is None:
            return
        request_id = params.get("requestId")
        with self.lock:
            entry = state.by_request.get((session.session_id, request_id))
            if method == "Network.requestWillBeSent":
                if entry is not None:
                    self._materialize(state, entry)
                    apply_event(entry, "redirect", params, time.monotonic())
                state.seq += 1
                entry = Entry(state.seq, session, request_id)
                state.add(entry)
            elif entry is None:
                return
            else:
                self._materialize(state, entry)  # in arrival order
            apply_event(entry, method, params, time.monotonic())

    def raw_event(self, session, method, raw):
        """Relay thread, a Network event of a tab session as Chrome's bytes (broker/browser/targets.py):
        routed by its request id alone and kept unparsed until the journal is read. True when
        consumed; False to have it parsed and delivered as usual."""
        if self.settles and method in SETTLE_HEARS:
            found = _REQUEST_ID.match(raw, 0, 512)
            if found is not None:
                self._tell(session, method, found.group(1).decode(), raw, time.monotonic())
        if method not in JOURNALED:
            return True  # nobody reads it
        found = _REQUEST_ID.match(raw, 0, 512)
        if found is None:
            return False
        state = self._owner_state(session)
        if state is None:
            return True
        request_id = found.group(1).decode()
        at = time.monotonic()
        with self.lock:
            entry = state.by_request.get((session.session_id, request_id))
            if method == "Network.requestWillBeSent":
                if entry is not None:  # a redirect: the old entry's response is in this event
                    self._keep(state, entry, "redirect", raw, at)
                state.seq += 1
                entry = Entry(state.seq, session, request_id, at=at)
                state.add(entry)
            elif entry is None:
                return True  # of a request journaled before a clear, or before the tab was held
            self._keep(state, entry, method, raw, at)
            if len(raw) > MAX_PENDING_EVENT:
                self._materialize(state, entry)
            elif state.pending_bytes > MAX_PENDING_BYTES:
                for kept in state.entries.values():
                    self._materialize(state, kept)
        return True

    @staticmethod
    def _keep(state, entry, method, raw, at):
        entry.pending.append((method, raw, at))
        entry.pending_bytes += len(raw)
        state.pending_bytes += len(raw)

    def _materialize(self, state: KeyState, entry: Entry) -> None:
        """Parse an entry's pending events, in arrival order (under self.lock)."""
        if not entry.pending:
            return
        pending, entry.pending = entry.pending, []
        state.pending_bytes -= entry.pending_bytes
        entry.pending_bytes = 0
        for method, raw, at in pending:
            try:
                event = cast("dict[str, Any]", load_event(raw))  # Chrome's event: a JSON object
                apply_event(entry, method, event.get("params") or {}, at)
            except Exception:
                log.exception("network event handling failed (%s)", method)

    def materialized(self, state: KeyState) -> ValuesView[Entry]:
        """The key's entries, oldest first, every one parsed (under self.lock)."""
        for entry in state.entries.values():
            self._materialize(state, entry)
        return state.entries.values()


# --- commands (request threads) ------------------------------------------------------------------

STATUS_RE = re.compile(r"^([1-5])xx$|^([0-9]{3})$", re.I)


def list_requests(hub_: Hub, agent, args: dict[str, Any]) -> dict[str, Any]:
    state = hub_.state(agent)
    limit = args.get("limit", 20)
    url_match = glob_matcher(args["url"]) if args.get("url") else None
    method = (args.get("method") or "").upper() or None
    types = {t.strip().lower() for t in args["type"].split(",") if t.strip()} if args.get("type") else None
    status = args.get("status")
    status_class = status_exact = None
    if status:
        m = STATUS_RE.match(status)
        if not m:
            raise invalid_argument("status", "Give a status like 200, 4xx or 5xx.")
        status_class, status_exact = (int(m.group(1)), None) if m.group(1) else (None, int(m.group(2)))
    after = None
    if args.get("after"):
        after = _seq_of(args["after"], "after")
    with hub_.lock:
        rows = []
        for entry in hub_.materialized(state):
            if after is not None and entry.seq <= after:
                continue
            if url_match and not url_match(entry.url):
                continue
            if method and entry.method != method:
                continue
            if types and entry.type not in types:
                continue
            if status_exact is not None and entry.status != status_exact:
                continue
            if status_class is not None and (entry.status is None or entry.status // 100 != status_class):
                continue
            rows.append(entry.row())
    total = len(rows)  # every matching entry, not only the rows returned
    truncated = total > limit
    if truncated:
        rows = rows[:limit] if after is not None else rows[-limit:]
    result = {"requests": rows, "total": total, "truncated": truncated,
              "nextCursor": rows[-1]["id"] if rows else (args.get("after") or None)}
    if state.dropped:
        result["dropped"] = state.dropped
    return result


def _seq_of(value: Any, field: str) -> int:
    m = re.match(r"^(?:req-)?([0-9]{1,12})$", str(value))
    if not m:
        raise invalid_argument(field, "Give a request id like req-12.")
    return int(m.group(1))


def find_entry(hub_: Hub, agent, request_id: Any) -> Entry:
    state = hub_.state(agent)
    seq = _seq_of(request_id, "id")
    with hub_.lock:
        entry = state.entries.get(f"req-{seq}")
        if entry is not None:
            hub_._materialize(state, entry)
    if entry is None:
        raise invalid_argument("id", "No such request in this Agent's journal (see 'bp net').")
    return entry


def body_of(entry: Entry, timeout_s: float):
    """(bytes or text, base64?) of the response body, or (None, reason)."""
    if not entry.session.alive:
        return None, "tab_gone"
    try:
        reply = entry.session.call("Network.getResponseBody", {"requestId": entry.request_id},
                                   timeout_s=min(10.0, timeout_s))
    except BPError:
        return None, "unavailable"
    return reply.get("body") or "", bool(reply.get("base64Encoded"))


def show(hub_: Hub, agent, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    entry = find_entry(hub_, agent, args["id"])
    reveal = bool(args.get("reveal"))
    request_headers, redacted = redact(entry.request_headers, reveal)
    result = {"id": entry.id, "method": entry.method, "url": entry.url, "type": entry.type,
              "startedAt": entry.started, "requestHeaders": request_headers, "postDataTruncated": False}
    post = entry.post_data
    if entry.has_post and (post is None or entry.post_truncated) and entry.session.alive:
        try:
            post = entry.session.call("Network.getRequestPostData", {"requestId": entry.request_id},
                                      timeout_s=min(5.0, timeout_s)).get("postData")
        except BPError:
            pass
    if post is not None:
        result["postData"] = post[:MAX_POST_SHOWN]
        result["postDataTruncated"] = len(post) > MAX_POST_SHOWN or (entry.post_truncated and post is entry.post_data)
    for name, value in (("status", entry.status), ("statusText", entry.status_text), ("mimeType", entry.mime),
                        ("size", entry.size), ("durationMs", entry.duration)):
        if value is not None and value != "":
            result[name] = value
    if entry.response_headers is not None:
        result["responseHeaders"], more = redact(entry.response_headers, reveal)
        redacted += [n for n in more if n not in redacted]
    if entry.failed:
        result["error"] = entry.error
    if entry.from_cache:
        result["fromCache"] = True
    result["redactedHeaders"] = redacted
    body, encoded = (None, None)
    if entry.finished and not entry.failed and entry.status is not None:
        body, encoded = body_of(entry, timeout_s)
    result["bodyAvailable"] = body is not None
    if body is not None:
        result["bodyEncoding"] = "base64" if encoded else "text"
        result["responseBody"] = body[:MAX_BODY]
        result["responseBodyTruncated"] = len(body) > MAX_BODY
    return result


def body_bytes(hub_: Hub, agent, request_id: Any, timeout_s: float) -> tuple[bytes, str, Entry]:
    entry = find_entry(hub_, agent, request_id)
    body, encoded = (None, None)
    if entry.finished and not entry.failed:
        body, encoded = body_of(entry, timeout_s)
    if body is None:
        raise BPError("action_not_verified", "The response body is not available (not finished, failed, "
                      "evicted by the browser, or the tab is gone).", context={"reason": "no_body", "id": entry.id})
    data = base64.b64decode(body) if encoded else body.encode("utf-8")
    return data, entry.mime or "application/octet-stream", entry


def clear(hub_: Hub, agent) -> dict[str, Any]:
    state = hub_.state(agent)
    with hub_.lock:
        state.entries.clear()
        state.by_request.clear()
        state.dropped = state.pending_bytes = 0
    return {}
