"""Per-Agent network journal and rules, HTTP auth answers, console and page-error journals.

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
- `Fetch.enable` (pattern `*`, request stage) only on sessions of tabs held by a key that has
  rules or HTTP credentials; `Fetch.disable` when the last goes. Every paused request is
  answered at once on the relay thread (fail / fulfill / continue); any error continues it.
- `Runtime.enable` (needed for console.* and uncaught exceptions; observable by pages) comes
  with the hold like Network. Chrome replays the messages it kept for the current document when
  Runtime is enabled, so messages of a user tab's current document from before `bp tab N` are
  kept too; those of earlier documents are not. Console arguments stay in Chrome's "console"
  object group; it is released every CONSOLE_RELEASE_EVERY messages so that a chatty page does
  not keep its logged objects alive.

Out-of-process iframes of a tab share its listeners, journal and rules from the moment their
session attaches (broker/tabs/session.py calls `targets.on_frame_session`); `Fetch.enable` is sent
again 0.3 s later and on the tab's next command, since the first one does not survive the
frame's commit: requests of the frame's first moments may escape rules. Service workers' own
requests are not covered.

Secrets: header values, bodies, cookies, credentials and console text never reach the log or
an error message. In results, Cookie / Set-Cookie / Authorization / Proxy-Authorization and
API-key headers are redacted unless asked for (`bp net show --reveal`).
"""

import base64
import collections
import logging
import os
import re
import threading
import time

from bp import globs
from bp.text import loads as load_event
from bp.errors import BPError, invalid_argument

log = logging.getLogger("broker.network")

MAX_ENTRIES = 500  # per key
MAX_URL = 16384
DATA_URL_PREFIX = 64
MAX_PENDING_EVENT = 64 * 1024  # a larger Network event is parsed as it arrives
MAX_PENDING_BYTES = 4 * 1024 * 1024  # per key: past this, everything pending is parsed
CONSOLE_RELEASE_EVERY = 200
MAX_HEADERS = 128
MAX_HEADER_VALUE = 8192
MAX_POST_STORED = 16 * 1024
MAX_BODY = 64 * 1024
MAX_POST_SHOWN = 64 * 1024
MAX_RULES = 64
MAX_MOCK_BODY = 1024 * 1024
MAX_CONSOLE = 500
MAX_ERRORS = 200
MAX_TEXT = 4096
MAX_AUTH_ATTEMPTS = 1
FRAME_REFRESH_S = 0.3
REDACTED = "[redacted]"
NETWORK_BUFFERS = {"maxTotalBufferSize": 16 * 1024 * 1024, "maxResourceBufferSize": 4 * 1024 * 1024}
SENSITIVE_HEADERS = frozenset({"cookie", "set-cookie", "authorization", "proxy-authorization", "x-api-key",
                               "api-key", "x-auth-token", "x-csrf-token", "x-xsrf-token"})
LEVELS = ("debug", "info", "warning", "error")
_LEVEL_OF = {"log": "info", "info": "info", "debug": "debug", "dir": "info", "dirxml": "info", "table": "info",
             "trace": "debug", "clear": "info", "startGroup": "info", "startGroupCollapsed": "info",
             "endGroup": "info", "assert": "error", "profile": "debug", "profileEnd": "debug", "count": "debug",
             "timeEnd": "debug", "warning": "warning", "error": "error"}


def glob_matcher(pattern, field="url"):
    """A case-insensitive full-match glob where only `*` is special (contract §1.3), in linear time."""
    return globs.matcher(pattern, field)


# Header names Chrome refuses to override in continueRequest/fulfillRequest, or that would change
# where or how a request travels; refused when a rule is added.
FORBIDDEN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
                               "te", "trailer", "proxy-connection", "expect", "http2-settings"})
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
_HEADER_VALUE_BAD = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # CR, LF, NUL...: tab is allowed
_URL_CREDENTIALS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@")


def check_header(name, value, field="headers"):
    """invalid_argument unless `name: value` is a header a rule may set (RFC 9110 token name, no
    control character in the value, not a hop-by-hop or routing header)."""
    if not isinstance(name, str) or not HEADER_NAME_RE.match(name):
        raise invalid_argument(field, "A header name is a token: letters, digits and !#$%&'*+-.^_`|~.")
    if name.lower() in FORBIDDEN_HEADERS:
        raise invalid_argument(field, f"The {name} header cannot be set by a rule.", header=name[:64])
    if not isinstance(value, str) or len(value) > MAX_HEADER_VALUE or _HEADER_VALUE_BAD.search(value):
        raise invalid_argument(field, f"The value of {name} holds a line break or control character (or is over "
                               f"{MAX_HEADER_VALUE} characters).", header=name[:64])


