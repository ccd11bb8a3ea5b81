"""Operation name -> handler. Handlers live in broker/commands/<family>.py and register here.

What an operation needs comes from its declaration in bp/ops.py: a FRONT or REQUEST handler is
fn(broker, request); a TAB handler is fn(tab), run on the selected tab's worker with one `Tab`
context, and with observe_after=True the tab is observed afresh after it (an action's reply).
"""

import time
from dataclasses import dataclass, field

from bp import ops


@dataclass
class Request:
    op: str
    client: str
    args: dict
    timeout_ms: int
    command_id: str
    request_id: str = None
    installation: dict = None
    received_at: float = field(default_factory=time.monotonic)
    after_reply: list = field(default_factory=list)  # callables run once the reply is on its way
    record: object = None  # its command record (broker/records/store.py), for browser commands
    batched: bool = False  # a step of `bp batch`: no observation of its own, the batch observes once at the end

    def cancelled(self):
        """Whether the Agent asked to cancel this command (long waits poll this)."""
        record = self.record
        return record is not None and (record.cancel_requested or  # a batch step: the batch's cancel too
                                       (record.parent is not None and record.parent.cancel_requested))

    @property
    def deadline(self):
        return self.received_at + self.timeout_ms / 1000.0

    def remaining(self):
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class Tab:
    """What a tab handler works with: the Agent, its selected tab (raw target id) and that tab's
    CDP session, on the tab's worker, with the command's arguments and deadline."""

    broker: object
    request: Request
    agent: object
    raw: str
    session: object
    deadline: float  # time.monotonic() by which the command must answer

    @property
    def args(self):
        return self.request.args

    def remaining(self, floor=0.0):
        """Seconds left before the deadline, at least `floor`."""
        return max(floor, self.deadline - time.monotonic())

    def parts(self):
        """(broker, agent, raw, session, args, deadline): the positional shape the action
        modules (broker/actions/input.py, keyboard.py, scroll.py, select.py, files.py) take."""
        return self.broker, self.agent, self.raw, self.session, self.args, self.deadline


@dataclass
class Handler:
    fn: object  # fn(broker, request) -> result dict, whatever the op's own handler shape
    op: ops.Op  # its declaration

    @property
    def inline(self):
        """Answered on the front loop itself: must never block."""
        return self.op.runs == ops.FRONT


HANDLERS = {}


def handler(op, *, observe_after=False, create=False, pick=None, reloads=False, settles=False):
    """Register the handler of `op` (declared in bp/ops.py: an undeclared op, which would have no
    schema, fails here). For a TAB op: `create` lets a missing selected tab be opened (as
    snapshot does), `pick(broker, agent, request)` chooses the tab instead (as open does),
    `reloads` lets it run on a crashed tab, which it brings back (open). An observe_after op is
    settled on what it caused (broker/actions/settle.py), armed here before it runs unless it
    `settles` itself: arms right before its dispatch and waits right after it."""
    declared = ops.OPS[op]

    def register(fn):
        if op in HANDLERS:
            raise RuntimeError(f"operation {op!r} has two handlers")
        if declared.runs == ops.TAB:
            def serve(broker, request):
                return on_tab(broker, request, fn, create=create, pick=pick, observe_after=observe_after,
                              reloads=reloads, settles=settles)
        else:
            if observe_after or create or pick or reloads or settles:
                raise RuntimeError(f"operation {op!r} does not run on a tab (bp/ops.py)")
            serve = fn
        HANDLERS[op] = Handler(serve, declared)
        return fn

    return register


def check_complete():
    """Every declared operation has a handler (called once the handlers are imported)."""
    missing = sorted(set(ops.OPS) - set(HANDLERS))
    if missing:
        raise RuntimeError(f"declared operations without a handler: {missing}")


def on_tab(broker, request, fn, *, create=False, pick=None, observe_after=False, reloads=False, settles=False):
    """Run fn(tab) on the worker of the Agent's selected tab (or of the tab `pick` chose)."""
    from broker.tabs import routing
    from broker.tabs.session import session_for

    agent = routing.agent_for(broker, request)
    raw = pick(broker, agent, request) if pick else routing.selected_tab(broker, agent, request, create=create)
    deadline = time.monotonic() + request.remaining()

    def run(worker):
        tab = Tab(broker, request, agent, raw, session_for(worker, broker.browser, crashed_ok=reloads), deadline)
        if not observe_after:
            return fn(tab)
        action = _settled(fn, settles)
        if request.batched:
            return {"evidence": action(tab)}  # refs of later steps stay those of the Agent's last snapshot
        return _observed(tab, action)

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())


def _settled(fn, settles):
    """The action with its settle: armed (unless it arms itself), waited for after it, and told in
    its evidence. Every acting command and every batch step goes through here."""
    from broker.actions import settle

    def action(tab):
        session = tab.session
        session.settling = None
        if not settles:
            settle.begin(tab.broker, tab.agent, session, tab.raw)
        try:
            evidence = fn(tab)
            if getattr(session, "settling", None) is not None:
                settle.end(session, tab.deadline)
        except BaseException:
            armed = getattr(session, "settling", None)
            if armed is not None:
                armed.abandon()
            session.settling = None
            raise
        return settle.finish(session, evidence)

    return action


def _observed(tab, action):
    """An action's reply: its evidence and a fresh observation of the tab."""
    from bp.errors import BPError
    from broker.observe import snapshot as observe

    blocked_before = tab.session.blocked_navigations
    evidence = action(tab)
    if tab.session.dialog is not None:
        # A JavaScript dialog blocks the page: answer with the evidence, not a hung observation.
        from broker.waits import dialogs

        return {"evidence": evidence, "dialog": dialogs.brief(tab.session)}
    name = tab.request.op
    lead = {}  # the answer leads with what the action changed (snapshot.observe)
    try:
        result = observe.observe(tab.broker, tab.agent, tab.raw, tab.session, tab.args.get("limit", 50),
                                 timeout_s=tab.remaining(floor=1.0), lead=lead)
    except BPError as exc:
        if tab.session.dialog_open():  # opened while observing: the same answer as above
            from broker.waits import dialogs

            return {"evidence": dict(evidence, effects=sorted(set(evidence.get("effects", ())) | {"dialog_opened"})),
                    "dialog": dialogs.brief(tab.session)}
        raise BPError("unknown_outcome", f"The {name} was dispatched but the page could not be observed after it.",
                      context={"action": name, "reason": exc.code, "evidence": evidence}) from None
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
    if reason is None or "navigation" in (evidence.get("effects") or ()):
        agent.streaks.pop(raw, None)
        return
    streak = agent.streaks.get(raw, 0) + 1
    agent.streaks[raw] = streak
    if streak == STREAK:
        result.setdefault("hints", []).append({
            "code": "repeated_action", "source": "watchdog", "confidence": "strong",
            "recommendedAction": "change_strategy", "streak": streak, "reason": reason})
        del result["hints"][16:]
