"""Files family: screenshot, pdf, downloads, download, upload (cli/commands/files.py).

Logic: broker/files/media.py; private storage: broker/files/artifacts.py; download tracking:
broker/files/downloads.py; output paths: bp/outputs.py."""

from bp import protocol
from broker.files import media
from broker.tabs import routing
from broker.registry import handler

# The broker's services are handed to the features that use them: the artifact store (private
# copies) and the download tracker.
handler(protocol.OP_SCREENSHOT)(lambda tab: media.screenshot(*tab.parts(), store=tab.broker.artifact_store))
handler(protocol.OP_PDF)(lambda tab: media.pdf(*tab.parts(), store=tab.broker.artifact_store))
handler(protocol.OP_UPLOAD, observe_after=True)(
    lambda tab: media.upload(*tab.parts(), store=tab.broker.artifact_store))


@handler(protocol.OP_DOWNLOADS)
def downloads(broker, request):
    agent = routing.agent_for(broker, request)
    result = {"downloads": media.download_rows(broker.download_tracker, agent)}
    dropped = broker.download_tracker.dropped_of(agent)
    if dropped:
        result["dropped"] = dropped  # the oldest, forgotten past 64 per key
    return result


@handler(protocol.OP_DOWNLOAD)
def download(broker, request):
    agent = routing.agent_for(broker, request)
    return media.download_export(broker.download_tracker, broker.artifact_store, agent, request.args)
