"""The action pipeline: what every acting command goes through (click, type, hover, keyboard,
press, select, dropdown, upload, scroll, and each step of `bp batch`).

    target and pin  -> the action's own (a ref resolved and hit-tested, the focused field pinned)
    arm, dispatch   -> the action's own input, bracketed by its settle (settle.begin / settle.end;
                       armed here for an action that does not arm itself right before its input)
    effects         -> caused(): what every input may have caused, seen the same way for all
    state diff      -> the action's own (a control's state, a field's readback)
    evidence        -> Evidence (broker/actions/evidence.py), checked against one vocabulary,
                       with the settle's record (settle.finish)
    observation     -> a fresh observation led by what changed, the navigation bounds' word, and
                       the no-progress watchdog

A new action is its target and its dispatch (and what its own state diff reads); the rest is here.
"""

import time

from bp.errors import BPError
from broker.actions import settle
from broker.records import phases
from broker.actions.evidence import Effect, reply_form
from broker.observe import snapshot


def opener_tabs(broker, raw):
    """The tabs tab `raw` opened so far (before an input: popups_opened() tells the new ones)."""
    return {t for t, i in broker.browser.targets.infos.items() if i.get("openerId") == raw}


POPUP_WAIT_S = 1.0


def popups_opened(broker, raw, before, session, since, deadline):
    """The tabs the input opened from tab `raw` (targets whose opener it is, not in `before`).
    The renderer says Page.windowOpen before the browser lists the new target, and on a loaded
    machine the listing can come after the settle: once the page said it opens a window, its
    target is waited for (at most POPUP_WAIT_S), so that the evidence and `bp tabs` agree."""
    def opened():
        return opener_tabs(broker, raw) - before

    found = opened()
    if found or not session.wait_for(lambda m, p: m == "Page.windowOpen", since, 0):
        return found
    until = min(time.monotonic() + POPUP_WAIT_S, deadline - 1.0)
    while not found and time.monotonic() < until:
        time.sleep(0.02)
        found = opened()
    return found


def download_started(agent, session, since):
    """{index, fileName} of the download the input began in this tab (as `bp downloads` lists
    it), {} when one began that is not listed for this Agent, None when none began."""
    event = session.wait_for(lambda m, p: m in ("Page.downloadWillBegin", "Browser.downloadWillBegin")
                             and p.get("frameId") == session.frame_id, since, 0)
    if event is None:
        return None
    tracker = session.downloads  # handed to the tab by the tracker (Tracker.on_session)
    if tracker is None:
        return {}
    return tracker.started(agent, event[1].get("guid")) or {}


def caused(broker, agent, raw, session, armed, popups_before, deadline, evidence):
    """Add to `evidence` what the input dispatched since `armed` caused that every action sees the
    same way: a new document, a dialog, a same-document URL change, a popup, a download (then
    evidence.facts["download"] as `bp downloads` lists it)."""
    since = armed.since
    if armed.navigated() or session.loader != armed.loader:
        evidence.add(Effect.NAVIGATION)
    if session.dialog_open():
        evidence.add(Effect.DIALOG_OPENED)
    if session.wait_for(lambda m, p: m == "Page.navigatedWithinDocument" and p.get("frameId") == session.frame_id,
                        since, 0):
        evidence.add(Effect.URL_CHANGED)  # same-document navigation (fragment, history API)
    if popups_before is not None and popups_opened(broker, raw, popups_before, session, since, deadline):
        evidence.add(Effect.POPUP_OPENED)
    download = download_started(agent, session, since)
    if download is not None:
        evidence.add(Effect.DOWNLOAD_STARTED)
        evidence.facts["download"] = download
    return evidence


def act(tab, fn, settles=False):
    """Run the acting command fn(tab) on its tab: settled, its evidence checked and, unless it
    is a step of `bp batch` (the batch observes once at the end), observed afresh."""
    if tab.request.batched:
        return {"evidence": _settled(tab, fn, settles)}  # later steps' refs stay those of the last snapshot
    return _observed(tab, lambda tab: _settled(tab, fn, settles))


