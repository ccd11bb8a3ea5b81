"""Operation name -> handler. Handlers live in broker/handlers/<family>.py and register here."""

import time
from dataclasses import dataclass, field


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
    record: object = None  # its command record (broker/commands.py), for browser commands

    def cancelled(self):
        """Whether the Agent asked to cancel this command (long waits poll this)."""
        return self.record is not None and self.record.cancel_requested

    @property
    def deadline(self):
        return self.received_at + self.timeout_ms / 1000.0

    def remaining(self):
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class Handler:
    fn: object
    inline: bool  # answered on the front loop itself: must never block


HANDLERS = {}


def handler(op, *, inline=False):
    def register(fn):
        HANDLERS[op] = Handler(fn, inline)
        return fn

    return register