def without_credentials(url):
    """The URL with any user:password@ removed: the journal never keeps URL credentials."""
    return _URL_CREDENTIALS.sub(r"\1", url, count=1)


def _now_ms():
    return int(time.time() * 1000)


def _headers(raw):
    """CDP headers (object) -> bounded [{name, value}]."""
    rows = []
    for name, value in (raw or {}).items():
        if len(rows) >= MAX_HEADERS:
            break
        for part in str(value).split("\n"):  # Chrome joins repeated headers with newlines
            rows.append({"name": str(name)[:256], "value": part[:MAX_HEADER_VALUE]})
    return rows


def redact(rows, reveal):
    if reveal:
        return rows, []
    out, redacted = [], []
    for row in rows:
        if row["name"].lower() in SENSITIVE_HEADERS:
            out.append({"name": row["name"], "value": REDACTED})
            if row["name"].lower() not in redacted:
                redacted.append(row["name"].lower())
        else:
            out.append(row)
    return out, redacted


class Entry:
    __slots__ = ("id", "seq", "session", "request_id", "method", "url", "url_length", "type", "status",
                 "status_text", "mime", "from_cache", "failed", "error", "started", "started_mono", "duration", "size",
                 "request_headers", "response_headers", "post_data", "post_truncated", "has_post", "finished",
                 "blocked_by", "rule_refused", "pending", "pending_bytes")

    def __init__(self, seq, session, request_id, request=None, resource_type=None, at=None):
        self.seq = seq
        self.id = f"req-{seq}"
        self.session = session
        self.request_id = request_id
        self.method, self.url, self.url_length, self.type = "GET", "", None, "other"
        self.status = self.status_text = self.mime = self.error = self.duration = self.size = None
        self.from_cache = self.failed = self.finished = self.has_post = self.post_truncated = False
        self.started = _now_ms()
        self.started_mono = time.monotonic() if at is None else at
        self.request_headers, self.response_headers, self.post_data = [], None, None
        self.blocked_by = None
        self.rule_refused = None  # why Chrome refused a rule's change; the request went on unmodified
        self.pending = []  # [(method, raw event bytes, monotonic arrival)] not parsed yet (Hub.raw_event)
        self.pending_bytes = 0
        if request is not None:
            self.request(request, resource_type)

    def request(self, request, resource_type):
        self.method = str(request.get("method") or "GET")[:32]
        url = without_credentials(str(request.get("url") or ""))
        # A data: URL can be megabytes of one image: its scheme and type are what says something.
        cut = DATA_URL_PREFIX if url[:5].lower() == "data:" else MAX_URL
        if len(url) > cut:
            self.url, self.url_length = url[:cut], len(url)  # the row says it was cut (urlLength)
        else:
            self.url = url
        self.type = str(resource_type or "other").lower()[:32]
        self.request_headers = _headers(request.get("headers"))
        post = request.get("postData")
        self.has_post = bool(request.get("hasPostData") or post)
        self.post_data = post[:MAX_POST_STORED] if isinstance(post, str) else None
        self.post_truncated = isinstance(post, str) and len(post) > MAX_POST_STORED

    def response(self, response):
        self.status = response.get("status")
        self.status_text = str(response.get("statusText") or "")[:256]
        self.mime = str(response.get("mimeType") or "")[:256] or None
        self.from_cache = bool(response.get("fromDiskCache") or response.get("fromPrefetchCache")
                               or response.get("fromServiceWorker"))
        self.response_headers = _headers(response.get("headers"))

    def done(self, size=None, error=None, at=None):
        self.finished = True
        self.duration = int(((time.monotonic() if at is None else at) - self.started_mono) * 1000)
        if size is not None:
            self.size = int(size)
        if error is not None:
            self.failed = True
            self.error = str(error)[:256]

    def row(self):
        row = {"id": self.id, "method": self.method, "url": self.url, "type": self.type, "startedAt": self.started}
        if self.url_length is not None:
            row["urlLength"] = self.url_length  # the url is its first characters only
        if self.status is not None:
            row["status"] = self.status
        if self.mime:
            row["mimeType"] = self.mime
        if self.size is not None:
            row["size"] = self.size
        if self.duration is not None:
            row["durationMs"] = self.duration
        if self.from_cache:
            row["fromCache"] = True
        if self.failed:
            row["failed"] = True
            row["errorText"] = self.error
        if self.rule_refused:
            row["ruleRefused"] = self.rule_refused
        return row