def _settled(tab, fn, settles):
    """The action with its settle: armed (unless it arms itself), waited for after it, and told in
    its evidence."""
    session = tab.session
    session.settling = None
    if not settles:
        settle.begin(session, tab.raw)
    try:
        evidence = reply_form(fn(tab))
        if getattr(session, "settling", None) is not None:
            settle.end(session, tab.deadline)
    except BaseException:
        armed = getattr(session, "settling", None)
        if armed is not None:
            armed.abandon()
        session.settling = None
        raise
    return settle.finish(session, evidence)


def _observed(tab, action):
    """An action's reply: its evidence and a fresh observation of the tab."""
    blocked_before = tab.session.blocked_navigations
    evidence = action(tab)
    if tab.session.dialog is not None:
        # A JavaScript dialog blocks the page: answer with the evidence, not a hung observation.
        return {"evidence": evidence, "dialog": tab.session.dialog_brief()}
    name = tab.request.op
    lead = {}  # the answer leads with what the action changed (snapshot.observe)
    phases.mark(tab.request.record, "observe")
    loader = tab.session.loader
    try:
        try:
            result = snapshot.observe(tab.broker, tab.agent, tab.raw, tab.session, tab.args.get("limit", 50),
                                     timeout_s=tab.remaining(floor=1.0), lead=lead)
        except BPError:
            if tab.session.loader == loader or tab.session.dialog_open():
                raise
            # A new document committed while the old one was observed (the page, or a popup it
            # opened, navigated it): the answer is the document the tab shows now.
            result = snapshot.observe(tab.broker, tab.agent, tab.raw, tab.session, tab.args.get("limit", 50),
                                     timeout_s=tab.remaining(floor=1.0), lead=lead)
    except BPError as exc:
        if tab.session.dialog_open():  # opened while observing: the same answer as above
            return {"evidence": dict(evidence, effects=sorted(set(evidence.get("effects", ())) | {"dialog_opened"})),
                    "dialog": tab.session.dialog_brief()}
        raise BPError("unknown_outcome", f"The {name} was dispatched but the page could not be observed after it.",
                      context={"action": name, "reason": exc.code, "evidence": evidence}) from None
    phases.mark(tab.request.record, "observed")
    _navigation_blocked(tab.session, blocked_before, evidence)
    if lead.get("leftOut") and isinstance(evidence, dict):
        evidence["changedLeftOut"] = lead["leftOut"]  # changed elements past the limit: raise --limit
    result["evidence"] = evidence
    _watchdog(tab.agent, tab.raw, evidence, result)
    return result


def _navigation_blocked(session, before, evidence):
    """The person's navigation bounds stopped a navigation this action caused (a link, a form,
    a redirect, a location change or a popup): the request never left the browser."""
    if session.blocked_navigations > before:
        evidence["navigationBlocked"] = {"code": "navigation_blocked", "origin": session.blocked_origin}
        evidence["effects"] = sorted(set(evidence.get("effects") or ()) | {"navigation_blocked"})


STREAK = 3  # consecutive actions without progress on one tab before the watchdog hint


def _no_progress(evidence):
    if evidence.get("status") == "mismatch":
        return "mismatch"
    if evidence.get("status") == "unavailable" and evidence.get("reason") == "no_observable_effect":
        return "no_effect"
    if evidence.get("action") == "scroll" and evidence.get("moved") is False:
        return "no_effect"
    return None


def _watchdog(agent, raw, evidence, result):
    """Three consecutive actions on the same tab that mismatched or changed nothing observable
    add one `repeated_action` hint (once per streak). Progress or a navigation resets it."""
    reason = _no_progress(evidence)
    held = agent.tab(raw)
    if reason is None or "navigation" in (evidence.get("effects") or ()):
        held.streak = 0
        return
    held.streak += 1
    streak = held.streak
    if streak == STREAK:
        result.setdefault("hints", []).append({
            "code": "repeated_action", "source": "watchdog", "confidence": "strong",
            "recommendedAction": "change_strategy", "streak": streak, "reason": reason})
        del result["hints"][16:]
