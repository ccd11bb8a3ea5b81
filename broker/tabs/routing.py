"""From an Agent's request to a physical tab: opaque ids, selection, control and profile routing.

Shared by the tab-level handlers. Raw CDP ids are looked up here and never returned.
"""

import logging

from bp import policy
from bp import protocol
from bp import settings
from bp.errors import BPError, invalid_argument, remediation

log = logging.getLogger("broker.routing")

MAX_REPRESENTATIVE_TABS = 3


def check_tab(broker, raw, op="tab"):
    """Before every command on a tab and every probe of a wait: taking or using a user tab whose
    page is outside the person's navigation bounds is refused (capability_denied,
    `tab_outside_bounds`), and so is using any held tab whose main frame committed a document
    outside them without a request (broker/policy/bounds.py Bounds.committed: a back/forward-cache
    restore) until another document commits. Here, in routing, so that the tab layer needs
    nothing from the policy features above it."""
    rules = broker.policy
    if not rules.bounds:
        return
    session = broker.workers.session(raw)
    outside = session.outside_origin if session is not None else None
    if outside is not None:
        raise policy.navigation_denied(op, outside, reason="tab_outside_bounds")
    holder, origin = broker.agents.owner(raw, broker.browser.popups())
    if origin != "user_tab":
        return
    url = (broker.browser.targets.info(raw) or {}).get("url") or ""
    if not rules.url_allowed(url):
        if op != "tab" and session is not None:
            # Held already, and it left the bounds before its session could see the commit
            # (between `bp tab` and the session's attach): it does not stay there either.
            log.info("a held tab was found outside the policy's bounds; sent away")
            try:
                session.send_nowait("Page.navigate", {"url": "about:blank"})
            except BPError:
                pass
        raise policy.navigation_denied(op, url, reason="tab_outside_bounds")


def agent_for(broker, request, *, require_browser=True):
    """The caller's Agent, its lease renewed, its mappings moved to the current generation."""
    conn = broker.browser.require() if require_browser else broker.browser.connection
    agent = broker.agents.touch(request.client, broker.browser.generation)
    if conn is not None:
        agent.enter_generation(broker.browser.generation)
    return agent


def _control_state(broker, agent, raw):
    holder, origin = broker.agents.owner(raw, broker.browser.popups())
    if holder is None:
        return origin, "available"
    if holder == agent.key:
        return origin, "controlled"
    other = broker.agents.get(holder)
    return origin, "busy" if other is not None and other.lease_active(broker.agents._clock()) else "available"


def inventory(broker, agent, fresh_titles=False, emulations=None):
    """This Agent's view of every eligible tab: [(raw, public row)] with 1-based indexes.
    `fresh_titles`: read the titles back from Chrome first (one call), for listings that show them;
    `emulations` (broker/emulate/emulation.py, handed by `bp tabs`): what each managed tab pretends to be."""
    targets = broker.browser.targets
    if fresh_titles and broker.browser.ready:
        targets.refresh(broker.browser.connection)
    rows = []
    for index, (raw, info) in enumerate(targets.pages(), start=1):
        origin, state = _control_state(broker, agent, raw)
        # Another Agent's managed tab (or popup) is listed so indexes and counts stay true, but
        # not where it is nor what it shows: that is the other Agent's work, not the person's.
        foreign = origin != "user_tab" and state != "controlled"
        if origin != "user_tab" and state == "busy":
            origin = "user_tab"  # another Agent's managed tab is, to this Agent, just a tab
        profile = targets.profile(info.get("browserContextId"))
        row = {
            "index": index, "targetId": agent.opaque_id(raw),
            "profileContextId": profile[0] if profile else None,
            "title": "" if foreign else (info.get("title") or "")[:4096],
            "url": "" if foreign else (info.get("url") or "")[:8192],
            "origin": origin, "selected": raw == agent.selected, "controlState": state,
        }
        if emulations is not None and origin != "user_tab":
            emulated = emulations.shown(raw)
            if emulated:
                row["emulation"] = emulated  # bp emulate: what this tab pretends to be
        crashed = targets.crash_state(raw)
        if crashed:
            row["crashed"] = {"reason": crashed["reason"], "at": crashed["at"]}  # commands answer target_crashed
        rows.append((raw, row))
    return rows


def find_tab(broker, agent, selector):
    """raw id for a 1-based index or this Agent's opaque id."""
    if isinstance(selector, str) and selector.startswith("tab-"):
        from broker.browser.targets import eligible

        raw = agent.raw_by_opaque.get(selector)
        info = broker.browser.targets.info(raw) if raw else None
        if info is None or not eligible(info):
            raise BPError("target_not_owned", "No such tab in this Agent's inventory (closed, or from an older connection).",
                          context={"field": "target", "targetId": selector})
        return raw
    rows = inventory(broker, agent)
    if not isinstance(selector, int) or not 1 <= selector <= len(rows):
        raise invalid_argument("index", f"Tab index {selector} is out of range (1-{len(rows)}); run 'bp tabs'.",
                               index=selector, count=len(rows))
    return rows[selector - 1][0]


