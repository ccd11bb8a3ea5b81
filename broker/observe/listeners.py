"""Controls that only a JavaScript listener makes clickable (`addEventListener('click', …)` on a
plain div, no role, no tabindex, no pointer cursor): invisible to the accessibility tree and to
an in-page walker. Chrome knows them: one `DOMDebugger.getEventListeners` over the page's
main-world document (pierce, whole subtree) lists the nodes with pointer listeners. New ones are handed to Browser
Pilot's isolated world by position (broker/observe/worlds.py `node_paths`: never as objects), at most
MAX_NEW per observation, into a WeakSet the walker reads; known nodes are remembered per
document, so a page costs this once, plus one listing call per observation (the main world's
`document` is asked for once per document too: its object is kept, in a group of its own).
"""

from bp.errors import BPError
from broker.observe.worlds import call_in_world, helper, node_paths

POINTER_TYPES = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "dblclick"})
MAX_NEW = 64
DOCUMENT_GROUP = "browser-pilot-listeners-document"


def _document(session, held):
    """The main world's `document` object (kept in `held` for the document's life), or None."""
    if held.get("document"):
        return held["document"]
    reply = session.call("Runtime.evaluate", {"expression": "document", "objectGroup": DOCUMENT_GROUP}, timeout_s=5.0,
                         abort=getattr(session, "dialog_open", None))
    held["document"] = ((reply or {}).get("result") or {}).get("objectId")
    return held["document"]


def _listing(document):
    """The listing's parameters: every listener of the document's whole tree, shadow roots included."""
    return {"objectId": document, "depth": -1, "pierce": True}


def list_later(session, held):
    """The listing, sent now so that the walker's round trip overlaps it (its answer is read by
    mark(listing=)), or None where the session cannot send ahead or the page cannot be asked."""
    if getattr(session, "call_later", None) is None:
        return None
    try:
        document = _document(session, held)
        if not document:
            return None
        return session.call_later("DOMDebugger.getEventListeners", _listing(document))
    except BPError:
        return None


def _listeners(session, held, listing=None):
    """The pointer listeners of the whole document, or None (a dialog opened). `listing`: the
    listing sent ahead (list_later)."""
    if listing is not None:
        try:
            reply = listing.result(timeout_s=5.0, abort=getattr(session, "dialog_open", None))
            if reply is None:
                return None
            return reply.get("listeners") or []
        except BPError:
            held.pop("document", None)  # gone with the page's world: asked afresh below
    for _ in range(2):  # a kept object can be gone (the page's world was reset): ask once afresh
        document = _document(session, held)
        if not document:
            return None
        try:
            return session.call("DOMDebugger.getEventListeners", _listing(document), timeout_s=5.0).get("listeners") or []
        except BPError:
            if held.pop("document", None) is None:
                raise
    return None


def mark(session, context_id, known, held=None, listing=None):
    """Mark listener-only candidates in the world `context_id`; `known` is this document's set
    of already-seen backend node ids (updated in place), `held` its kept objects, `listing` the
    listing sent ahead. How many it marked. Best effort: any failure leaves the observation as
    it would be without listener facts."""
    held = {} if held is None else held
    try:
        # Listed from the page's own (main-world) document, the world the listeners belong to.
        # Listing them through an isolated world crashes the renderer (Chromium 156): a raw CDP
        # client that lists from the probe world, resolves the nodes there and then runs the
        # walker kills a 300-row table page with four listener icons on the 2nd-5th observation,
        # and a 2,000-row one on the 2nd; listed from the main world, 30 in a row are fine
        # (tests/e2e/test_observe_crash.py). Through Browser Pilot's own world it would also
        # leave duplicate wrappers (see worlds.node_paths). `document` is unforgeable, so the
        # page cannot hand us another object, and evaluating it runs no page script.
        listeners = _listeners(session, held, listing)
        if listeners is None:
            return 0  # a dialog opened: the observation stops at its next step
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