class Rule:
    def __init__(self, kind, pattern, status=None, body=None, content_type=None, headers=None):
        self.id = "rule:" + os.urandom(8).hex()
        self.kind = kind
        self.pattern = pattern
        self.match = glob_matcher(pattern, "pattern")
        self.status = status
        self.body = body  # bytes (mock)
        self.content_type = content_type
        self.headers = headers or []
        self.added = time.monotonic()

    def row(self):
        row = {"id": self.id, "type": self.kind, "pattern": self.pattern}
        if self.kind == "mock":
            row["status"] = self.status
            row["bodySize"] = len(self.body)
            if self.content_type:
                row["contentType"] = self.content_type
        if self.kind == "headers":
            # Echoed like `net show` does: the values of sensitive headers never leave again.
            row["headers"], redacted = redact([dict(h) for h in self.headers], False)
            if redacted:
                row["redactedHeaders"] = redacted
        return row


class KeyState:
    def __init__(self, agent):
        self.agent = agent
        self.entries = collections.OrderedDict()  # id -> Entry, oldest first
        self.by_request = {}  # (session id, CDP request id) -> Entry
        self.seq = 0
        self.dropped = 0
        self.rules = []  # newest last
        self.auth = None  # {"username", "password", "origin"?}
        self.auth_attempts = {}  # Fetch request id -> attempts (bounded)
        self.console = collections.deque(maxlen=MAX_CONSOLE)
        self.errors = collections.deque(maxlen=MAX_ERRORS)
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


