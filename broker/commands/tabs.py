"""Tabs family: tabs, tab, open, close, profiles, profile (cli/commands/tabs.py)."""

from typing import TYPE_CHECKING, Any, NoReturn

from bp import protocol
from bp.errors import BPError, invalid_argument
from broker.observe import snapshot
from broker.tabs import profiles as profile_identity
from broker.tabs import routing
from broker.registry import HandlerAgent, Request, Tab, handler

if TYPE_CHECKING:
    from broker.tabs.session import TabSession


def _row(broker, agent, raw: str, fresh_titles: bool = False) -> dict[str, Any] | None:
    for candidate, row in routing.inventory(broker, agent, fresh_titles):
        if candidate == raw:
            return row
    return None


@handler(protocol.OP_TABS)
def tabs(broker, request: Request) -> dict[str, Any]:
    agent = routing.agent_for(broker, request)
    result = {"tabs": [row for _, row in routing.inventory(broker, agent, fresh_titles=True,
                                                           emulations=broker.emulations)]}
    return dict(result, **_bounded(broker))


def _bounded(broker) -> dict[str, Any]:
    """`truncated` of tabs and profiles: the target table (MAX_TARGETS) or the profile ids
    (MAX_PROFILE_CONTEXTS) were full, so some tabs or profiles are not listed."""
    targets = broker.browser.targets
    out: dict[str, Any] = {"truncated": bool(targets.untracked or targets.unlisted_contexts())}
    if targets.untracked:
        out["untrackedTargets"] = targets.untracked
    if targets.unlisted_contexts():
        out["unlistedProfiles"] = targets.unlisted_contexts()
    return out


@handler(protocol.OP_TAB)
def tab(broker, request: Request) -> dict[str, Any]:
    agent = routing.agent_for(broker, request)
    selector = request.args.get("targetId") or request.args.get("index")
    if request.args.get("release"):
        raw = routing.find_tab(broker, agent, selector) if selector is not None else agent.selected
        if raw is None:
            raise invalid_argument("index", "No tab is selected; name one: 'bp tab release <index>'.")
        row = _row(broker, agent, raw)
        broker.emulations.clear([raw])  # released: the tab is no longer emulated
        broker.agents.release(agent, raw)
        broker.network_hub.resync(raw)  # nobody holds it now: nothing of ours stays on it (journals included)
        if agent.selected == raw:
            agent.selected = None
        return {"released": True, "index": row["index"] if row else None, "targetId": agent.opaque_id(raw)}
    if selector is None:
        raise invalid_argument("index", "Give a tab index from 'bp tabs'.")
    raw = routing.find_tab(broker, agent, selector)
    routing.select(broker, agent, raw, broker.network_hub)
    _attach(broker, request, raw)
    row = _row(broker, agent, raw, fresh_titles=True)
    if row is None:  # it closed between its selection and this answer
        raise BPError("target_not_owned", "The tab closed as it was selected.",
                      context={"field": "target", "reason": "target_closed"})
    return {"index": row["index"], "targetId": row["targetId"], "origin": row["origin"],
            "profileContextId": row["profileContextId"], "title": row["title"], "url": row["url"]}


def _attach(broker, request: Request, raw: str) -> None:
    """The tab is held from now on: attach its session now, so that its journals (network,
    console, errors: broker/network/journal.py) start here rather than with its next command."""
    from broker.tabs.session import session_for

    try:
        broker.workers.run(raw, lambda worker: session_for(worker, broker.browser) and None,
                           timeout_s=max(0.1, min(5.0, request.remaining() - 0.5)), record=request.record)
    except BPError:
        pass  # a crashed or slow tab: its journals start with its next command