def select(broker, agent, raw, hub):
    """Select and control raw for this Agent (target_busy if another Agent holds it). The
    previously selected user tab is released: an Agent holds one user tab at a time, and the
    network hub (`hub`, broker/network/journal.py) takes what it kept on it."""
    broker.agents.check_free(agent, raw, broker.browser.popups())  # before the bounds look at its page
    check_tab(broker, raw)
    origin = broker.agents.acquire(agent, raw, broker.browser.popups())
    previous = agent.selected
    if previous is not None and previous != raw and agent.controls(previous):
        broker.agents.release(agent, previous)
        hub.resync(previous)  # nobody holds it now: nothing of ours stays on it
    agent.selected = raw
    info = broker.browser.targets.info(raw)
    if info and info.get("browserContextId"):
        agent.selected_profile = info["browserContextId"]
    return origin


def selected_tab(broker, agent, request, *, create=True):
    """The Agent's selected tab, still controlled; else its first managed tab; else (create) a
    new managed tab in its Pilot window."""
    from broker.browser.targets import eligible

    targets = broker.browser.targets
    if agent.selected is not None:
        info = targets.info(agent.selected)
        if info is not None and eligible(info):
            check_tab(broker, agent.selected, request.op)  # the page may have left the bounds since
            broker.agents.acquire(agent, agent.selected, broker.browser.popups())
            return agent.selected
        if info is not None:
            # It became ineligible (e.g. navigated to a browser page): the mapping goes, the
            # tab stays open.
            broker.agents.release(agent, agent.selected)
            agent.forget_target(agent.selected)
    agent.selected = None
    for raw, generation in agent.managed_tabs():
        info = targets.info(raw)
        if generation == agent.generation and info is not None and eligible(info):
            agent.selected = raw
            return raw
    if agent.lapsed_at is not None:
        # Told once: its lease ran out while it was away, and the tabs it had opened were closed.
        idle = settings.current().lease_ttl_s
        agent.lapsed_at = None
        if not create or request.op != protocol.OP_OPEN:  # not a silent about:blank for a snapshot
            raise BPError("target_not_owned",
                          f"This Agent's lease expired (no command for {idle:g} s): the tabs Browser Pilot opened for "
                          "it were closed and its refs are gone. Run 'bp open URL' to go on in a new tab, or "
                          "'bp tabs' and 'bp tab <index>' to take a tab again.",
                          context={"field": "target", "reason": "lease_expired", "leaseTtlMs": int(idle * 1000)})
    if not create:
        raise BPError("target_not_owned", "This Agent has no tab selected; run 'bp tabs' and 'bp tab <index>'.",
                      context={"field": "target", "reason": "no_selected_tab"})
    return create_managed(broker, agent, request, "about:blank", None)


def profiles(broker, agent):
    targets = broker.browser.targets
    counts, eligible_counts, reps = {}, {}, {}
    with targets.lock:
        infos = list(targets.infos.items())
    from broker.browser.targets import eligible

    for raw, info in infos:
        context = info.get("browserContextId")
        if info.get("type") != "page" or info.get("internal"):
            continue
        counts[context] = counts.get(context, 0) + 1
        if eligible(info):
            eligible_counts[context] = eligible_counts.get(context, 0) + 1
            reps.setdefault(context, [])
            if len(reps[context]) < MAX_REPRESENTATIVE_TABS:
                reps[context].append({"targetId": agent.opaque_id(raw), "title": (info.get("title") or "")[:200],
                                      "url": (info.get("url") or "")[:2048]})
    out = []
    for index, context in enumerate(targets.live_contexts(), start=1):
        public_id, label = targets.profile(context)
        row = {"index": index, "profileContextId": public_id, "label": label,
               "tabCount": counts.get(context, 0), "eligibleTabCount": eligible_counts.get(context, 0),
               "selected": agent.selected_profile == context, "representativeTabs": reps.get(context, [])}
        row.update(broker.browser.identities.get(context, {"identityStatus": "unidentified"}))
        out.append((context, row))
    return out


