"""Controls that only a JavaScript listener makes clickable (`addEventListener('click', …)` on a
plain div, no role, no tabindex, no pointer cursor): invisible to the accessibility tree and to
an in-page walker. Chrome knows them: one `DOMDebugger.getEventListeners` over the page's
main-world document (pierce, whole subtree) lists the nodes with pointer listeners. New ones are handed to Browser
Pilot's isolated world by position (broker/observe/worlds.py `node_paths`: never as objects), at most
MAX_NEW per observation, into a WeakSet the walker reads; known nodes are remembered per
document, so a page costs this once, plus one listing call per observation.
"""

from bp.errors import BPError
from broker.observe.worlds import call_in_world, helper, node_paths

POINTER_TYPES = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "dblclick"})
MAX_NEW = 64
GROUP = "browser-pilot-listeners"

def mark(session, context_id, known):
    """Mark listener-only candidates in the world `context_id`; `known` is this document's set
    of already-seen backend node ids (updated in place). Best effort: any failure leaves the
    observation as it would be without listener facts."""
    try:
        # Listed from the page's own (main-world) document, the world the listeners belong to.
        # Listing them through an isolated world crashes the renderer (Chromium 156): a raw CDP
        # client that lists from the probe world, resolves the nodes there and then runs the
        # walker kills a 300-row table page with four listener icons on the 2nd-5th observation,
        # and a 2,000-row one on the 2nd; listed from the main world, 30 in a row are fine
        # (tests/e2e/test_observe_crash.py). Through Browser Pilot's own world it would also
        # leave duplicate wrappers (see worlds.node_paths). `document` is unforgeable, so the
        # page cannot hand us another object, and evaluating it runs no page script.
        reply = session.call("Runtime.evaluate", {"expression": "document", "objectGroup": GROUP}, timeout_s=5.0,
                             abort=getattr(session, "dialog_open", None))
        if reply is None:
            return 0  # a dialog opened: the observation stops at its next step
        document = (reply.get("result") or {}).get("objectId")
        if not document:
            return 0
        listeners = session.call("DOMDebugger.getEventListeners", {"objectId": document, "depth": -1, "pierce": True},
                                 timeout_s=5.0).get("listeners") or []
        session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": GROUP})
        fresh = []
        for listener in listeners:
            node = listener.get("backendNodeId")
            if listener.get("type") in POINTER_TYPES and node and node not in known:
                known.add(node)
                fresh.append(node)
        paths = [p for p in node_paths(session, fresh[:MAX_NEW]) if p is not None]
        if not paths:
            return 0
        return call_in_world(session, context_id, helper("markListeners"), {"paths": paths}, 5.0) or 0
    except BPError:
        return 0