def _tab_to_open(broker, agent: HandlerAgent, request: Request) -> str:
    """`bp open URL` navigates the selected tab (opened if none); --new opens a managed tab first."""
    new, profile = request.args.get("new", False), request.args.get("profile")
    if profile is not None and not new:
        raise invalid_argument("profile", "--profile needs --new: it routes a new tab, it does not move one.")
    if new:
        request.selection_before = (agent.selected, agent.selected_profile)  # kept if the open is refused
        return routing.create_managed(broker, agent, request, "about:blank", profile)
    return routing.selected_tab(broker, agent, request)


@handler(protocol.OP_OPEN, pick=_tab_to_open, reloads=True)
def open_url(tab: Tab) -> dict[str, Any]:
    from broker.actions import settle

    session = tab.session
    blocked_before, requests_before = session.blocked_navigations, session.blocked_requests
    requests = settle.heard_from_now(tab.broker.network_hub, tab.raw)  # the app's own fetches count from the navigation on
    try:
        result = session.navigate(tab.args["url"], timeout_s=tab.remaining(floor=1.5) - 0.5)
        blocked = session.blocked_navigations > blocked_before
        if blocked and result.get("navigationError"):
            # The document itself was stopped in the browser (bp/policy.py): refused.
            _refuse_open(tab, _bounds_refusal(session, tab.args["url"]))
        if not result and not session.dialog_open():
            record = settle.after_load(session, tab.raw, requests, tab.deadline)
        else:
            record = None
    finally:
        if requests is not None:
            requests.close()
    observation = _observe_opened(tab, session, result, record)
    stopped = session.blocked_requests > requests_before
    if (blocked or stopped) and observation.get("evidence") is None and "dialog" not in observation:
        # The document loaded; only requests it made were stopped (origins.subresources): that is
        # not a failed navigation, but the answer says what was stopped (as an action's evidence does).
        origin = session.blocked_origin if blocked else session.blocked_request_origin
        observation["evidence"] = {"action": "navigate", "status": "verified", "effects": ["navigation_blocked"],
                                   "navigationBlocked": {"code": "navigation_blocked", "origin": origin}}
    return observation


def _bounds_refusal(session: "TabSession", url: str) -> BPError:
    """capability_denied for a navigation the bounds stopped: `redirect_blocked` only when what was
    stopped is not the URL asked for itself, as the browser spells it (a decimal or hex IP, say)."""
    from bp import policy

    origin = session.blocked_origin
    try:
        import json

        asked = session.evaluate(f"new URL({json.dumps(url)}).origin", timeout_s=2.0)
    except BPError:
        asked = None
    reason = "navigation_blocked" if asked == origin else "redirect_blocked"
    return policy.navigation_denied(protocol.OP_OPEN, origin, reason=reason)


def _refuse_open(tab: Tab, error: BPError) -> NoReturn:
    """A refused `open --new` leaves nothing behind: the Agent's selection is the one before,
    and the new tab is closed (after the reply: not from the tab's own worker)."""
    before = tab.request.selection_before
    if tab.args.get("new") and before is not None:
        agent, raw, broker = tab.agent, tab.raw, tab.broker
        if agent.selected == raw:
            agent.selected, agent.selected_profile = before
        tab.request.after_reply.append(lambda: routing.close_targets(broker, [raw]))
    raise error


def _observe_opened(tab: Tab, session: "TabSession", result: dict[str, Any],
                    record: dict[str, Any] | None) -> dict[str, Any]:
    observation = None
    if not result.get("dialog"):
        try:
            observation = snapshot.observe(tab.broker, tab.agent, tab.raw, session, tab.args.get("limit", 50),
                                          timeout_s=tab.remaining(floor=1.5) - 0.5)
        except BPError:
            if not session.dialog_open():
                raise
    if observation is None:
        # A beforeunload of the old page, or an alert of the new one (while it loaded or while it
        # was observed), blocks the tab: say so now instead of waiting for a page the dialog
        # holds. 'bp dialog' answers it.
        return {"evidence": {"action": "navigate", "status": "unavailable", "reason": "dialog_opened",
                             "effects": ["dialog_opened"]}, "dialog": session.dialog_brief()}
    if result.get("navigationError"):
        raise navigation_failed(tab.args["url"], result["navigationError"], observation)
    if record is not None and record["status"] != "quiet":
        # What the open waited for after the load (docs/commands.md "Settle"); a page that asked
        # for nothing more keeps the observation's shape as it was.
        observation["settle"] = record
    return observation


