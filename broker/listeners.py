"""Controls that only a JavaScript listener makes clickable (`addEventListener('click', …)` on a
plain div, no role, no tabindex, no pointer cursor): invisible to the accessibility tree and to
an in-page walker. Chrome knows them: one `DOMDebugger.getEventListeners` over the document
(pierce, whole subtree) lists the nodes with pointer listeners. The new ones are handed to
Browser Pilot's isolated world (a WeakSet the walker reads), at most MAX_NEW per observation;
known nodes are remembered per document, so a page costs this once, plus one listing call
per observation (~5-20 ms on 1,000-5,000 element pages).
"""

from bp.errors import BPError

POINTER_TYPES = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "dblclick"})
MAX_NEW = 64
GROUP = "browser-pilot-listeners"
MARK = ("function (...els) { const s = (globalThis.__browserPilot = globalThis.__browserPilot || {});"
        " s.listeners = s.listeners || new WeakSet();"
        " for (const e of els) if (e && e.nodeType === 1) s.listeners.add(e); return els.length; }")


def mark(session, context_id, known):
    """Mark listener-only candidates in the world `context_id`; `known` is this document's set
    of already-marked backend node ids (updated in place). Best effort: any failure leaves the
    observation as it would be without listener facts."""
    try:
        reply = session.call("Runtime.evaluate", {"expression": "document", "contextId": context_id,
                                                  "objectGroup": GROUP}, timeout_s=5.0)
        document = (reply.get("result") or {}).get("objectId")
        if not document:
            return 0
        listeners = session.call("DOMDebugger.getEventListeners", {"objectId": document, "depth": -1, "pierce": True},
                                 timeout_s=5.0).get("listeners") or []
        fresh = []
        for listener in listeners:
            node = listener.get("backendNodeId")
            if listener.get("type") in POINTER_TYPES and node and node not in known:
                known.add(node)
                fresh.append(node)
        objects = []
        for node in fresh[:MAX_NEW]:
            try:
                resolved = session.call("DOM.resolveNode", {"backendNodeId": node, "executionContextId": context_id,
                                                            "objectGroup": GROUP}, timeout_s=5.0)
            except BPError:
                continue  # e.g. a node of another frame's document
            object_id = (resolved.get("object") or {}).get("objectId")
            if object_id:
                objects.append(object_id)
        if objects:
            session.call("Runtime.callFunctionOn", {"functionDeclaration": MARK, "objectId": objects[0],
                                                    "arguments": [{"objectId": o} for o in objects]}, timeout_s=5.0)
        return len(objects)
    except BPError:
        return 0
    finally:
        try:
            session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": GROUP})
        except BPError:
            pass
