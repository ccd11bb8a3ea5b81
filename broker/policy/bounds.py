"""The person's navigation bounds (bp/policy.py `origins`), enforced on the tabs Agents hold.

Where they are enforced:
- `bp open` to an origin outside them is refused before the tab is touched (check_open, from
  broker/server.py check_policy);
- taking a user tab whose page is outside them is refused (broker/tabs/routing.py check_tab);
- every document request (every request, with `subresources`) of a held tab is paused by Fetch
  and failed inside the browser when it would leave them (Bounds, part of the network Hub:
  broker/network/journal.py);
- a popup of a held tab is held from before its first request by a PopupGuard.
"""

import logging
from typing import TYPE_CHECKING, Any

from bp import ops, policy
from bp.policy import Policy
from bp.errors import BPError
from broker.tabs.session import Session

if TYPE_CHECKING:
    from broker.tabs.session import Workers

log = logging.getLogger("broker.network")

ALL_REQUESTS = ({"urlPattern": "*", "requestStage": "Request"},)
DOCUMENT_PATTERNS = ({"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"},)
# Network conditions that change nothing: a rule that lets a WebSocket through as it is.
_AS_IS = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
_EVERY_SOCKET = ("ws://*:*/*", "wss://*:*/*")


def socket_conditions(rules: policy.Policy) -> list[dict[str, Any]]:
    """`Network.emulateNetworkConditionsByRule` entries that take a held tab's WebSocket
    handshakes to origins outside the bounds offline (with `subresources`). Fetch never pauses a
    handshake and `Network.setBlockedURLs` does not stop one (measured, Chromium 156); per-URL
    offline emulation does, inside the browser, before a byte is sent. The first matching entry
    wins: the blocked origins (offline), then the allowed ones (as they are), then every other
    socket (offline) when there is an allow list."""
    out = [dict(_AS_IS, urlPattern=u, offline=True) for p in rules.block for u in p.socket_patterns()]
    if rules.allow is not None:
        out += [dict(_AS_IS, urlPattern=u) for p in rules.allow for u in p.socket_patterns()]
        out += [dict(_AS_IS, urlPattern=u, offline=True) for u in _EVERY_SOCKET]
    return out


