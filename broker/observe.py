"""Observations: what an Agent may act on in a tab now, and the refs that name it.

The walker (scripts/observe.js) runs in Browser Pilot's own isolated world, one
Runtime.evaluate per observation (field notes: ~3 ms at 100 elements, 145 ms at 10,000, against
3.5 s for the full AX tree), and keeps the element handles in that world. A ref is bound to:
Agent key, browser generation, tab, CDP session, main-frame loader, the isolated world's
execution context (one per document), the observation id and the exact node. A ref always means
the Agent's latest observation of that tab: a newer observation supersedes the older one.
"""

import json
import os
import time
from importlib import resources

from bp.errors import BPError

MAX_LIMIT = 10_000
MAX_BYTES = 2 * 1024 * 1024
OBSERVATION_TTL_S = 300.0
WORLD_NAME = "browser-pilot"

_SCRIPTS = {}


def script(name):
    if name not in _SCRIPTS:
        _SCRIPTS[name] = resources.files("broker").joinpath("scripts", name).read_text()
    return _SCRIPTS[name]


MAX_FRAME_DEPTH = 8  # nested out-of-process iframes followed below the tab


class World:
    """Browser Pilot's isolated world in one document, where an observation keeps its element
    handles. A tab's own document is the root; an out-of-process iframe's world has the world
    of the document that embeds it as `parent`, and the frame element's position there (`slot`)."""

    __slots__ = ("session", "context_id", "parent", "slot")

    def __init__(self, session, context_id, parent=None, slot=None):
        self.session = session
        self.context_id = context_id
        self.parent = parent
        self.slot = slot


class Observation:
    __slots__ = ("id", "generation", "raw", "session", "loader", "context_id", "count", "created_at", "refs")

    def __init__(self, generation, raw, session, loader, context_id, count):
        self.id = "obs-" + os.urandom(8).hex()
        self.generation = generation
        self.raw = raw
        self.session = session
        self.loader = loader
        self.context_id = context_id
        self.count = count
        self.created_at = time.monotonic()
        self.refs = None  # ref - 1 -> (World, index in that world); None: all in the tab's world

    def locate(self, ref):
        if self.refs is None:
            return World(self.session, self.context_id), ref - 1
        return self.refs[ref - 1]


def world_key(agent_key):
    """The key under which the world stores this Agent's handles (not the raw client key)."""
    import hashlib

    return "a" + hashlib.sha256(agent_key.encode()).hexdigest()[:16]


def call_in_world(session, context_id, source, opts, timeout_s=15.0, fn=None):
    expression = f"({source})({json.dumps(opts)}{', ' + fn if fn else ''})"
    reply = session.call("Runtime.evaluate", {"expression": expression, "contextId": context_id,
                                              "returnByValue": True, "awaitPromise": False}, timeout_s=timeout_s)
    if reply.get("exceptionDetails"):
        details = reply["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text") or "script failed"
        raise BPError("internal_error", "The observation script failed in the page.",
                      context={"detail": text.splitlines()[0][:200]})
    return (reply.get("result") or {}).get("value")


def _walk(session, world_context, opts, timeout_s):
    """Run the walker in a session's isolated world; once more if the document changed under us."""
    try:
        return world_context, call_in_world(session, world_context, script("observe.js"), opts, timeout_s)
    except BPError as exc:
        if not context_gone(exc):
            raise
        session.forget_world()
        context_id, _ = session.world(WORLD_NAME)
        return context_id, call_in_world(session, context_id, script("observe.js"), opts, timeout_s)


SLOT_OF = "function (key) { const s = (globalThis.__browserPilot || {})[key]; return s && s.frames ? s.frames.indexOf(this) : -1; }"


def _frame_slots(world, key):
    """slot -> FrameSession for the out-of-process iframes the walker met in this world: asks
    Chrome which element owns each attached child frame and where the walker stored it."""
    slots = {}
    for child in world.session.live_children():
        try:
            owner = world.session.call("DOM.getFrameOwner", {"frameId": child.frame_id}, timeout_s=5.0)
            node = world.session.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                                          "executionContextId": world.context_id,
                                                          "objectGroup": "browser-pilot"}, timeout_s=5.0)
            reply = world.session.call("Runtime.callFunctionOn", {
                "functionDeclaration": SLOT_OF, "objectId": node["object"]["objectId"],
                "arguments": [{"value": key}], "returnByValue": True}, timeout_s=5.0)
        except BPError:
            continue  # the frame went away meanwhile: it is simply not observed
        slot = (reply.get("result") or {}).get("value")
        if isinstance(slot, int) and slot >= 0:
            slots[slot] = child
    if slots:
        world.session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": "browser-pilot"})
    return slots


