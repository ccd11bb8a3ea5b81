"""The frames of a tab: the tree, an Agent's selected frame, each frame's worlds and geometry.

`bp frame` lists the tab's frames from Page.getFrameTree depth-first (index 0 = the top
document); raw CDP frame ids stay here. The selection is per Agent, per tab: the Agent's tab
(broker/agents.py AgentTab.frame) keeps the selected frame's raw id and the main-frame loader it was chosen under.
A new main document (a navigation of the tab) resets it to the top; a selected frame that has
gone away fails once with stale_ref (reason frame_detached) and resets to the top.
Page.getFrameTree lists only the frames rendered by one process, so the out-of-process
(cross-site) iframes attached to the tab (broker/tabs/session.py FrameSession) are spliced in below the
frame that embeds them, each with its own subtree, and siblings are put in document order of
their frame elements. A Frame carries the CDP session that renders it: scripts run there, and
geometry is mapped to the tab's viewport through every frame element above it.
"""

import dataclasses
import threading
import time
import weakref
from typing import Any

from bp.errors import BPError, invalid_argument
from broker.observe.worlds import WORLD_NAME, script
from broker.tabs.session import FrameSession, FrameSessions

MAX_FRAMES = 1000
MAX_FRAME_DEPTH = 8  # nested out-of-process iframes followed below the tab
FRAME_HINT = "Run 'bp frame' to list the frames of the tab, then 'bp frame <index>'."


@dataclasses.dataclass(slots=True, eq=False)
class Frame:
    """One frame as Browser Pilot addresses it: a public index and the internal ids behind it."""

    index: int
    frame_id: str
    parent_index: int | None
    url: str
    name: str
    loader: str | None
    session: FrameSessions  # the tab's session (TabSession); an out-of-process frame brings its own (FrameSession)

    @property
    def top(self):
        return self.index == 0

    def public(self, selected=False):
        row = {"index": self.index, "url": self.url, "name": self.name, "selected": selected}
        if self.parent_index is not None:
            row["parentIndex"] = self.parent_index
        return row


ORDER_GROUP = "browser-pilot-frames"
# Document order of frame elements, shadow trees included (a host's shadow content comes before its
# light children, as the observation walker visits them).
ORDER_OWNERS = """function (...owners) {
  const key = (node) => {
    const steps = [];
    for (let n = node; n && n.parentNode; ) {
      const parent = n.parentNode, shadow = parent.nodeType === 11 && parent.host;
      steps.push([shadow ? 0 : 1, Array.prototype.indexOf.call(parent.children || parent.childNodes, n)]);
      n = shadow ? parent.host : parent;
    }
    return steps.reverse().flat();
  };
  const keys = owners.map(key);
  const cmp = (a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
    return a.length - b.length;
  };
  return owners.map((_, i) => i).sort((i, j) => cmp(keys[i], keys[j]));
}"""


def _tree(target, depth=0):
    """One process's frame tree from `target` (the tab's session or an out-of-process frame's)
    as {frame, children, session, remote} nodes, with the out-of-process frames attached under
    it spliced in below the frame that embeds them."""
    root: dict[str, Any] | None = None
    nodes: dict[str | None, dict[str, Any]] = {}
    # (CDP frame tree node, the entry of its parent frame; None for the root)
    stack: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
        (target.call("Page.getFrameTree", timeout_s=10.0)["frameTree"], None)]
    while stack:
        node, parent = stack.pop()
        entry = {"frame": node.get("frame") or {}, "children": [], "session": target, "remote": False}
        nodes[entry["frame"].get("id")] = entry
        if parent is None:
            root = entry
        else:
            parent["children"].append(entry)
        for child in reversed(node.get("childFrames") or []):
            stack.append((child, entry))
    assert root is not None  # the stack started with the root
    if depth < MAX_FRAME_DEPTH:
        for child in target.live_children():
            try:
                sub = _tree(child, depth + 1)
            except BPError:
                continue  # it went away meanwhile
            sub["remote"] = True
            (nodes.get(child.parent_frame_id) or root)["children"].append(sub)
    return root


def _in_document_order(entry, tab):
    """Siblings that include out-of-process frames, sorted by their frame elements (Page.getFrameTree
    already lists a process's own frames in order). Left as they are if that cannot be told."""
    children = entry["children"]
    if len(children) < 2 or not any(c["remote"] for c in children):
        return
    target, frame_id = entry["session"], entry["frame"].get("id")
    parent = None if target is tab and frame_id == tab.frame_id else \
        Frame(0, frame_id, None, "", "", entry["frame"].get("loaderId"), target)
    try:
        context_id = world_for(parent, tab)
        objects = []
        for child in children:
            owner = target.call("DOM.getFrameOwner", {"frameId": child["frame"].get("id")}, timeout_s=5.0)
            node = target.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                                   "executionContextId": context_id, "objectGroup": ORDER_GROUP},
                               timeout_s=5.0)
            objects.append(node["object"]["objectId"])
        reply = target.call("Runtime.callFunctionOn", {
            "functionDeclaration": ORDER_OWNERS, "objectId": objects[0], "returnByValue": True,
            "arguments": [{"objectId": o} for o in objects]}, timeout_s=5.0)
        order = (reply.get("result") or {}).get("value")
        if order is not None and sorted(order) == list(range(len(children))):
            entry["children"] = [children[i] for i in order]
    except (BPError, KeyError, TypeError):
        pass
    finally:
        target.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": ORDER_GROUP})