class Bounds:
    """Hub's part that judges paused requests against the person's bounds and guards popups."""

    # The Hub's collaborators, handed to it (broker/network/journal.py): the person's policy, the
    # Agents, the browser and the tab workers. The last three are described, not imported: the
    # layers (tests/unit/test_layout.py) keep broker/agents.py and broker/browser/ out of reach
    # of this package.
    policy: "Policy"
    agents: Any  # broker/agents.py Agents
    browser: Any  # broker/browser/binding.py Browser
    workers: "Workers"

    if TYPE_CHECKING:
        @staticmethod
        def _send(session, method: str, params: dict[str, Any] | None) -> None: ...
        def listener(self, session, method: str, params: dict[str, Any]) -> bool: ...

    def bounds_patterns(self, session) -> tuple[dict[str, str], ...] | None:
        """What the person's navigation bounds need intercepted on this session, or None: the
        documents of a tab someone holds (all its requests with origins.subresources), nothing
        on a tab nobody holds."""
        rules = self.policy
        if not rules.bounds or self._holder(session) is None:
            return None
        return self._bounds_patterns(rules)

    def socket_rules(self, session) -> list[dict[str, Any]] | None:
        """The WebSocket conditions this session needs (socket_conditions), or None: only on a
        tab someone holds, with `subresources`."""
        rules = self.policy
        if not (rules.bounds and rules.subresources) or self._holder(session) is None:
            return None
        return socket_conditions(rules)

    @staticmethod
    def _bounds_patterns(rules: Policy) -> tuple[dict[str, str], ...]:
        if rules.subresources:
            return ALL_REQUESTS
        return DOCUMENT_PATTERNS  # an out-of-process iframe's documents too: frames stay inside

    def _holder(self, session) -> str | None:
        """The key of the live Agent holding this session's tab (managed, popup, controlled)."""
        try:
            raw = session.tab_raw_id or session.raw_id
            key, _ = self.agents.owner(raw, self.browser.popups())
        except Exception:
            return None
        return key if key and self.agents.get(key) is not None else None

    def _out_of_bounds(self, session, params: dict[str, Any]) -> str | None:
        """The origin a paused request would reach against the bounds, or None when it may go."""
        rules = self.policy
        if not rules.bounds:
            return None
        request = params.get("request") or {}
        if not (params.get("resourceType") == "Document" or rules.subresources):
            return None  # every document, a frame's too: what a frame shows is read and acted on
        if (not session.guard) and self._holder(session) is None:
            return None
        url = str(request.get("url") or "")
        if rules.url_allowed(url):
            return None
        return policy.origin_of(url)

    @staticmethod
    def _top_level(session, params: dict[str, Any]) -> bool:
        """Whether a paused request is the tab's own navigation (not a frame's, not a subresource)."""
        return (params.get("resourceType") == "Document" and session.tab_raw_id is None
                and params.get("frameId") == session.raw_id)

    def committed(self, session, params: dict[str, Any]) -> None:
        """Page.frameNavigated of a tab's main frame (relay thread). A document that commits
        without a request the bounds could judge — a back/forward-cache restore by history
        traversal, a prerender activation, a navigation of a user tab just taken — and lies
        outside the bounds is sent away at once (about:blank), and until another document
        commits every command on the tab is refused (check_tab). An error page (the browser's
        own, for a stopped navigation) shows nothing of the origin it names."""
        if not self.policy.bounds or not session.is_tab:
            return
        frame = params.get("frame") or {}
        if frame.get("parentId"):
            return  # a frame: its documents are judged as requests (every Document, _out_of_bounds)
        url = str(frame.get("url") or "")
        if frame.get("unreachableUrl") or self.policy.url_allowed(url) or self._holder(session) is None:
            session.outside_origin = None
            return
        origin = policy.origin_of(url)
        session.outside_origin = origin
        log.info("a held tab committed a page outside the policy's bounds without a request; sent away")
        self._blocked(session, origin)
        self._send(session, "Page.navigate", {"url": "about:blank"})

    def _blocked(self, session, origin: str | None) -> None:
        """Remember a stopped navigation where the action that caused it will look: the tab, or
        for a popup the tab that opened it."""
        log.info("a navigation outside the policy's bounds was stopped")
        sessions = [session]
        opener = session.opener_raw
        if opener:
            sessions += [s for s in list(session.targets.sessions.values())
                         if s.is_tab and s.raw_id == opener]
        for target in sessions:
            target.blocked_navigations += 1
            target.blocked_origin = origin

    def _guard_done(self, session, params: dict[str, Any]) -> None:
        if session.one_shot and params.get("resourceType") == "Document" \
                and params.get("frameId") == session.raw_id:
            session.one_shot = False
            self._send(session.conn, "Target.detachFromTarget", {"sessionId": session.session_id})

    def guard_popups(self, conn) -> None:
        """With navigation bounds in force, every new tab waits (waitForDebuggerOnStart) until
        the broker has seen whether it is a popup of a held tab: a popup's first navigation
        starts in its own target, out of reach of its opener's interception. A popup of a held
        tab gets interception before it runs; any other new tab is let go at once, untouched.
        With `subresources`, a service worker starting for the origin of a held tab is held the
        same way: its own requests (install, fetch handlers) are judged like the tab's."""
        if not self.policy.bounds or conn.popups_guarded:
            return
        conn.popups_guarded = True
        # Targets declares on_attached as None only (broker/browser/targets.py), not as the callback it holds.
        self.browser.targets.on_attached = self.attached  # pyright: ignore[reportAttributeAccessIssue]
        self.browser.targets.pause_frames = True  # a frame's first request waits for its interception
        kinds = [{"type": "page", "exclude": False}]
        if self.policy.subresources:
            kinds.append({"type": "service_worker", "exclude": False})
        conn.send_nowait("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True,
                                                  "filter": kinds})

    def _serves_held_tab(self, url: str) -> bool:
        """Whether a service worker of `url` serves the origin of a tab an Agent holds."""
        origin = policy.origin_of(url)
        for raw, session in self.workers.sessions():
            if self._holder(session) is not None and \
                    policy.origin_of((self.browser.targets.info(raw) or {}).get("url") or "") == origin:
                return True
        return False

    def attached(self, params: dict[str, Any]) -> None:
        """Browser-level Target.attachedToTarget (relay thread)."""
        conn = self.browser.connection
        session_id = params.get("sessionId")
        info = params.get("targetInfo") or {}
        if conn is None or not session_id or not params.get("waitingForDebugger"):
            return  # an explicit attach (a TabSession's) or a tab that existed before: not ours to judge
        held = False
        try:
            opener = info.get("openerId")
            kind = None
            if info.get("type") == "service_worker":
                # Shared by every tab of its origin, the person's own included: held while an
                # Agent holds a tab there (bounded subresources), never otherwise.
                opener = None
                held = self.policy.subresources and self._serves_held_tab(info.get("url") or "")
            elif opener:
                key, kind = self.agents.owner(opener, self.browser.popups())
                held = bool(key) and self.agents.get(key) is not None
            if held:
                guard = PopupGuard(conn, self.browser.targets, session_id, info.get("targetId"), opener)
                # A popup of a controlled user tab is a user tab again once its first document is
                # judged (BR-25): the guard leaves then. A managed tab's popup stays held.
                guard.one_shot = kind == "user_tab"
                guard.listeners.append(self.listener)
                self.browser.targets.sessions[session_id] = guard
                patterns = self._bounds_patterns(self.policy)
                conn.send_nowait("Fetch.enable", {"patterns": [dict(p) for p in patterns]}, session_id=session_id)
                if self.policy.subresources:
                    conn.send_nowait("Network.emulateNetworkConditionsByRule",
                                     {"matchedNetworkConditions": socket_conditions(self.policy)},
                                     session_id=session_id)
        except Exception:  # whatever went wrong, the new tab must not stay paused
            log.exception("the popup guard could not judge a new tab")
            held = False
        try:
            conn.send_nowait("Runtime.runIfWaitingForDebugger", None, session_id=session_id)
            if not held:
                conn.send_nowait("Target.detachFromTarget", {"sessionId": session_id})
        except BPError:
            pass