def _same_process_world(world, key, slot):
    """Browser Pilot's isolated world in the document of the frame element at `slot`."""
    session = world.session
    reply = session.call("Runtime.evaluate", {
        "expression": f"globalThis.__browserPilot[{json.dumps(key)}].frames[{int(slot)}]",
        "contextId": world.context_id, "objectGroup": "browser-pilot"}, timeout_s=5.0)
    object_id = (reply.get("result") or {}).get("objectId")
    if not object_id:
        raise BPError("internal_error", "frame element not found")
    node = session.call("DOM.describeNode", {"objectId": object_id}, timeout_s=5.0)["node"]
    session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": "browser-pilot"})
    if not node.get("frameId"):
        raise BPError("internal_error", "frame element without a frame")
    return session.frame_world(node["frameId"], WORLD_NAME)


def _expand(world, result, opts, timeout_s, depth, acc):
    """Append the world's elements to acc (splicing in out-of-process frames where the walker
    left a placeholder) and return {position in the walker's output: global ref} for its hints."""
    positions = {}
    local = 0
    slots = None
    for position, item in enumerate(result["elements"]):
        if "frame" not in item:
            acc["rows"].append((item, world, local))
            positions[position + 1] = len(acc["rows"])
            local += 1
            continue
        if slots is None:
            slots = _frame_slots(world, opts["key"])
        child = slots.get(item["frame"])
        try:
            if depth >= MAX_FRAME_DEPTH:
                raise BPError("result_too_large", "frames nested too deeply")
            if child is None:
                # Cross-origin but same-site (a.example.com in b.example.com): same renderer,
                # so the same session, but a world of its own in that frame.
                child = world.session
                context_id = _same_process_world(world, opts["key"], item["frame"])
                child_result = call_in_world(child, context_id, script("observe.js"), opts, timeout_s)
            else:
                context_id, _ = child.world(WORLD_NAME)
                context_id, child_result = _walk(child, context_id, opts, timeout_s)
        except BPError:
            acc["omitted"] += 1
            continue
        acc["reasons"].update(child_result["truncationReasons"])
        child_world = World(child, context_id, world, item["frame"])
        acc["hints"].append((child_result["hints"], _expand(child_world, child_result, opts, timeout_s, depth + 1, acc)))
    return positions


def _merge_hints(groups, limit):
    merged = {}
    for hints, positions in groups:
        for hint in hints:
            hint = dict(hint)
            if "refs" in hint:
                hint["refs"] = [positions[r] for r in hint["refs"] if r in positions and positions[r] <= limit]
            known = merged.get(hint["code"])
            if known is None:
                merged[hint["code"]] = hint
            elif "refs" in hint:
                known["refs"] = (known.get("refs") or []) + hint["refs"]
    out = []
    for hint in merged.values():
        if "refs" in hint:
            hint["refs"] = hint["refs"][:32]
        out.append(hint)
    return out[:16]