class Hub:
    def __init__(self, broker):
        self.broker = broker
        self.lock = threading.RLock()
        self.states = {}  # key -> KeyState
        self._checks = None  # threads that read Chrome's answer to a rule's change (_send_checked)
        self.settles = ()  # (tab raw id, sink) of actions settling now (broker/actions/settle.py)

    # --- settle hook: an acting command hears its tab's requests and sent WebSocket frames -------

    def watch(self, raw, sink):
        """sink(method, request_id, raw_bytes_or_params, at) on the relay thread for each Network
        event of tab `raw` (its frames included) until unwatch(sink). Cheap when nobody watches."""
        with self.lock:
            self.settles = self.settles + ((raw, sink),)

    def unwatch(self, sink):
        with self.lock:
            self.settles = tuple(w for w in self.settles if w[1] != sink)  # a bound method is made anew

    def _tell(self, session, method, request_id, event, at):
        tab = session.tab_raw_id or getattr(session, "raw_id", None)
        for raw, sink in self.settles:
            if raw == tab:
                try:
                    sink(method, request_id, event, at)
                except Exception:
                    log.exception("settle hook failed (%s)", method)

    # --- state per key ---------------------------------------------------------------------------

    def state(self, agent, create=True):
        with self.lock:
            found = self.states.get(agent.key)
            if found is not None and found.agent is not agent:
                found = None  # the key was released and came back: start clean
                del self.states[agent.key]
            if found is None and create:
                found = self.states[agent.key] = KeyState(agent)
            return found

    def release_key(self, key):
        with self.lock:
            self.states.pop(key, None)
        self.sync_all()  # its tabs are nobody's now: not journaled, and their interception goes

    def _owner_state(self, session):
        """The KeyState of the live Agent holding this session's tab (made on first need: the
        journal starts when the tab is held), or None."""
        key = self._holder(session)
        agent = self.broker.agents.get(key) if key else None
        return self.state(agent) if agent is not None else None

    # --- sessions --------------------------------------------------------------------------------

    def attach(self, session):
        """Hook of every newly attached tab session (on the tab's worker, broker/server.py)."""
        session.raw_network = self.raw_event  # frames' sessions share it (broker/tabs/session.py FrameSession)
        session.listeners.append(self.listener)
        session.targets.on_frame_session = self.frame_attached
        self.sync(session)

    def frame_attached(self, child):
        """An out-of-process iframe of a tab attached (relay thread): same journal and rules as
        its tab. Its requests before this moment are not seen."""
        child.fetch_state = None
        child.runtime_enabled = child.network_enabled = False
        child.fetch_refreshed = False
        self.sync(child)
        # Measured: a Fetch.enable sent as the frame attaches does not survive the frame's first
        # commit (Network.enable does). Send it again shortly after, and on the tab's next command.
        timer = threading.Timer(FRAME_REFRESH_S, self.refresh_frame, (child,))
        timer.daemon = True
        timer.start()

    def refresh_frame(self, child):
        if child.alive and not child.fetch_refreshed:
            child.fetch_refreshed = True
            if child.fetch_state is not None:
                child.fetch_state = "refresh"  # differs from any wanted state: sent again
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
        want = None
        if state is not None and (state.rules or state.auth):
            want = (RULE_PATTERNS, bool(state.auth))  # every request: bounds are checked first
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

    # --- navigation bounds (bp/policy.py, origins) ------------------------------------------------

    def bounds_patterns(self, session):
        """What the person's navigation bounds need intercepted on this session, or None: the
        documents of a tab someone holds (all its requests with origins.subresources), nothing
        on a tab nobody holds."""
        rules = self.broker.policy
        if not rules.bounds or self._holder(session) is None:
            return None
        if rules.subresources:
            return RULE_PATTERNS
        if session.tab_raw_id is not None:
            return None  # an out-of-process iframe: its documents are not top-level navigations
        return DOCUMENT_PATTERNS

    def _holder(self, session):
        """The key of the live Agent holding this session's tab (managed, popup, controlled)."""
        broker = self.broker
        try:
            raw = session.tab_raw_id or session.raw_id
            key, _ = broker.agents.owner(raw, broker.browser.popups())
        except Exception:
            return None
        return key if key and broker.agents.get(key) is not None else None

    def _out_of_bounds(self, session, params):
        """The origin a paused request would reach against the bounds, or None when it may go."""
        rules = self.broker.policy
        if not rules.bounds:
            return None
        request = params.get("request") or {}
        top_level = (params.get("resourceType") == "Document" and session.tab_raw_id is None
                     and params.get("frameId") == session.raw_id)
        if not (top_level or rules.subresources):
            return None
        if (not session.guard) and self._holder(session) is None:
            return None
        url = str(request.get("url") or "")
        if rules.url_allowed(url):
            return None
        from bp import policy

        return policy.origin_of(url)

    def _blocked(self, session, origin):
        """Remember a stopped navigation where the action that caused it will look: the tab, or
        for a popup the tab that opened it."""
        log.info("a navigation outside the policy's bounds was stopped")
        sessions = [session]
        opener = session.opener_raw
        if opener:
            sessions += [s for s in list(session.targets.sessions.values())
                         if getattr(s, "raw_id", None) == opener and not s.guard]
        for target in sessions:
            target.blocked_navigations += 1
            target.blocked_origin = origin

    def _guard_done(self, session, params):
        if session.one_shot and params.get("resourceType") == "Document" \
                and params.get("frameId") == session.raw_id:
            session.one_shot = False
            self._send(session.conn, "Target.detachFromTarget", {"sessionId": session.session_id})

    def guard_popups(self, conn):
        """With navigation bounds in force, every new tab waits (waitForDebuggerOnStart) until
        the broker has seen whether it is a popup of a held tab: a popup's first navigation
        starts in its own target, out of reach of its opener's interception. A popup of a held
        tab gets interception before it runs; any other new tab is let go at once, untouched."""
        if not self.broker.policy.bounds or conn.popups_guarded:
            return
        conn.popups_guarded = True
        self.broker.browser.targets.on_attached = self.attached
        conn.send_nowait("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True,
                                                  "filter": [{"type": "page", "exclude": False}]})

    def attached(self, params):
        """Browser-level Target.attachedToTarget (relay thread)."""
        conn = self.broker.browser.connection
        session_id = params.get("sessionId")
        info = params.get("targetInfo") or {}
        if conn is None or not session_id or not params.get("waitingForDebugger"):
            return  # an explicit attach (a TabSession's) or a tab that existed before: not ours to judge
        held = False
        try:
            opener = info.get("openerId")
            kind = None
            if opener:
                key, kind = self.broker.agents.owner(opener, self.broker.browser.popups())
                held = bool(key) and self.broker.agents.get(key) is not None
            if held:
                guard = PopupGuard(conn, self.broker.browser.targets, session_id, info.get("targetId"), opener)
                # A popup of a controlled user tab is a user tab again once its first document is
                # judged (BR-25): the guard leaves then. A managed tab's popup stays held.
                guard.one_shot = kind == "user_tab"
                guard.listeners.append(self.listener)
                self.broker.browser.targets.sessions[session_id] = guard
                patterns = RULE_PATTERNS if self.broker.policy.subresources else DOCUMENT_PATTERNS
                conn.send_nowait("Fetch.enable", {"patterns": [dict(p) for p in patterns]}, session_id=session_id)
        except Exception:  # whatever went wrong, the new tab must not stay paused
            log.exception("the popup guard could not judge a new tab")
            held = False
        try:
            conn.send_nowait("Runtime.runIfWaitingForDebugger", None, session_id=session_id)
            if not held:
                conn.send_nowait("Target.detachFromTarget", {"sessionId": session_id})
        except BPError:
            pass

    def on_use(self, session):
        """Hook of every later use of a tab session: interception follows the tab's current holder."""
        self.sync_tree(session)

    def resync(self, raw):
        """A tab changed hands (released, or another one taken instead): its interception follows."""
        for candidate, session in self.broker.browser.workers.sessions():
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
        for _, session in self.broker.browser.workers.sessions():
            self.sync_tree(session)

    # --- events (janitor-relay thread: bookkeeping and fire-and-forget sends only) ---------------

    def listener(self, session, method, params):
        """True when the event is consumed here (it then stays out of the tab's event buffer)."""
        domain = method.split(".", 1)[0]
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
    def _send(session, method, params):
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
                    _apply(entry, "redirect", params, time.monotonic())
                state.seq += 1
                entry = Entry(state.seq, session, request_id)
                state.add(entry)
            elif entry is None:
                return
            else:
                self._materialize(state, entry)  # in arrival order
            _apply(entry, method, params, time.monotonic())

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

    def _materialize(self, state, entry):
        """Parse an entry's pending events, in arrival order (under self.lock)."""
        if not entry.pending:
            return
        pending, entry.pending = entry.pending, []
        state.pending_bytes -= entry.pending_bytes
        entry.pending_bytes = 0
        for method, raw, at in pending:
            try:
                _apply(entry, method, load_event(raw).get("params") or {}, at)
            except Exception:
                log.exception("network event handling failed (%s)", method)

    def materialized(self, state):
        """The key's entries, oldest first, every one parsed (under self.lock)."""
        for entry in state.entries.values():
            self._materialize(state, entry)
        return state.entries.values()

    def _fetch(self, session, method, params):
        request_id = params.get("requestId")
        state = self._owner_state(session)
        if method == "Fetch.authRequired":
            self._auth(session, state, params)
            return
        if method != "Fetch.requestPaused":
            return
        if params.get("responseStatusCode") is not None or params.get("responseErrorReason"):
            self._send(session, "Fetch.continueRequest", {"requestId": request_id})
            return
        outside = self._out_of_bounds(session, params)
        if outside is not None:  # the person's bounds come before any Agent's rule
            self._send(session, "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
            self._blocked(session, outside)
            self._guard_done(session, params)
            return
        if session.guard:  # a popup guard checks bounds only; rules run on the tab's own session
            self._send(session, "Fetch.continueRequest", {"requestId": request_id})
            self._guard_done(session, params)
            return
        request = params.get("request") or {}
        url = str(request.get("url") or "")
        rules = list(state.rules) if state is not None else []
        rule = choose(rules, url)
        if rule is None:
            self._send(session, "Fetch.continueRequest", {"requestId": request_id})
        elif rule.kind == "block":
            self._send(session, "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
        elif rule.kind == "mock":
            headers = [{"name": "Content-Type", "value": rule.content_type or "text/plain; charset=utf-8"},
                       {"name": "Content-Length", "value": str(len(rule.body))},
                       {"name": "Access-Control-Allow-Origin", "value": "*"}]
            self._send_checked(session, state, params, "Fetch.fulfillRequest", {
                "requestId": request_id, "responseCode": rule.status, "responseHeaders": headers,
                "body": base64.b64encode(rule.body).decode("ascii")})
        else:
            merged = {}
            for name, value in (request.get("headers") or {}).items():
                merged[name.lower()] = (name, str(value))
            for r in sorted([r for r in rules if r.kind == "headers" and r.match(url)], key=lambda r: r.added):
                for h in r.headers:  # later rules override earlier ones for the same name
                    merged[h["name"].lower()] = (h["name"], h["value"])
            self._send_checked(session, state, params, "Fetch.continueRequest", {"requestId": request_id, "headers": [
                {"name": n, "value": v} for n, v in merged.values()]})

    def _send_checked(self, session, state, paused, method, params):
        """Send a rule's change of a paused request and read Chrome's answer off the relay thread:
        if Chrome refuses it, the request continues unmodified (never left paused) and its
        journal entry says why."""
        def run():
            try:
                session.call(method, params, timeout_s=10.0)
                return
            except BPError as exc:
                reason = exc.message[:200]
            log.warning("the browser refused a network rule's %s; the request continues unmodified", method)
            self._send(session, "Fetch.continueRequest", {"requestId": params["requestId"]})
            if state is not None:
                with self.lock:
                    entry = state.by_request.get((session.session_id, paused.get("networkId")))
                    if entry is not None:
                        entry.rule_refused = reason

        self._checker().submit(run)

    def _checker(self):
        with self.lock:
            if self._checks is None:
                from concurrent.futures import ThreadPoolExecutor

                self._checks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="net-rule")
            return self._checks

    def _auth(self, session, state, params):
        request_id = params.get("requestId")
        challenge = params.get("authChallenge") or {}
        answer = {"response": "Default"}
        creds = state.auth if state is not None else None
        if creds is not None and (not creds.get("origin") or
                                  str(challenge.get("origin") or "").lower().rstrip("/") == creds["origin"]):
            with self.lock:
                tries = state.auth_attempts.get(request_id, 0)
                if len(state.auth_attempts) > 1024:
                    state.auth_attempts.clear()
                state.auth_attempts[request_id] = tries + 1
            if tries < MAX_AUTH_ATTEMPTS:
                answer = {"response": "ProvideCredentials", "username": creds["username"],
                          "password": creds["password"]}
            else:
                answer = {"response": "CancelAuth"}  # wrong credentials: the page gets its 401
        self._send(session, "Fetch.continueWithAuth", {"requestId": request_id, "authChallengeResponse": answer})

    def _runtime(self, session, method, params):
        if method not in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown"):
            return
        state = self._owner_state(session)
        if state is None:
            return
        if method == "Runtime.consoleAPICalled":
            session.console_seen += 1
            if session.console_seen % CONSOLE_RELEASE_EVERY == 0:
                # The logged values' handles, which Browser Pilot never uses, keep them alive.
                self._send(session, "Runtime.releaseObjectGroup", {"objectGroup": "console"})
        url = ""
        try:
            raw = session.tab_raw_id or session.raw_id
            url = (self.broker.browser.targets.info(raw) or {}).get("url") or ""
        except Exception:
            pass
        with self.lock:
            if method == "Runtime.consoleAPICalled":
                kind = params.get("type") or "log"
                text = " ".join(_remote_text(a) for a in (params.get("args") or [])[:32])
                state.console_seq += 1
                if len(state.console) == state.console.maxlen:
                    state.console_dropped += 1
                state.console.append({"id": f"console-{state.console_seq}", "level": _LEVEL_OF.get(kind, "info"),
                                      "type": kind[:32], "text": text[:MAX_TEXT], "truncated": len(text) > MAX_TEXT,
                                      "url": url[:MAX_URL], "timestamp": int(params.get("timestamp") or _now_ms())})
            else:
                details = params.get("exceptionDetails") or {}
                exc = details.get("exception") or {}
                text = str(exc.get("description") or details.get("text") or "Uncaught exception")
                state.console_seq += 1
                if len(state.errors) == state.errors.maxlen:
                    state.errors_dropped += 1
                row = {"id": f"error-{state.console_seq}", "message": text[:MAX_TEXT], "truncated": len(text) > MAX_TEXT,
                       "url": str(details.get("url") or url)[:MAX_URL],
                       "timestamp": int(params.get("timestamp") or _now_ms())}
                if details.get("lineNumber") is not None:
                    row["line"] = details["lineNumber"] + 1
                    row["column"] = (details.get("columnNumber") or 0) + 1
                state.errors.append(row)


JOURNALED = frozenset({"Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished",
                       "Network.loadingFailed", "Network.requestWillBeSentExtraInfo",
                       "Network.responseReceivedExtraInfo"})
# What an acting command's settle hears (Hub.watch): requests starting and ending, and the
# WebSocket frames the page sends (bp/janitor_pipe.py lets those through; received ones stay dropped).
SETTLE_HEARS = frozenset({"Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished",
                          "Network.loadingFailed", "Network.webSocketFrameSent"})
# Chrome writes the event's method, then its params in protocol order: requestId comes first.
_REQUEST_ID = re.compile(rb'\{"method":"Network\.[A-Za-z]{1,64}","params":\{"requestId":"([^"\\]{1,128})"')


def _apply(entry, method, params, at):
    """One Network event (or "redirect": a requestWillBeSent of the same request id, whose
    redirectResponse ends the entry) applied to its journal entry."""
    if method == "redirect":
        if params.get("redirectResponse"):
            entry.response(params["redirectResponse"])
            entry.done(at=at)
    elif method == "Network.requestWillBeSent":
        entry.request(params.get("request") or {}, params.get("type"))
    elif method == "Network.requestWillBeSentExtraInfo":
        headers = _headers(params.get("headers"))
        if headers:
            entry.request_headers = headers  # the headers actually sent (Cookie included)
    elif method == "Network.responseReceivedExtraInfo":
        headers = _headers(params.get("headers"))
        if headers:
            entry.response_headers = headers  # Set-Cookie included
            if entry.status is None:
                entry.status = params.get("statusCode")
    elif method == "Network.responseReceived":
        extra = entry.response_headers
        entry.response(params.get("response") or {})
        if extra and len(extra) >= len(entry.response_headers or []):
            entry.response_headers = extra
        if params.get("type"):
            entry.type = str(params["type"]).lower()[:32]
    elif method == "Network.loadingFinished":
        entry.done(size=params.get("encodedDataLength"), at=at)
    elif method == "Network.loadingFailed":
        entry.done(error=params.get("blockedReason") or params.get("errorText") or "failed", at=at)


def _remote_text(arg):
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if arg.get("unserializableValue"):
        return str(arg["unserializableValue"])
    return str(arg.get("description") or arg.get("type") or "")


RULE_PATTERNS = ({"urlPattern": "*", "requestStage": "Request"},)
DOCUMENT_PATTERNS = ({"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"},)


class PopupGuard:
    """Our auto-attached session of a popup a held tab opened: only Fetch (navigation bounds)
    runs on it, from before its first request, for as long as the popup lives."""

    guard = True
    one_shot = False  # leave once the first document is judged (a controlled user tab's popup)
    tab_raw_id = None  # a popup is a tab of its own
    blocked_navigations = 0
    blocked_origin = None

    def __init__(self, conn, targets, session_id, raw_id, opener_raw):
        self.conn, self.targets, self.session_id = conn, targets, session_id
        self.raw_id, self.opener_raw = raw_id, opener_raw
        self.listeners = []
        self.alive = True

    def send_nowait(self, method, params=None):
        self.conn.send_nowait(method, params, session_id=self.session_id)

    def call(self, method, params=None, timeout_s=10.0, abort=None):
        return self.conn.cdp(method, params, session_id=self.session_id, timeout_s=timeout_s, abort=abort)

    def deliver(self, method, params):
        for listener in self.listeners:
            if listener(self, method, params):
                return

    def detached(self):
        self.alive = False


def choose(rules, url):
    """Deterministic precedence: block > mock > headers; within a kind the most recently added
    rule wins (headers rules all apply, later ones overriding the same header)."""
    for kind in ("block", "mock", "headers"):
        for rule in reversed(rules):
            if rule.kind == kind and rule.match(url):
                return rule
    return None




# --- commands (request threads) ------------------------------------------------------------------

STATUS_RE = re.compile(r"^([1-5])xx$|^([0-9]{3})$", re.I)


def list_requests(hub_, agent, args):
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


def _seq_of(value, field):
    m = re.match(r"^(?:req-)?([0-9]{1,12})$", str(value))
    if not m:
        raise invalid_argument(field, "Give a request id like req-12.")
    return int(m.group(1))


def find_entry(hub_, agent, request_id):
    state = hub_.state(agent)
    seq = _seq_of(request_id, "id")
    with hub_.lock:
        entry = state.entries.get(f"req-{seq}")
        if entry is not None:
            hub_._materialize(state, entry)
    if entry is None:
        raise invalid_argument("id", "No such request in this Agent's journal (see 'bp net').")
    return entry


def body_of(entry, timeout_s):
    """(bytes or text, base64?) of the response body, or (None, reason)."""
    if not entry.session.alive:
        return None, "tab_gone"
    try:
        reply = entry.session.call("Network.getResponseBody", {"requestId": entry.request_id},
                                   timeout_s=min(10.0, timeout_s))
    except BPError:
        return None, "unavailable"
    return reply.get("body") or "", bool(reply.get("base64Encoded"))


def show(hub_, agent, args, timeout_s):
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


def body_bytes(hub_, agent, request_id, timeout_s):
    entry = find_entry(hub_, agent, request_id)
    body, encoded = (None, None)
    if entry.finished and not entry.failed:
        body, encoded = body_of(entry, timeout_s)
    if body is None:
        raise BPError("action_not_verified", "The response body is not available (not finished, failed, "
                      "evicted by the browser, or the tab is gone).", context={"reason": "no_body", "id": entry.id})
    data = base64.b64decode(body) if encoded else body.encode("utf-8")
    return data, entry.mime or "application/octet-stream", entry


def clear(hub_, agent):
    state = hub_.state(agent)
    with hub_.lock:
        state.entries.clear()
        state.by_request.clear()
        state.dropped = state.pending_bytes = 0
    return {}


def add_rule(hub_, agent, args):
    state = hub_.state(agent)
    kind, pattern = args["type"], args["pattern"]
    if kind == "mock":
        if "bodyBase64" in args:
            try:
                body = base64.b64decode(args["bodyBase64"], validate=True)
            except ValueError:
                raise invalid_argument("file", "The mock body is not valid base64.") from None
        else:
            body = (args.get("body") or "").encode("utf-8")
        if len(body) > MAX_MOCK_BODY:
            raise invalid_argument("body", f"A mock body is at most {MAX_MOCK_BODY} bytes.")
        if args.get("contentType") is not None:
            check_header("Content-Type", args["contentType"], "contentType")
        rule = Rule("mock", pattern, status=args.get("status", 200), body=body,
                    content_type=args.get("contentType"))
    elif kind == "headers":
        for header in args["headers"]:
            check_header(header["name"], header["value"])
        rule = Rule("headers", pattern, headers=[{"name": h["name"], "value": h["value"]} for h in args["headers"]])
    else:
        rule = Rule("block", pattern)
    with hub_.lock:
        if len(state.rules) >= MAX_RULES:
            raise BPError("result_too_large", f"Too many network rules (limit {MAX_RULES}).", retryable=True,
                          context={"limit": "rules", "max": MAX_RULES})
        state.rules.append(rule)
    hub_.sync_all()
    return {"rule": rule.row()}


def list_rules(hub_, agent):
    state = hub_.state(agent)
    with hub_.lock:
        return {"rules": [r.row() for r in reversed(state.rules)]}  # precedence order within a kind


def remove_rules(hub_, agent, args):
    state = hub_.state(agent)
    with hub_.lock:
        if args.get("all"):
            removed = len(state.rules)
            state.rules = []
        else:
            wanted = args["ruleId"]
            if not wanted.startswith("rule:"):
                wanted = "rule:" + wanted
            keep = [r for r in state.rules if r.id != wanted]
            if len(keep) == len(state.rules):
                raise invalid_argument("ruleId", "No such rule (see 'bp net rules').")
            removed, state.rules = 1, keep
    hub_.sync_all()
    return {"removed": removed}


def set_auth(hub_, agent, args):
    state = hub_.state(agent)
    origin = args.get("origin")
    if origin:
        origin = origin.lower().rstrip("/")
        if not re.match(r"^https?://[^/\s]+$", origin):
            raise invalid_argument("origin", "Give an origin like https://example.com (scheme, host, port).")
    with hub_.lock:
        state.auth = {"username": args["username"], "password": args["password"]}
        if origin:
            state.auth["origin"] = origin
        state.auth_attempts.clear()
    hub_.sync_all()
    return {"origin": origin} if origin else {}


def clear_auth(hub_, agent):
    state = hub_.state(agent)
    with hub_.lock:
        had, state.auth = state.auth is not None, None
    hub_.sync_all()
    return {"cleared": had}


def console_rows(hub_, agent, args):
    state = hub_.state(agent)
    limit = args.get("limit", 50)
    level = args.get("level")
    floor = LEVELS.index(level) if level else 0
    with hub_.lock:
        rows = [dict(r) for r in state.console if LEVELS.index(r["level"]) >= floor]
        dropped = state.console_dropped
    truncated = len(rows) > limit
    result = {"messages": rows[-limit:], "total": len(rows), "truncated": truncated}
    if dropped:
        result["dropped"] = dropped
    return result


def error_rows(hub_, agent, args):
    state = hub_.state(agent)
    limit = args.get("limit", 50)
    with hub_.lock:
        rows = [dict(r) for r in state.errors]
        dropped = state.errors_dropped
    result = {"errors": rows[-limit:], "total": len(rows), "truncated": len(rows) > limit}
    if dropped:
        result["dropped"] = dropped
    return result
