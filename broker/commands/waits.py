"""Waits and dialogs: wait, dialogs, dialog (cli/commands/wait.py, cli/commands/dialogs.py).

Logic lives in broker/waits/conditions.py, broker/tabs/dialogs.py (what is pending) and
broker/waits/dialog_answer.py. Neither listing nor answering a dialog queues behind the tab's
worker (a command blocked by the dialog must not block its answer)."""

import time

from bp import protocol
from broker.tabs import dialogs
from broker.waits import dialog_answer
from broker.tabs import routing
from broker.waits import conditions
from broker.registry import handler


@handler(protocol.OP_WAIT)
def wait(broker, request):
    return conditions.wait(broker, request, hub=broker.network_hub, downloads=broker.download_tracker)


@handler(protocol.OP_DIALOGS)
def list_dialogs(broker, request):
    agent = routing.agent_for(broker, request)
    return dialogs.result(broker, agent)


@handler(protocol.OP_DIALOG)
def answer_dialog(broker, request):
    agent = routing.agent_for(broker, request)
    args = request.args
    return dialog_answer.answer(broker, agent, args["dialogId"], args["action"] == "accept", args.get("promptText"),
                          timeout_s=max(0.5, min(dialog_answer.ANSWER_TIMEOUT_S, request.remaining())),
                          deadline=time.monotonic() + request.remaining(), record=request.record)
