"""Files family: screenshot, pdf, downloads, download, upload (cli/commands/files.py).

Logic: broker/files.py; private storage: broker/artifacts.py; download tracking:
broker/downloads.py; output paths: bp/outputs.py."""

import time

from bp import protocol
from broker import files, routing
from broker.handlers.actions import act
from broker.registry import handler
from broker.tabs import session_for


def _on_tab(broker, request, fn):
    """Run fn(broker, agent, raw, session, args, deadline) on the selected tab's worker."""
    agent = routing.agent_for(broker, request)
    raw = routing.selected_tab(broker, agent, request, create=False)
    deadline = time.monotonic() + request.remaining()

    def run(worker):
        session = session_for(worker, broker.browser)
        return fn(broker, agent, raw, session, request.args, deadline)

    return broker.browser.workers.run(raw, run, timeout_s=request.remaining())


@handler(protocol.OP_SCREENSHOT)
def screenshot(broker, request):
    return _on_tab(broker, request, files.screenshot)


@handler(protocol.OP_PDF)
def pdf(broker, request):
    return _on_tab(broker, request, files.pdf)


@handler(protocol.OP_UPLOAD)
def upload(broker, request):
    return act(broker, request, files.upload)


@handler(protocol.OP_DOWNLOADS)
def downloads(broker, request):
    agent = routing.agent_for(broker, request)
    return {"downloads": files.download_rows(broker, agent)}


@handler(protocol.OP_DOWNLOAD)
def download(broker, request):
    agent = routing.agent_for(broker, request)
    return files.download_export(broker, agent, request.args)