def resolve_profile(broker, agent, selector):
    """browserContextId for a profile selector: id, 1-based index, or a unique exact name."""
    rows = profiles(broker, agent)
    if isinstance(selector, str) and selector.startswith("profile-context:"):
        for context, row in rows:
            if row["profileContextId"] == selector:
                return context
        raise BPError("profile_context_stale", "That profile id is from an older browser connection or gone.",
                      context={"field": "profile", "selector": selector[:200]},
                      remediation=remediation("relist_profile_contexts"))
    if isinstance(selector, str) and selector.isdigit():
        number = int(selector)
        if 1 <= number <= len(rows):
            return rows[number - 1][0]
    else:
        wanted = str(selector).casefold()
        matches = [context for context, row in rows
                   if any(str(row.get(k, "")).casefold() == wanted
                          for k in ("label", "displayName", "profileName", "accountName", "accountEmail") if row.get(k))]
        if len(matches) == 1:
            return matches[0]
    raise invalid_argument("profile", "No single live profile matches that selector; run 'bp profiles'.",
                           selector=str(selector)[:200])


def route_profile(broker, agent, selector):
    """Where a new managed tab goes: explicit, the selected tab's profile, the Agent's selection,
    the only live context; else profile_selection_required, before anything is created."""
    targets = broker.browser.targets
    live = targets.live_contexts()
    if selector is not None:
        return resolve_profile(broker, agent, selector)
    if agent.selected is not None:
        info = targets.info(agent.selected)
        if info and info.get("browserContextId") in live:
            return info["browserContextId"]
    if agent.selected_profile in live:
        return agent.selected_profile
    if len(live) <= 1:
        return live[0] if live else None
    raise BPError("profile_selection_required", "Several browser profiles are open; choose one first.",
                  context={"profiles": [row for _, row in profiles(broker, agent)][:16]},
                  remediation={"code": "relist_profile_contexts", "actionRequired": True,
                               "message": "Run 'bp profiles', then 'bp profile <selector>' or 'bp open --new --profile <selector>'."})


def create_managed(broker, agent, request, url, profile_selector):
    """A new managed tab for this Agent, in the background (never focus-stealing)."""
    context = route_profile(broker, agent, profile_selector)
    conn = broker.browser.require()
    params = {"url": url, "group": agent.key}
    if context:
        params["browserContextId"] = context
    created = conn.janitor_call("create", params, timeout_s=max(1.0, min(30.0, request.remaining())))
    raw = created["targetId"]
    # BR-32: the tab's browser context is read back, never assumed from the request; a tab that
    # landed elsewhere is closed (the janitor owns it) before any Agent can address it.
    try:
        info = conn.cdp("Target.getTargetInfo", {"targetId": raw}, timeout_s=max(1.0, min(10.0, request.remaining())))
        info = (info or {}).get("targetInfo") or {}
    except BPError:
        info = {}
    actual = info.get("browserContextId")
    if not actual or (context and actual != context):
        close_targets(broker, [raw])
        raise BPError("profile_context_unavailable", "The new tab did not open in the chosen profile; it was closed.",
                      retryable=True, context={"reason": "context_mismatch" if actual else "context_unverified"})
    broker.agents.add_managed(agent, raw)
    agent.selected = raw
    agent.selected_profile = actual
    # The target event may trail the createTarget reply; make the table know the tab now.
    if broker.browser.targets.info(raw) is None:
        broker.browser.targets.apply("Target.targetCreated", {"targetInfo": {
            "url": url, "title": "", **info, "targetId": raw, "type": "page", "browserContextId": actual}})
    return raw


def close_targets(broker, raws, timeout_s=10.0, record=None):
    """Close tabs by raw id and wait for Chrome to report them gone; returns (closed, failed).
    `record`: the command that closes them, dispatched from the first close on."""
    conn = broker.browser.require()
    failed = []
    if raws and record is not None:
        record.dispatching()
    for raw in raws:
        try:
            conn.cdp("Target.closeTarget", {"targetId": raw}, timeout_s=timeout_s)
        except BPError:
            if broker.browser.targets.info(raw) is not None:
                failed.append(raw)
    requested = [r for r in raws if r not in failed]
    failed += broker.browser.targets.wait_gone(requested, timeout_s=min(timeout_s, 5.0))
    return len(raws) - len(failed), failed


def agent_managed_tabs(broker, agent):
    """This Agent's live managed tabs and managed popups (popup chains rooted in its tabs),
    openers before popups. Works from the Agent's own records, so it also serves an Agent that
    was already removed from the registry (disconnect, lease expiry)."""
    from broker.agents import MAX_POPUP_DEPTH

    targets = broker.browser.targets
    roots = {raw for raw, g in agent.managed_tabs() if g == agent.generation}
    popups = broker.browser.popups()
    out = []
    for raw, _ in targets.pages():
        current, depth = raw, 0
        while current is not None and depth <= MAX_POPUP_DEPTH:
            if current in roots:
                out.append(raw)
                break
            current, depth = popups.get(current), depth + 1
    for raw in roots:
        if raw not in out and targets.info(raw) is not None:
            out.insert(0, raw)
    return out
