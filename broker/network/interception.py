"""The Agent's network rules (`bp net block|mock|headers`) and HTTP credentials (`bp auth`),
applied by Fetch interception on the sessions of the tabs its holder holds.

`Fetch.enable` (pattern `*`, request stage) only on sessions of tabs held by a key that has
rules or HTTP credentials; `Fetch.disable` when the last goes (broker/network/journal.py
Hub.sync). Every paused request is answered at once on the relay thread (fail / fulfill /
continue); any error continues it. The person's navigation bounds (broker/policy/bounds.py) are
judged first, before any rule.
"""

import base64
import logging
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any

from bp import globs, ops, policy
from bp.errors import BPError, invalid_argument
from broker.network.entries import MAX_HEADER_VALUE, redact

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger("broker.network")

MAX_RULES = 64
MAX_MOCK_BODY = 1024 * 1024
MAX_AUTH_ATTEMPTS = 1


def glob_matcher(pattern: str, field: str = "url") -> globs.Glob:
    """A case-insensitive full-match glob where only `*` is special (contract §1.3), in linear time."""
    return globs.matcher(pattern, field)


# Header names Chrome refuses to override in continueRequest/fulfillRequest, or that would change
# where or how a request travels; refused when a rule is added.
FORBIDDEN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
                               "te", "trailer", "proxy-connection", "expect", "http2-settings"})
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
_HEADER_VALUE_BAD = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # CR, LF, NUL...: tab is allowed


def check_header(name: Any, value: Any, field: str = "headers") -> None:
    """invalid_argument unless `name: value` is a header a rule may set (RFC 9110 token name, no
    control character in the value, not a hop-by-hop or routing header)."""
    if not isinstance(name, str) or not HEADER_NAME_RE.match(name):
        raise invalid_argument(field, "A header name is a token: letters, digits and !#$%&'*+-.^_`|~.")
    if name.lower() in FORBIDDEN_HEADERS:
        raise invalid_argument(field, f"The {name} header cannot be set by a rule.", header=name[:64])
    if not isinstance(value, str) or len(value) > MAX_HEADER_VALUE or _HEADER_VALUE_BAD.search(value):
        raise invalid_argument(field, f"The value of {name} holds a line break or control character (or is over "
                               f"{MAX_HEADER_VALUE} characters).", header=name[:64])


class Rule:
    def __init__(self, kind: str, pattern: str, status: int | None = None, body: bytes | None = None,
                 content_type: str | None = None, headers: list[dict[str, str]] | None = None):
        self.id = "rule:" + os.urandom(8).hex()
        self.kind = kind
        self.pattern = pattern
        self.match = glob_matcher(pattern, "pattern")
        self.status = status
        self.body = body  # bytes (mock)
        self.content_type = content_type
        self.headers = headers or []
        self.added = time.monotonic()

    def mock_body(self) -> bytes:
        """A mock's body (a mock rule always has one, add_rule)."""
        assert self.body is not None, self.kind
        return self.body

    def row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "type": self.kind, "pattern": self.pattern}
        if self.kind == "mock":
            row["status"] = self.status
            row["bodySize"] = len(self.mock_body())
            if self.content_type:
                row["contentType"] = self.content_type
        if self.kind == "headers":
            # Echoed like `net show` does: the values of sensitive headers never leave again.
            row["headers"], redacted = redact([dict(h) for h in self.headers], False)
            if redacted:
                row["redactedHeaders"] = redacted
        return row


def choose(rules: list[Rule], url: str) -> Rule | None:
    """Deterministic precedence: block > mock > headers; within a kind the most recently added
    rule wins (headers rules all apply, later ones overriding the same header)."""
    for kind in ("block", "mock", "headers"):
        for rule in reversed(rules):
            if rule.kind == kind and rule.match(url):
                return rule
    return None