def list_frames(session, ordered=True):
    """The tab's frames, depth-first in document order, out-of-process ones included;
    (frames, truncated). Without `ordered`, siblings may be out of document order (cheaper, for
    finding a frame by id)."""
    frames: list[Frame] = []
    stack: list[tuple[dict[str, Any], int | None]] = [(_tree(session), None)]  # (node, parent's index)
    truncated = False
    while stack:
        node, parent_index = stack.pop()
        if len(frames) >= MAX_FRAMES:
            truncated = True
            break
        frame = node["frame"]
        url = (frame.get("url") or "") + (frame.get("urlFragment") or "")
        entry = Frame(len(frames), frame.get("id"), parent_index, url[:16384], (frame.get("name") or "")[:4096],
                      frame.get("loaderId"), node["session"])
        frames.append(entry)
        if ordered:
            _in_document_order(node, session)
        for child in reversed(node["children"]):
            stack.append((child, entry.index))
    return frames, truncated


def selected_frame(agent, raw, session):
    """The Agent's selected frame of this tab, or None for the top document."""
    held = agent.known(raw)
    if held is None or held.frame is None:
        return None
    selection = held.frame
    if selection["loader"] != session.loader:
        held.frame = None  # the tab has a new main document: back to the top
        return None
    frames, _ = list_frames(session, ordered=False)
    for frame in frames:
        if frame.frame_id == selection["frameId"]:
            return frame
    held.frame = None
    raise BPError("stale_ref", "The selected frame is gone; the selection is back at the top document.",
                  context={"field": "frame", "reason": "frame_detached"}, hint=FRAME_HINT)


def frames_result(agent, raw, session):
    frames, truncated = list_frames(session)
    current = selected_frame(agent, raw, session)
    chosen = current.index if current is not None else 0
    # Indexes may have shifted since the selection; report the frame that is actually selected.
    if current is not None:
        chosen = next((f.index for f in frames if f.frame_id == current.frame_id), 0)
    return {"frames": [f.public(f.index == chosen) for f in frames], "truncated": truncated}


def select_frame(agent, raw, session, index):
    frames, _ = list_frames(session)
    if not isinstance(index, int) or not 0 <= index < len(frames):
        raise invalid_argument("target", f"Frame index {index} is out of range (0-{len(frames) - 1}); run 'bp frame'.",
                               index=index, count=len(frames))
    frame = frames[index]
    agent.tab(raw).frame = None if frame.top else {"frameId": frame.frame_id, "loader": session.loader}
    return {"frame": index, "url": frame.url}


# --- isolated worlds of subframes ------------------------------------------------------------------

_lock = threading.Lock()
_worlds = weakref.WeakKeyDictionary()  # TabSession -> {frame id: (frame loader, context id)}
_main_worlds = weakref.WeakKeyDictionary()  # TabSession -> {frame id: (frame loader, context id)}
MAX_CACHED = 256


def frame_cache(table, session):
    with _lock:
        cache = table.get(session)
        if cache is None:
            cache = table[session] = {}
        if len(cache) > MAX_CACHED:
            cache.clear()
        return cache


def world_for(frame, session):
    """Execution context id of Browser Pilot's isolated world in the frame's current document."""
    if frame is None:
        return session.world(WORLD_NAME)[0]
    cache = frame_cache(_worlds, frame.session)
    known = cache.get(frame.frame_id)
    if known is not None and known[0] == frame.loader:
        return known[1]
    reply = frame.session.call("Page.createIsolatedWorld", {"frameId": frame.frame_id,
                                                            "worldName": WORLD_NAME,
                                                            "grantUniveralAccess": True})
    cache[frame.frame_id] = (frame.loader, reply["executionContextId"])
    return reply["executionContextId"]


def forget_world(frame, session):
    if frame is None:
        session.forget_world()
    else:
        frame_cache(_worlds, frame.session).pop(frame.frame_id, None)