class PopupGuard(Session):
    """Our auto-attached session of a popup a held tab opened: only Fetch (navigation bounds)
    runs on it, from before its first request, for as long as the popup lives."""

    guard = True
    one_shot = False  # leave once the first document is judged (a controlled user tab's popup)

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


def check_open(rules: policy.Policy, request) -> BPError | None:
    """The refusal of a `bp open` (alone or a batch step), before anything reaches the browser
    (broker/server.py check_policy), or None: to an origin outside the bounds; or of a page the
    Agent wrote itself (a `data:` URL of a type that runs script, any `file:` URL) while the
    policy withholds developer.eval or action.input from it — the page's script would do
    what the Agent may not."""
    if request.op != ops.OP_OPEN:
        return None
    url = str(request.args.get("url", ""))
    if not rules.url_allowed(url):
        return policy.navigation_denied(request.op, url)
    scheme = url.split(":", 1)[0].strip().lower()
    if scheme in ("data", "file"):
        kind = url.split(":", 1)[1].split(",", 1)[0].split(";", 1)[0] if scheme == "data" else "text/html"
        if policy.script_capable(kind or "text/plain"):
            for capability in policy.SCRIPT_GUARDS:
                denied_by = rules.capability_withheld(request.client, capability)
                if denied_by is not None:
                    return policy.implied_denied(request.op, capability, denied_by, reason="script_page")
    return None


def check_shown(rules: policy.Policy, op: str, url: Any) -> None:
    """What a command is about to return came from a document at `url`: refused when that is
    outside the bounds (a wait's probe found its match on a page that left them meanwhile).
    The browser's own pages (about:, an error page) show nothing of any origin."""
    if not rules.bounds or not url:
        return
    text = str(url)
    if text[:6].lower() == "about:" or text[:13].lower() == "chrome-error:" or rules.url_allowed(text):
        return
    raise policy.navigation_denied(op, text, reason="tab_outside_bounds")
