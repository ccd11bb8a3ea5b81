"""Operation name -> handler. Handlers live in broker/commands/<family>.py and register here.

What an operation needs comes from its declaration in bp/ops.py: a FRONT or REQUEST handler is
fn(broker, request); a TAB handler is fn(tab), run on the selected tab's worker with one `Tab`
context, and with observe_after=True it is an acting command: it runs through the action
pipeline (broker/actions/pipeline.py: settle, evidence, a fresh observation, the watchdog).
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bp import ops

if TYPE_CHECKING:
    from broker.tabs.session import TabSession, Workers

F = TypeVar("F", bound=Callable[..., Any])


# The Broker (broker/server.py) and the Agent (broker/agents.py) are described, not imported:
# the broker imports the handlers, and the registry's layer imports neither (tests/unit/test_layout.py
# counts every import, TYPE_CHECKING ones too). Members are added as typed handlers need them.
class HandlerBroker(Protocol):
    """What the handler scaffold and the typed tab handlers use of the Broker."""

    browser: Any  # broker/browser/binding.py Browser (a layer the registry does not import)
    workers: "Workers"
    network_hub: Any  # broker/network/journal.py Hub (handed by handlers to the features that use it)


class HandlerAgent(Protocol):
    """What the typed tab handlers use of the Agent whose command it is."""

    selected: str | None  # its selected tab (raw target id)
    selected_profile: str | None  # browserContextId


@dataclass
class Request:
    op: str
    client: str
    args: dict[str, Any]
    timeout_ms: int
    command_id: str
    request_id: str | None = None
    installation: dict[str, Any] | None = None
    received_at: float = field(default_factory=time.monotonic)
    after_reply: list[Callable[[], object]] = field(default_factory=list)  # run once the reply is on its way
    # Its command record (broker/records/store.py Record: a layer the registry does not import),
    # for browser commands.
    record: Any = None
    batched: bool = False  # a step of `bp batch`: no observation of its own, the batch observes once at the end
    # Set while it runs, by whom the comment names; declared here, out of __init__, repr and ==.
    audit_origin: str | None = field(default=None, init=False, repr=False, compare=False)  # Broker.dispatch, batch
    selection_before: "tuple[str | None, str | None] | None" = field(  # open --new (broker/commands/tabs.py)
        default=None, init=False, repr=False, compare=False)

    def cancelled(self) -> bool:
        """Whether the Agent asked to cancel this command (long waits poll this)."""
        record = self.record
        return record is not None and (record.cancel_requested or  # a batch step: the batch's cancel too
                                       (record.parent is not None and record.parent.cancel_requested))

    def attempting(self) -> None:
        """Its record (if it has one) says the command has begun to act."""
        if self.record is not None:
            self.record.attempting()

    def dispatching(self) -> None:
        """Its record (if it has one) says a mutation is on its way to the browser (raising when the
        command may no longer reach it)."""
        if self.record is not None:
            self.record.dispatching()

    @property
    def deadline(self) -> float:
        return self.received_at + self.timeout_ms / 1000.0

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class Tab:
    """What a tab handler works with: the Agent, its selected tab (raw target id) and that tab's
    CDP session, on the tab's worker, with the command's arguments and deadline."""

    broker: HandlerBroker
    request: Request
    agent: HandlerAgent
    raw: str
    session: "TabSession"
    deadline: float  # time.monotonic() by which the command must answer

    @property
    def args(self) -> dict[str, Any]:
        return self.request.args

    def remaining(self, floor: float = 0.0) -> float:
        """Seconds left before the deadline, at least `floor`."""
        return max(floor, self.deadline - time.monotonic())

    def parts(self) -> "tuple[HandlerBroker, HandlerAgent, str, TabSession, dict[str, Any], float]":
        """(broker, agent, raw, session, args, deadline): the positional shape the action
        modules (broker/actions/inputs.py, keyboard.py, scroll.py, select.py, files.py) take."""
        return self.broker, self.agent, self.raw, self.session, self.args, self.deadline


@dataclass
class Handler:
    fn: Callable[..., Any]  # fn(broker, request) -> result dict, whatever the op's own handler shape
    op: ops.Op  # its declaration

    @property
    def inline(self) -> bool:
        """Answered on the front loop itself: must never block."""
        return self.op.runs == ops.FRONT


HANDLERS: dict[str, Handler] = {}

# pick(broker, agent, request) -> the raw id of the tab to run on
Pick = Callable[[HandlerBroker, HandlerAgent, Request], str]


def handler(op: str, *, observe_after: bool = False, create: bool = False, pick: Pick | None = None,
            reloads: bool = False, settles: bool = False) -> Callable[[F], F]:
    """Register the handler of `op` (declared in bp/ops.py: an undeclared op, which would have no
    schema, fails here). For a TAB op: `create` lets a missing selected tab be opened (as
    snapshot does), `pick(broker, agent, request)` chooses the tab instead (as open does),
    `reloads` lets it run on a crashed tab, which it brings back (open). An observe_after op is an
    acting command (broker/actions/pipeline.py): settled on what it caused, armed before it runs
    unless it `settles` itself (arms right before its dispatch and waits right after it)."""
    declared = ops.OPS[op]

    def register(fn: F) -> F:
        if op in HANDLERS:
            raise RuntimeError(f"operation {op!r} has two handlers")
        if declared.runs == ops.TAB:
            def serve(broker: HandlerBroker, request: Request) -> Any:
                return on_tab(broker, request, fn, create=create, pick=pick, observe_after=observe_after,
                              reloads=reloads, settles=settles)
        else:
            if observe_after or create or pick or reloads or settles:
                raise RuntimeError(f"operation {op!r} does not run on a tab (bp/ops.py)")
            serve = fn
        HANDLERS[op] = Handler(serve, declared)
        return fn

    return register


def check_complete() -> None:
    """Every declared operation has a handler (called once the handlers are imported)."""
    missing = sorted(set(ops.OPS) - set(HANDLERS))
    if missing:
        raise RuntimeError(f"declared operations without a handler: {missing}")


def on_tab(broker: HandlerBroker, request: Request, fn: Callable[[Tab], Any], *, create: bool = False,
           pick: Pick | None = None, observe_after: bool = False, reloads: bool = False,
           settles: bool = False) -> Any:
    """Run fn(tab) on the worker of the Agent's selected tab (or of the tab `pick` chose)."""
    from broker.tabs import routing
    from broker.tabs.session import session_for

    agent = routing.agent_for(broker, request)
    raw = pick(broker, agent, request) if pick else routing.selected_tab(broker, agent, request, create=create)
    deadline = time.monotonic() + request.remaining()

    def run(worker) -> Any:
        tab = Tab(broker, request, agent, raw, session_for(worker, broker.browser, crashed_ok=reloads), deadline)
        if not observe_after:
            return fn(tab)
        from broker.actions import pipeline

        return pipeline.act(tab, fn, settles)

    return broker.workers.run(raw, run, timeout_s=request.remaining(), record=request.record)