def _owner_box(target, frame_id):
    """The content box of the frame's element in `target`'s process, in the viewport of that
    process's local root (the tab's top document, or the out-of-process frame `target` is)."""
    owner = target.call("DOM.getFrameOwner", {"frameId": frame_id})
    return target.call("DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]})["model"]["content"]


def _embedder(frame_session, frame_id):
    """The session whose process renders the element of frame `frame_id` served by `frame_session`."""
    if isinstance(frame_session, FrameSession) and frame_id == frame_session.frame_id:
        return frame_session.parent  # an out-of-process frame's element is in its parent's process
    return frame_session


def frame_offset(frame):
    """Where the frame's viewport sits in the top-level viewport, in CSS px. DOM.getBoxModel
    reports quads in the coordinates of the frame's local root (the top document for frames of
    the tab's own process, else the out-of-process frame that process renders), scroll included,
    so the offsets add up through each out-of-process frame above it."""
    if frame is None:
        return 0.0, 0.0
    x = y = 0.0
    target, frame_id = frame.session, frame.frame_id
    for _ in range(MAX_FRAME_DEPTH + 2):
        embedder = _embedder(target, frame_id)
        try:
            content = _owner_box(embedder, frame_id)
        except BPError:
            return 0.0, 0.0  # no box (e.g. a hidden iframe): nothing of it is on screen anyway
        x, y = x + float(content[0]), y + float(content[1])
        if not isinstance(embedder, FrameSession):
            return x, y
        target, frame_id = embedder, embedder.frame_id
    return x, y


REVEAL_GROUP = "browser-pilot-reveal"


def reveal_up(frame, session, rect, deadline, scroll=True):
    """Centre `rect` (in the frame's viewport) in every document above the frame, innermost
    first; returns it in the top-level viewport. `scroll=False`: only map it, nothing scrolls."""
    frames, _ = list_frames(session, ordered=False)
    by_id = {f.frame_id: f for f in frames}
    current = by_id.get(frame.frame_id)
    while current is not None and current.parent_index is not None:
        parent = frames[current.parent_index]
        target = parent.session
        timeout_s = max(1.0, min(10.0, deadline - time.monotonic()))
        try:
            context_id = world_for(None if parent.top else parent, session)
            owner = target.call("DOM.getFrameOwner", {"frameId": current.frame_id}, timeout_s=timeout_s)
            node = target.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                                   "executionContextId": context_id, "objectGroup": REVEAL_GROUP},
                               timeout_s=timeout_s)
            reply = target.call("Runtime.callFunctionOn", {
                "functionDeclaration": script("reveal.js"), "objectId": node["object"]["objectId"],
                "arguments": [{"value": rect}, {"value": not scroll}], "returnByValue": True}, timeout_s=timeout_s)
        except BPError:
            raise BPError("stale_ref", "The selected frame is gone; run 'bp frame' again.",
                          context={"field": "frame", "reason": "frame_detached"}, hint=FRAME_HINT) from None
        finally:
            target.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": REVEAL_GROUP})
        rect = (reply.get("result") or {}).get("value") or rect
        current = parent
    return rect


# --- the page's own (main) world of a subframe, for eval -------------------------------------

class _ContextCollector:
    """Stands in for a TabSession in Targets.sessions on a short-lived helper session: keeps
    the default (main-world) execution contexts that Runtime.enable announces, drops the rest."""

    def __init__(self):
        self.contexts = {}

    def deliver(self, method, params):
        if method == "Runtime.executionContextCreated":
            context = params.get("context") or {}
            aux = context.get("auxData") or {}
            if aux.get("isDefault") and aux.get("frameId"):
                self.contexts[aux["frameId"]] = context.get("id")

    def detached(self):
        pass


def main_world(frame, deadline):
    """The execution context id of the page's own (main) world in a subframe.

    Runtime.evaluate without a context id reaches the top document's main world, but a
    subframe's main-world context id is only announced by Runtime.enable. Enabling Runtime on
    the tab's own session would stream every console call and context event into it for good
    (and is detectable by the page while on), and the alternatives are wrong: an isolated world
    is not the main world, and the parent's `iframe.contentWindow.eval` obeys the frame's CSP
    (which DevTools evaluation does not) and fails for cross-origin frames. So: attach a helper
    session to the tab, enable Runtime there only, keep the announced ids, detach. Context ids
    belong to the renderer, not the session, so the tab's session can use them; they are cached
    per frame document, so this happens once per document of a frame."""
    cache = frame_cache(_main_worlds, frame.session)
    known = cache.get(frame.frame_id)
    if known is not None and known[0] == frame.loader:
        return known[1]
    session = frame.session
    conn, targets = session.conn, session.targets
    timeout_s = max(1.0, min(10.0, deadline - time.monotonic()))
    target_id = getattr(session, "raw_id", None) or session.frame_id  # an OOPIF's target id is its frame id
    helper = conn.cdp("Target.attachToTarget", {"targetId": target_id, "flatten": True},
                      timeout_s=timeout_s)["sessionId"]
    collector = _ContextCollector()
    targets.sessions[helper] = collector  # its events come here (on the relay thread), in order
    try:
        conn.cdp("Runtime.enable", session_id=helper, timeout_s=timeout_s)
    finally:
        targets.sessions.pop(helper, None)
        conn.send_nowait("Target.detachFromTarget", {"sessionId": helper})
    context_id = collector.contexts.get(frame.frame_id)
    if context_id is None:
        raise BPError("action_not_verified", "The selected frame has no script context now (still loading?).",
                      retryable=True, context={"reason": "no_context"})
    cache[frame.frame_id] = (frame.loader, context_id)
    return context_id


def forget_main_world(frame):
    """The frame has a new document since its main-world context id was cached."""
    frame_cache(_main_worlds, frame.session).pop(frame.frame_id, None)