def observe(broker, agent, raw, session, limit, timeout_s=15.0):
    """A fresh observation of the tab, stored as the Agent's latest for it."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BPError("invalid_argument", f"--limit must be 1-{MAX_LIMIT}.", context={"field": "limit"})
    if session.dialog_open():
        raise BPError("action_not_verified", "A JavaScript dialog is open in this tab and blocks the page.",
                      retryable=True, context={"reason": "dialog_open", "dialogType": session.dialog.get("type")})
    context_id, loader = session.world(WORLD_NAME)
    obs = Observation(broker.browser.generation, raw, session, loader, context_id, 0)
    opts = {"limit": limit, "key": world_key(agent.key), "obs": obs.id}
    context_id, result = _walk(session, context_id, opts, timeout_s)
    if context_id != obs.context_id:
        obs.context_id, obs.loader = context_id, session.loader
    top = World(session, context_id)
    acc = {"rows": [], "omitted": 0, "reasons": set(result["truncationReasons"]), "hints": []}
    acc["hints"].insert(0, (result["hints"], _expand(top, result, opts, timeout_s, 0, acc)))
    rows = acc["rows"]
    reasons = acc["reasons"]
    if len(rows) > limit:
        del rows[limit:]
        reasons.add("element_limit")
    hints = _merge_hints(acc["hints"], len(rows))
    if acc["omitted"]:
        hints.append({"code": "frames_omitted", "source": "observation", "confidence": "strong",
                      "recommendedAction": "inspect_visually", "count": acc["omitted"]})
    if any(world is not top for _, world, _ in rows):
        obs.refs = [(world, local) for _, world, local in rows]
    agent.observations[raw] = obs
    info = broker.browser.targets.info(raw) or {}
    profile = broker.browser.targets.profile(info.get("browserContextId"))
    out = {"title": result["title"], "url": result["url"], "page": result["page"], "elements": [],
           "truncated": False, "truncationReasons": [], "hints": hints[:16]}
    if profile:
        out["profileContextId"] = profile[0]
    for ref, (element, _, _) in enumerate(rows, start=1):
        out["elements"].append({"ref": ref, **element})
    size = len(json.dumps(out, ensure_ascii=False).encode())
    while size > MAX_BYTES and out["elements"]:  # meet the byte budget by cutting, with a reason
        dropped = out["elements"].pop()
        size -= len(json.dumps(dropped, ensure_ascii=False).encode()) + 1
        reasons.add("byte_limit")
    order = ["element_limit", "text_limit", "depth_limit", "byte_limit", "work_limit"]
    out["truncationReasons"] = [r for r in order if r in reasons]
    out["truncated"] = bool(out["truncationReasons"])
    obs.count = len(out["elements"])
    return out


def context_gone(exc):
    return "Cannot find context" in exc.message or "context was destroyed" in exc.message.lower()


def stale(reason, message="The ref is stale: the page changed since the snapshot."):
    return BPError("stale_ref", message, context={"field": "ref", "reason": reason})


def _check(broker, agent, raw, session, ref):
    """The ref's (World, index) in the Agent's latest observation of this tab, or stale_ref."""
    obs = agent.observations.get(raw)
    if obs is None:
        raise stale("no_observation", "There is no snapshot of this tab for this Agent; run 'bp snapshot'.")
    if obs.generation != broker.browser.generation:
        raise stale("browser_reconnected")
    if time.monotonic() - obs.created_at > OBSERVATION_TTL_S:
        raise stale("expired")
    if not isinstance(ref, int) or not 1 <= ref <= obs.count:
        raise BPError("stale_ref", f"Ref {ref} is not in the latest snapshot (1-{obs.count}).",
                      context={"field": "ref", "reason": "unknown_ref"})
    if obs.session is not session or not session.alive:
        raise stale("session_replaced")
    if session.loader != obs.loader:
        raise stale("navigation")
    world, index = obs.locate(ref)
    for w in _chain(world):
        if not w.session.alive:
            raise stale("frame_detached")
    return obs, world, index


def _chain(world):
    while world is not None:
        yield world
        world = world.parent


def _in_world(world, obs, opts, fn=None):
    try:
        answer = call_in_world(world.session, world.context_id, script("resolve.js"), {"obs": obs.id, **opts}, fn=fn)
    except BPError as exc:
        if context_gone(exc):
            raise stale("document_replaced") from None
        if exc.code == "stale_ref":
            raise
        if world.parent is not None and not world.session.alive:
            raise stale("frame_detached") from None
        raise
    if answer is None:
        raise stale("document_replaced")
    if answer.get("stale"):
        raise stale(answer["stale"])
    return answer


def _refused(answer):
    context = {"field": "ref", "reason": answer["refuse"]}
    if answer.get("obstruction"):
        context["obstruction"] = {k: v for k, v in answer["obstruction"].items() if v}
    return BPError("action_not_verified", f"The element cannot be acted on now: {answer['refuse']}.",
                   retryable=True, context=context)


def resolve(broker, agent, raw, session, ref, mode="act", **extra):
    """Validate ref against the Agent's latest observation of this tab; returns the resolver's
    answer (top-level viewport coordinates and state) or raises stale_ref / action_not_verified.
    Never rebinds. Inside out-of-process iframes the hit points are mapped up through every
    embedding document, each of which must show the frame there."""
    obs, world, index = _check(broker, agent, raw, session, ref)
    key = world_key(agent.key)
    opts = {"key": key, "index": index, "mode": mode, **extra}
    nested = world.parent is not None and mode == "act"
    focus = opts.pop("focus", False) if nested else False
    answer = _in_world(world, obs, dict(opts, allPoints=True, nested=True) if nested else opts)
    if answer.get("refuse"):
        raise _refused(answer)
    if not nested:
        return answer
    points = answer["points"]
    # Input goes to the widget of the out-of-process frame that renders the element, in that
    # frame's own coordinates: the browser's routing of top-level coordinates into an OOPIF
    # relies on compositor hit-test data, which lags behind a scroll in a tab that draws no
    # frames (background tabs). The mapping up to the top still proves that the element shows
    # through every embedding document at that point.
    target = None
    child = world
    while child.parent is not None:
        if target is None and child.parent.session is not child.session:
            target = (child.session, points)
        mapped = _in_world(child.parent, obs, {"key": key, "mode": "frame", "slot": child.slot, "points": points,
                                               "nested": child.parent.parent is not None})
        if mapped.get("refuse"):
            raise _refused(mapped)
        points, child = mapped["points"], child.parent
    if target is None:
        target = (session, points)
    first = next(i for i, p in enumerate(points) if p)
    if focus:
        # Focus only once the element is known to be reachable through every frame above it.
        focused = _in_world(world, obs, dict(opts, focus=True, nested=True))
        if focused.get("refuse"):
            raise _refused(focused)
        answer.update(editable=focused.get("editable"), state=focused.get("state"))
    answer["x"], answer["y"] = points[first]
    answer["input"] = (target[0], *target[1][first])
    return answer


def on_ref(broker, agent, raw, session, ref, source, args=None, timeout_s=15.0):
    """Run the JavaScript function `source` as fn(element, args) against the ref's element in
    Browser Pilot's isolated world, after the same staleness checks as resolve(); returns its
    (JSON) value."""
    obs, world, index = _check(broker, agent, raw, session, ref)
    answer = _in_world(world, obs, {"key": world_key(agent.key), "index": index, "mode": "call", "args": args or {}},
                       fn=source)
    return answer.get("value")