class Interception:
    """Hub's part that answers paused requests (Fetch.requestPaused, Fetch.authRequired)."""

    # The Hub's own, and its other parts', which this part uses (broker/network/journal.py, not
    # imported: it imports this module).
    lock: threading.RLock
    _checks: "ThreadPoolExecutor | None"  # threads that read Chrome's answer to a rule's change (_send_checked)

    if TYPE_CHECKING:
        def _owner_state(self, session) -> Any: ...  # the holder's KeyState, or None
        @staticmethod
        def _send(session, method: str, params: dict[str, Any] | None) -> None: ...
        def _out_of_bounds(self, session, params: dict[str, Any]) -> str | None: ...
        @staticmethod
        def _top_level(session, params: dict[str, Any]) -> bool: ...
        def _blocked(self, session, origin: str | None) -> None: ...
        def _guard_done(self, session, params: dict[str, Any]) -> None: ...

    def _fetch(self, session, method: str, params: dict[str, Any]) -> None:
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
            if self._top_level(session, params):  # a frame's document or a subresource is not the tab's navigation
                self._blocked(session, outside)
            else:  # counted apart: `bp open` says what its page was refused, without failing
                session.blocked_requests += 1
                session.blocked_request_origin = outside
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
                       {"name": "Content-Length", "value": str(len(rule.mock_body()))},
                       {"name": "X-Content-Type-Options", "value": "nosniff"},
                       {"name": "Access-Control-Allow-Origin", "value": "*"}]
            self._send_checked(session, state, params, "Fetch.fulfillRequest", {
                "requestId": request_id, "responseCode": rule.status, "responseHeaders": headers,
                "body": base64.b64encode(rule.mock_body()).decode("ascii")})
        else:
            merged = {}
            for name, value in (request.get("headers") or {}).items():
                merged[name.lower()] = (name, str(value))
            for r in sorted([r for r in rules if r.kind == "headers" and r.match(url)], key=lambda r: r.added):
                for h in r.headers:  # later rules override earlier ones for the same name
                    merged[h["name"].lower()] = (h["name"], h["value"])
            self._send_checked(session, state, params, "Fetch.continueRequest", {"requestId": request_id, "headers": [
                {"name": n, "value": v} for n, v in merged.values()]})

    def _send_checked(self, session, state, paused: dict[str, Any], method: str, params: dict[str, Any]) -> None:
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

    def _checker(self) -> "ThreadPoolExecutor":
        with self.lock:
            if self._checks is None:
                from concurrent.futures import ThreadPoolExecutor

                self._checks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="net-rule")
            return self._checks

    def _auth(self, session, state, params: dict[str, Any]) -> None:
        request_id = params.get("requestId")
        challenge = params.get("authChallenge") or {}
        answer = {"response": "Default"}
        creds = state.auth if state is not None else None
        if state is not None and creds is not None and (not creds.get("origin") or
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


# --- commands (request threads) ------------------------------------------------------------------

def add_rule(hub_, agent, args: dict[str, Any]) -> dict[str, Any]:
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
        if policy.script_capable(args.get("contentType")):
            rules = hub_.policy
            for capability in policy.SCRIPT_GUARDS:
                denied_by = rules.capability_withheld(agent.key, capability)
                if denied_by is not None:
                    raise policy.implied_denied(ops.OP_NET_RULE_ADD, capability, denied_by, reason="script_mock",
                                                contentType=str(args.get("contentType") or "")[:128])
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


def list_rules(hub_, agent) -> dict[str, Any]:
    state = hub_.state(agent)
    with hub_.lock:
        return {"rules": [r.row() for r in reversed(state.rules)]}  # precedence order within a kind


def remove_rules(hub_, agent, args: dict[str, Any]) -> dict[str, Any]:
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


def set_auth(hub_, agent, args: dict[str, Any]) -> dict[str, Any]:
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


def clear_auth(hub_, agent) -> dict[str, Any]:
    state = hub_.state(agent)
    with hub_.lock:
        had, state.auth = state.auth is not None, None
    hub_.sync_all()
    return {"cleared": had}
