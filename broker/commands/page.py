"""Page family: read, search, find, locate, frame, eval (cli/commands/page.py)."""

from bp import protocol
from broker.observe import frames
from broker.page import content
from broker.registry import handler


def _frame(agent, raw, session, args, deadline):
    if "index" in args:
        return frames.select_frame(agent, raw, session, args["index"])
    return frames.frames_result(agent, raw, session)


READERS = {
    protocol.OP_READ: content.read,
    protocol.OP_SEARCH: content.search,
    protocol.OP_EVAL: content.evaluate,
    protocol.OP_FRAME: _frame,
}


def _reader(fn):
    def run(tab):
        content.check_dialog(tab.session)  # an open JavaScript dialog blocks every page call, even the frame tree
        return fn(tab.agent, tab.raw, tab.session, tab.args, tab.deadline)

    return run


for _op, _fn in READERS.items():
    handler(_op)(_reader(_fn))


@handler(protocol.OP_LOCATE)
def _locate(tab):
    content.check_dialog(tab.session)
    # locate scrolls its match into view: not when the person's policy denies scrolling to this Agent.
    scroll = tab.broker.policy.denied(tab.request.client, protocol.OP_SCROLL) is None
    return content.locate(tab.agent, tab.raw, tab.session, tab.args, tab.deadline, scroll=scroll)


@handler(protocol.OP_FIND)
def _find(tab):
    content.check_dialog(tab.session)
    return content.find(tab.agent, tab.raw, tab.session, tab.args, tab.deadline, broker=tab.broker)  # refs need the broker
