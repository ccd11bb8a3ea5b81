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


class Observation:
    __slots__ = ("id", "generation", "raw", "session", "loader", "context_id", "count", "created_at")

    def __init__(self, generation, raw, session, loader, context_id, count):
        self.id = "obs-" + os.urandom(8).hex()
        self.generation = generation
        self.raw = raw
        self.session = session
        self.loader = loader
        self.context_id = context_id
        self.count = count
        self.created_at = time.monotonic()


def world_key(agent_key):
    """The key under which the world stores this Agent's handles (not the raw client key)."""
    import hashlib

    return "a" + hashlib.sha256(agent_key.encode()).hexdigest()[:16]


def call_in_world(session, context_id, source, opts, timeout_s=15.0):
    expression = f"({source})({json.dumps(opts)})"
    reply = session.call("Runtime.evaluate", {"expression": expression, "contextId": context_id,
                                              "returnByValue": True, "awaitPromise": False}, timeout_s=timeout_s)
    if reply.get("exceptionDetails"):
        details = reply["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text") or "script failed"
        raise BPError("internal_error", "The observation script failed in the page.",
                      context={"detail": text.splitlines()[0][:200]})
    return (reply.get("result") or {}).get("value")


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
    try:
        result = call_in_world(session, context_id, script("observe.js"), opts, timeout_s)
    except BPError as exc:
        if not context_gone(exc):
            raise
        # The document changed under us between finding the world and using it: once more.
        session.forget_world()
        context_id, loader = session.world(WORLD_NAME)
        obs.context_id, obs.loader = context_id, loader
        result = call_in_world(session, context_id, script("observe.js"), opts, timeout_s)
    elements = result["elements"]
    reasons = result["truncationReasons"]
    obs.count = len(elements)
    agent.observations[raw] = obs
    info = broker.browser.targets.info(raw) or {}
    profile = broker.browser.targets.profile(info.get("browserContextId"))
    out = {"title": result["title"], "url": result["url"], "page": result["page"], "elements": [],
           "truncated": False, "truncationReasons": [], "hints": result["hints"]}
    if profile:
        out["profileContextId"] = profile[0]
    for ref, element in enumerate(elements, start=1):
        out["elements"].append({"ref": ref, **element})
    size = len(json.dumps(out, ensure_ascii=False).encode())
    while size > MAX_BYTES and out["elements"]:  # meet the byte budget by cutting, with a reason
        dropped = out["elements"].pop()
        size -= len(json.dumps(dropped, ensure_ascii=False).encode()) + 1
        if "byte_limit" not in reasons:
            reasons.append("byte_limit")
    order = ["element_limit", "text_limit", "depth_limit", "byte_limit", "work_limit"]
    out["truncationReasons"] = [r for r in order if r in reasons]
    out["truncated"] = bool(out["truncationReasons"])
    obs.count = len(out["elements"])
    return out


def context_gone(exc):
    return "Cannot find context" in exc.message or "context was destroyed" in exc.message.lower()


def stale(reason, message="The ref is stale: the page changed since the snapshot."):
    return BPError("stale_ref", message, context={"field": "ref", "reason": reason})


def resolve(broker, agent, raw, session, ref, mode="act", **extra):
    """Validate ref against the Agent's latest observation of this tab; returns the resolver's
    answer (coordinates and state) or raises stale_ref / action_not_verified. Never rebinds."""
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
    try:
        answer = call_in_world(session, obs.context_id, script("resolve.js"),
                               {"key": world_key(agent.key), "obs": obs.id, "index": ref - 1, "mode": mode, **extra})
    except BPError as exc:
        if context_gone(exc):
            raise stale("document_replaced") from None
        raise
    if answer is None:
        raise stale("document_replaced")
    if answer.get("stale"):
        raise stale(answer["stale"])
    if answer.get("refuse"):
        context = {"field": "ref", "reason": answer["refuse"]}
        if answer.get("obstruction"):
            context["obstruction"] = {k: v for k, v in answer["obstruction"].items() if v}
        raise BPError("action_not_verified", f"The element cannot be acted on now: {answer['refuse']}.",
                      retryable=True, context=context)
    return answer