ERROR_PAGE_ELEMENTS = 10  # of the browser's error page, kept in the failure's context


def navigation_failed(url: str, error: str, observation: dict[str, Any]) -> BPError:
    """`bp open` of a URL the browser could not load: a retryable failure (exit 1), never an
    ok answer with the browser's error page. The error page's observation stays in the context
    (Chrome's "Reload" button is a ref the Agent may use); the URL is shown as origin and path."""
    from bp.errors import remediation
    from broker.actions.settle import redacted_url

    seen = {k: observation[k] for k in ("title", "url") if k in observation}
    seen["elements"] = (observation.get("elements") or [])[:ERROR_PAGE_ELEMENTS]
    # A site that asks for HTTP authentication answers the same way until credentials are given.
    auth = "AUTH_CREDENTIALS" in str(error)
    return BPError("navigation_failed", f"The browser could not load the page ({error}).", retryable=not auth,
                   context={"url": redacted_url(url), "navigationError": error, "observation": seen},
                   remediation=remediation("give_http_credentials" if auth else "check_url_or_site"))


@handler(protocol.OP_CLOSE)
def close(broker, request: Request) -> dict[str, Any]:
    agent = routing.agent_for(broker, request)
    if request.args.get("all"):
        raws = routing.agent_managed_tabs(broker, agent)
        closed, failed = routing.close_targets(broker, list(reversed(raws)), record=request.record)
        if agent.selected in raws:
            agent.selected = None
        remaining = len(routing.inventory(broker, agent))
        if failed:
            raise BPError("internal_error", "Some managed tabs could not be closed.", retryable=True,
                          context={"failedTargetIds": [agent.opaque_id(r) for r in failed], "closed": closed})
        return {"closed": closed, "remaining": remaining}
    raw = routing.selected_tab(broker, agent, request, create=False)
    closed, failed = routing.close_targets(broker, [raw], record=request.record)
    if failed:
        raise BPError("internal_error", "The tab could not be closed.", retryable=True)
    agent.selected = None
    remaining = routing.inventory(broker, agent)
    for candidate, row in remaining:  # re-select this Agent's first managed tab, never a user tab
        if row["origin"] != "user_tab":
            agent.selected = candidate
            break
    return {"closed": closed, "remaining": len(remaining)}


@handler(protocol.OP_PROFILES)
def profiles(broker, request: Request) -> dict[str, Any]:
    agent = routing.agent_for(broker, request)
    if request.args.get("identify") or request.args.get("refresh"):
        if request.args.get("refresh"):
            broker.browser.identities.clear()
        contexts = [context for context, _ in routing.profiles(broker, agent)]
        request.dispatching()  # identifying opens (and closes) a tab per profile
        profile_identity.identify(broker, contexts, timeout_s=max(1.0, min(15.0, request.remaining())))
    return dict({"profiles": [row for _, row in routing.profiles(broker, agent)]}, **_bounded(broker))


@handler(protocol.OP_PROFILE)
def profile(broker, request: Request) -> dict[str, Any]:
    agent = routing.agent_for(broker, request)
    context = routing.resolve_profile(broker, agent, request.args["selector"])
    agent.selected_profile = context
    for candidate, row in routing.profiles(broker, agent):
        if candidate == context:
            keep = ("profileContextId", "label", "displayName", "identityStatus", "profileName", "accountName",
                    "accountEmail", "profileDirectory", "identityErrorCode")
            return {k: row[k] for k in keep if k in row}
    raise BPError("profile_context_unavailable", "That profile has no open tabs any more.")
