"""Operation name -> handler. Handlers live in broker/commands/<family>.py and register here.

What an operation needs comes from its declaration in bp/ops.py: a FRONT or REQUEST handler is
fn(broker, request); a TAB handler is fn(tab), run on the selected tab's worker with one `Tab`
context, and with observe_after=True it is an acting command: it runs through the action
pipeline (broker/actions/pipeline.py: settle, evidence, a fresh observation, the watchdog).
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
        modules (broker/actions/inputs.py, keyboard.py, scroll.py, select.py, files.py) take."""
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
    `reloads` lets it run on a crashed tab, which it brings back (open). An observe_after op is an
    acting command (broker/actions/pipeline.py): settled on what it caused, armed before it runs
    unless it `settles` itself (arms right before its dispatch and waits right after it)."""
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
        from broker.actions import pipeline

        return pipeline.act(tab, fn, settles)

    return broker.workers.run(raw, run, timeout_s=request.remaining())
