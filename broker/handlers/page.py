"""Page family: read, search, find, locate, frame, eval (cli/commands/page.py)."""

import time

from bp import protocol
from broker import page, routing
from broker.registry import handler
from broker.tabs import session_for


def _on_tab(broker, request, fn):
    """Run fn(agent, raw, session, args, deadline) on the selected tab's worker."""
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request, create=False)
    deadline = time.monotonic() + request.remaining()

    def run(worker):
        session = session_for(worker, broker.browser)
        page.check_dialog(session)  # an open JavaScript dialog blocks every page call, even the frame tree
        return fn(agent, raw, session, request.args, deadline)

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())


@handler(protocol.OP_READ)
def read(broker, request):
    return _on_tab(broker, request, page.read)


@handler(protocol.OP_SEARCH)
def search(broker, request):
    return _on_tab(broker, request, page.search)


@handler(protocol.OP_FIND)
def find(broker, request):
    return _on_tab(broker, request, page.find)


@handler(protocol.OP_LOCATE)
def locate(broker, request):
    return _on_tab(broker, request, page.locate)


@handler(protocol.OP_EVAL)
def evaluate(broker, request):
    return _on_tab(broker, request, page.evaluate)


@handler(protocol.OP_FRAME)
def frame(broker, request):
    def run(agent, raw, session, args, deadline):
        if "index" in args:
            return page.select_frame(agent, raw, session, args["index"])
        return page.frames_result(agent, raw, session)

    return _on_tab(broker, request, run)
