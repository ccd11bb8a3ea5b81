"""Observations: what an Agent may act on in a tab now, and the refs that name it.

The walker (scripts/observe.js) runs in Browser Pilot's own isolated world, one
Runtime.evaluate per observation (field notes: ~3 ms at 100 elements, 145 ms at 10,000, against
3.5 s for the full AX tree), and keeps the element handles in that world. A ref is bound to:
Agent key, browser generation, tab, CDP session, main-frame loader, the isolated world's
execution context (one per document) and the exact node.

Stable numbers (a deliberate change from the 0.5 contract's 1..N per observation): within one
document of a tab, each Agent has a ref table (RefTable here, its handles in each world). A node
keeps its number in every later observation while the table holds it; a number is never given
to another node of that document; a new document starts again at 1. A ref from any earlier
observation of the document works while its node is attached and keeps its role and name.

`bp snapshot --diff` reports a new observation relative to the Agent's previous one of the same
tab: identity is the node itself (its number), so a clone that looks the same is removed +
added, never unchanged.
"""

import json
import os
import time
from collections.abc import Callable
from typing import Any

from bp import fastjson, settings
from bp.errors import BPError
from broker.observe import ax
from broker.observe.worlds import (WORLD_NAME, call_in_world, context_gone, helper, node_paths, send_in_world,
                                   once_more_if_replaced, script, world_key)
from broker.observe import frames
from broker.tabs import dialogs

MAX_LIMIT = 10_000
MAX_BYTES = 2 * 1024 * 1024
# How long an observation's refs stay usable, and how many live refs one ref table holds per
# document world (past it the oldest numbers the latest observation did not list expire, stale_ref
# `expired`): bp/settings.py observation_ttl_s and max_refs.

class World:
    """Browser Pilot's isolated world in one document, where an observation keeps its element
    handles. A tab's own document is the root; an out-of-process iframe's world has the world
    of the document that embeds it as `parent`, and the frame element's position there (`slot`)."""

    __slots__ = ("session", "context_id", "parent", "slot", "frame_id", "doc", "doc_parents", "gen")

    def __init__(self, session, context_id, parent=None, slot=None):
        self.session = session
        self.context_id = context_id
        self.parent = parent
        self.slot = slot
        # 'bp frame': the frame whose document this world is (not for the tab's own), the inline
        # document of the parent world that holds its frame element, and the walker's inline
        # documents (index -> index of the document holding its frame element).
        self.frame_id = None
        self.doc = 0
        self.doc_parents = None
        self.gen = None  # the document's mutation count at the walk (broker/observe/ax.py)


class RefTable:
    """One Agent's ref numbers in one document of a tab. The nodes themselves stay in each
    world's table (scripts/observe.js); here: the next number, and which world holds a number
    when it is not the tab's own (an out-of-process or cross-origin frame's)."""

    __slots__ = ("id", "generation", "session", "loader", "context_id", "next", "owner", "worlds", "ax")

    def __init__(self, generation, session, loader, context_id):
        self.id = "refs-" + os.urandom(8).hex()
        self.generation, self.session, self.loader, self.context_id = generation, session, loader, context_id
        self.next = 1  # never goes down: a number is never given twice in the document
        self.owner = {}  # ref -> world key (session, context id), for refs outside the tab's own world
        self.worlds = {}  # world key -> the World of its latest walk (its frame slot is current)
        self.ax = {}  # (session, context, ref) -> (mutation count, the engine's facts): broker/observe/ax.py

    def of(self, generation, session, loader, context_id):
        return (self.generation, self.session, self.loader, self.context_id) == (generation, session, loader,
                                                                                context_id)

    def held(self, ref, world):
        if world.session is not self.session or world.context_id != self.context_id:
            key = (world.session, world.context_id)
            if key not in self.worlds and len(self.worlds) >= 256:  # frames come and go: keep the live ones
                self.worlds = {k: w for k, w in self.worlds.items() if k[0].alive}
            self.worlds[key] = world
            self.owner[ref] = key
            if len(self.owner) > 4 * settings.current().max_refs:  # the oldest go (they fail as expired in the top world)
                for old in list(self.owner)[:settings.current().max_refs]:
                    del self.owner[old]

    def locate(self, ref):
        key = self.owner.get(ref)
        world = self.worlds.get(key) if key else None
        return world or World(self.session, self.context_id)


class Observation:
    __slots__ = ("id", "generation", "raw", "session", "loader", "context_id", "count", "created_at", "listed",
                 "table", "evicted", "frame", "full")

    def __init__(self, generation, raw, session, loader, context_id, count, table=None):
        self.id = "obs-" + os.urandom(8).hex()
        self.generation = generation
        self.raw = raw
        self.session = session
        self.loader = loader
        self.context_id = context_id
        self.count = count
        self.created_at = time.monotonic()
        self.listed = []  # the refs this observation returned, in order
        self.table: RefTable | None = table  # None only in tests of --diff (no refs are resolved)
        self.evicted = False
        self.frame: str | None = None  # the Agent's selected frame (id) it was made in; None: the whole tab
        # For a filtered observation (--grep/--role): the Agent's last full one, which --diff
        # compares with (a diff against a filtered list would call everything else "added").
        self.full: Observation | None = None

    def expired(self, now=None):
        return self.evicted or (time.monotonic() if now is None else now) - self.created_at > settings.current().observation_ttl_s

    def evict(self):
        """Out of the broker-wide store (broker/agents.py): its refs now fail as expired."""
        self.evicted = True
        self.listed = []


def _numbered(table: RefTable, opts: dict[str, Any], walk: Callable[[], Any]) -> dict[str, Any]:
    """One world's walk, handing out numbers from the table's next one. A walk whose answer is
    lost may still have handed some out in its world: those are skipped, never given twice."""
    opts["next"] = table.next
    try:
        result = walk()
    except BaseException:
        table.next += opts["limit"]
        raise
    table.next = max(table.next, int((result or {}).get("next") or 0))
    return result


def _walk(session, world_context, opts, timeout_s, table):
    """Run the walker in a session's isolated world; once more if the document changed under us."""
    context = [world_context]

    def walk():
        world = context[0]

        def walker(later=False, **flags):
            return send_in_world(session, world, script("observe.js"), dict(opts, **flags), timeout_s, as_text=True,
                                 later=later)

        listing = _list_later(session, world)
        if listing is None:
            _mark_listeners(session, world)
            return world, _numbered(table, opts, lambda: walker().value())
        # The walker goes right behind the listing, tentatively: one round trip for both, unless
        # the listing marks nodes the walker has not seen marked (a document's first look, a new
        # listener-only control), and then the page is walked once more with them.
        opts["next"] = table.next
        ahead = walker(later=True, tentative=True)
        try:
            marked = _mark_listeners(session, world, listing)
        except BaseException:
            ahead.drop()
            raise
        result = _numbered(table, opts, ahead.value)
        if not marked:
            return world, result
        return world, _numbered(table, opts, lambda: walker(rollback=True).value())

    def forget():
        session.forget_world()
        context[0] = session.world(WORLD_NAME)[0]

    return once_more_if_replaced(walk, forget)


def _listener_memory(session, context_id):
    """(document, known node ids, kept objects) of the listener listing, per document (= per
    world context and loader: context ids are per renderer)."""
    document = (context_id, getattr(session, "loader", None))
    known = session.listener_nodes
    if known is None or known[0] != document:
        known = session.listener_nodes = (document, set(), {})
    return known


def _list_later(session, context_id):
    from broker.observe import listeners

    return listeners.list_later(session, _listener_memory(session, context_id)[2])


def _mark_listeners(session, context_id, listing=None):
    """Tell the walker which nodes only a JavaScript pointer listener makes clickable
    (broker/observe/listeners.py); remembered per document. How many it marked."""
    from broker.observe import listeners

    _, known, held = _listener_memory(session, context_id)
    return listeners.mark(session, context_id, known, held, listing)


def _frame_slots(world, key):
    """slot -> FrameSession for the out-of-process iframes the walker met in this world: asks
    Chrome which element owns each attached child frame and where the walker stored it."""
    children, owners = [], []
    for child in world.session.live_children():
        try:
            owner = world.session.call("DOM.getFrameOwner", {"frameId": child.frame_id}, timeout_s=5.0)
        except BPError:
            continue  # the frame went away meanwhile: it is simply not observed
        children.append(child)
        owners.append(owner["backendNodeId"])
    if not children:
        return {}
    try:
        paths = node_paths(world.session, owners)
        found = call_in_world(world.session, world.context_id, helper("slotsOf"), {"key": key, "paths": paths}, 5.0)
    except BPError:
        return {}
    return {slot: child for slot, child in zip(found or [], children) if isinstance(slot, int) and slot >= 0}


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
    return session.frame_world(node["frameId"], WORLD_NAME), node["frameId"]


def _expand(world, result, opts, timeout_s, depth, acc):
    """Append the world's elements to acc (splicing in out-of-process frames where the walker
    left a placeholder) and return {position in the walker's output: global ref} for its hints."""
    positions = {}
    slots = None
    table = acc["table"]
    acc["changed"].update((ref, fields) for ref, fields in result.get("changed") or ())
    for position, item in enumerate(result["elements"]):
        if "frame" not in item:
            acc["rows"].append((item, world))
            table.held(item["ref"], world)
            positions[position + 1] = len(acc["rows"])
            continue
        if slots is None:
            slots = _frame_slots(world, opts["key"])
        child = slots.get(item["frame"])
        try:
            if depth >= frames.MAX_FRAME_DEPTH:
                raise BPError("result_too_large", "frames nested too deeply")
            if child is None:
                # Cross-origin but same-site (a.example.com in b.example.com): same renderer,
                # so the same session, but a world of its own in that frame.
                child = world.session
                context_id, frame_id = _same_process_world(world, opts["key"], item["frame"])
                child_result = _numbered(table, opts, lambda child=child, context_id=context_id: call_in_world(
                    child, context_id, script("observe.js"), opts, timeout_s, as_text=True))
            else:
                frame_id = child.frame_id
                context_id, _ = child.world(WORLD_NAME)
                context_id, child_result = _walk(child, context_id, opts, timeout_s, table)
        except BPError:
            acc["omitted"] += 1
            continue
        acc["reasons"].update(child_result["truncationReasons"])
        child_world = World(child, context_id, world, item["frame"])
        child_world.frame_id, child_world.doc = frame_id, item.get("d", 0)
        child_world.doc_parents = child_result.get("docParents")
        child_world.gen = child_result.get("gen")
        acc["disabledCount"] += child_result.get("disabledCount") or 0
        acc["changedSkipped"] += child_result.get("changedSkipped") or 0
        acc["leftOut"].extend(child_result.get("leftOut") or ())
        acc["leftOutCount"] += child_result.get("leftOutCount") or 0
        acc["disabled"].extend(child_result.get("disabled") or ())
        acc["hints"].append((child_result["hints"], _expand(child_world, child_result, opts, timeout_s, depth + 1, acc)))
    return positions


def _doc_frames(world, key):
    """{inline document index: its frame id} for the world's walk (frame elements described by
    Chrome, as _same_process_world does); a frame gone meanwhile is left out."""
    found = {}
    for index in range(1, len(world.doc_parents or ())):
        try:
            reply = world.session.call("Runtime.evaluate", {
                "expression": f"globalThis.__browserPilot[{json.dumps(key)}].docs[{index}]",
                "contextId": world.context_id, "objectGroup": "browser-pilot"}, timeout_s=5.0)
            object_id = (reply.get("result") or {}).get("objectId")
            if object_id:
                node = world.session.call("DOM.describeNode", {"objectId": object_id}, timeout_s=5.0)["node"]
                found[index] = node.get("frameId")
        except BPError:
            continue
    world.session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": "browser-pilot"})
    return found


def _keep_frame(acc, frame_id, key):
    """Keep only the rows inside the frame `frame_id` (its document and every frame below it),
    renumbering the hints' refs to match."""
    frames_of = {}

    def in_doc(world, doc):
        if doc and world.doc_parents:
            if id(world) not in frames_of:
                frames_of[id(world)] = _doc_frames(world, key)
            ids = frames_of[id(world)]
            while doc > 0:
                if ids.get(doc) == frame_id:
                    return True
                doc = world.doc_parents[doc] if doc < len(world.doc_parents) else 0
        return False

    def inside(world, doc):
        while world is not None:
            if world.frame_id == frame_id or in_doc(world, doc):
                return True
            world, doc = world.parent, world.doc
        return False

    kept, renumber = [], {}
    for old, row in enumerate(acc["rows"], start=1):
        if inside(row[1], row[0].get("d", 0)):
            kept.append(row)
            renumber[old] = len(kept)
    acc["rows"] = kept
    for _, positions in acc["hints"]:
        for position, ref in list(positions.items()):
            if ref in renumber:
                positions[position] = renumber[ref]
            else:
                del positions[position]


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


REASON_ORDER = ["element_limit", "text_limit", "depth_limit", "byte_limit", "work_limit"]


def _size(value):
    return len(json.dumps(value, ensure_ascii=False).encode())


def ref_table(broker, agent, raw, session, loader, context_id):
    """The Agent's ref table for the tab's current document: a new document gets a new one."""
    held = agent.tab(raw)
    table = held.ref_table
    if table is None or not table.of(broker.browser.generation, session, loader, context_id):
        table = held.ref_table = RefTable(broker.browser.generation, session, loader, context_id)
    return table


def _walk_top(broker, agent, raw, session, opts, timeout_s):
    """(table, result) of the walker in the tab's own world, with the ref table of the document
    it actually walked (a new one when the document changed meanwhile)."""
    context_id, loader = session.world(WORLD_NAME)
    table = ref_table(broker, agent, raw, session, loader, context_id)
    opts["table"] = table.id
    walked, result = _walk(session, context_id, opts, timeout_s, table)
    if walked != context_id:  # another document by the time the walker ran: number it afresh
        table = ref_table(broker, agent, raw, session, session.loader, walked)
        opts["table"] = table.id
        walked, result = _walk(session, walked, opts, timeout_s, table)
    return table, result


def register(broker, agent, raw, session, timeout_s=15.0):
    """Number every element a snapshot of the tab's own document would list, without making an
    observation (bp find reports the numbers); returns the ref table."""
    opts = {"limit": MAX_LIMIT, "key": world_key(agent.key), "bound": settings.current().max_refs, "register": True}
    table, _ = _walk_top(broker, agent, raw, session, opts, timeout_s)
    return table


def observe(broker, agent, raw, session, limit, timeout_s=15.0, diff=False, grep=None, role=None, disabled=False,
            lead=None):
    """A fresh observation of the tab, stored as the Agent's latest for it. With diff, only what
    changed since the Agent's previous observation of the tab (see _diff). With grep (and role),
    only the matching elements, the whole page searched (see _grep). With `lead` (a dict: an
    action's answer), elements added or changed since that observation come first when not all
    fit the limit (_lead), and lead["leftOut"] says how many changed ones did not fit."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BPError("invalid_argument", f"--limit must be 1-{MAX_LIMIT}.", context={"field": "limit"})
    if session.dialog_open():
        raise BPError("action_not_verified", "A JavaScript dialog is open in this tab and blocks the page.",
                      retryable=True, context=session.dialog_context())
    if grep is not None and not grep.strip():
        raise BPError("invalid_argument", "--grep needs a text to look for.", context={"field": "grep"})
    searching = grep is not None or role is not None
    last = agent.observation(raw)
    last_full = (last.full or last) if last is not None else None
    prev = last_full if diff else None
    frame = frames.selected_frame(agent, raw, session)  # 'bp frame N': only that frame is observed
    # With --grep/--role, or in a frame, the whole tab is walked (up to the hard cap) and then cut
    # to what is wanted: the walker's element limit must not be spent on the rest of the page.
    walk_limit = MAX_LIMIT if searching or frame is not None else limit
    opts = {"limit": walk_limit, "key": world_key(agent.key), "bound": settings.current().max_refs, "diff": bool(diff),
            "disabled": bool(disabled), "lead": lead is not None and not searching and frame is None}
    ax.ask_since(opts, agent.tab(raw).ref_table, session)
    table, result = _walk_top(broker, agent, raw, session, opts, timeout_s)
    obs = Observation(broker.browser.generation, raw, session, table.loader, table.context_id, 0, table)
    obs.frame = frame.frame_id if frame is not None else None
    if searching:
        obs.full = last_full
    top = World(session, table.context_id)
    top.doc_parents = result.get("docParents")
    top.gen = result.get("gen")
    acc = {"rows": [], "omitted": 0, "reasons": set(result["truncationReasons"]), "hints": [], "table": table,
           "changed": {}, "disabledCount": result.get("disabledCount") or 0, "disabled": list(result.get("disabled") or ()),
           "changedSkipped": result.get("changedSkipped") or 0, "leftOut": list(result.get("leftOut") or ()),
           "leftOutCount": result.get("leftOutCount") or 0}
    acc["hints"].insert(0, (result["hints"], _expand(top, result, opts, timeout_s, 0, acc)))
    if frame is not None:
        _keep_frame(acc, frame.frame_id, opts["key"])
    rows = acc["rows"]
    reasons = acc["reasons"]
    hints = _merge_hints(acc["hints"], len(rows))
    for hint in hints:  # hints name rows; refs are the rows' numbers (those cut below are dropped later)
        if "refs" in hint:
            hint["refs"] = [rows[r - 1][0]["ref"] for r in hint["refs"]]
    if opts["lead"] and lead is not None:  # opts["lead"] implies a lead
        rows, lead["leftOut"] = _lead(rows, limit)
        lead["leftOut"] += acc["changedSkipped"]
    if len(rows) > (walk_limit if searching else limit):
        del rows[walk_limit if searching else limit:]
        reasons.add("element_limit")
    fused_since = {}
    for element, _ in rows:
        element.pop("d", None)  # the walker's inline-document tag: not part of the element
        element.pop("c", None)  # and its "changed since the last observation" mark
        stamp = element.pop("x", None)  # the latest change that can have touched its facts (ax.py)
        if stamp is not None:
            fused_since[id(element)] = stamp
    if acc["omitted"]:
        hints.append({"code": "frames_omitted", "source": "observation", "confidence": "strong",
                      "recommendedAction": "inspect_visually", "count": acc["omitted"]})
    hints = dialogs.hints(broker, agent) + hints  # dialogs of the Agent's other tabs left pending too long: first
    info = broker.browser.targets.info(raw) or {}
    profile = broker.browser.targets.profile(info.get("browserContextId"))
    out = {"title": result["title"], "url": result["url"], "page": result["page"], "elements": [],
           "truncated": False, "truncationReasons": [], "hints": hints[:16]}
    if profile:
        out["profileContextId"] = profile[0]
    # Role, name and states as Chromium's accessibility engine gives them (broker/observe/ax.py).
    fused = set()
    ax.annotate(table, rows, opts["key"], fused, fused_since)
    matches = None
    if searching:
        rows, matches = _grep(rows, grep, role, limit, reasons)
        ax.annotate(table, rows, opts["key"], fused, fused_since)
    out["elements"] = [element for element, _ in rows]
    for element in out["elements"]:
        element.pop("k", None)  # the walker's "keep my role" mark, read by ax.fuse
    if acc["disabledCount"]:
        # Disabled controls are not actionable refs, but "no Save button" and "Save is disabled"
        # must read differently: how many, and with --disabled which.
        out["disabledCount"] = acc["disabledCount"]
        if disabled:
            out["disabledElements"] = acc["disabled"][:MAX_LIMIT]
    if acc["leftOutCount"]:
        # Controls the page has that a person cannot operate now, with the reason (issue 26 item 2):
        # "there is no Save button" and "Save is covered by a banner" read differently.
        out["leftOutCount"] = acc["leftOutCount"]
        out["leftOut"] = acc["leftOut"][:limit]  # as many as the elements asked for (--limit)
    size = 0 if fastjson.size_within(out, MAX_BYTES) else _size(out)
    while size > MAX_BYTES and out["elements"]:  # meet the byte budget by cutting, with a reason
        dropped = out["elements"].pop()
        size -= _size(dropped) + 1
        reasons.add("byte_limit")
    count = len(out["elements"])
    base = _diff_base(obs, prev) if diff else None
    if base == "previous":
        count, body = _diff(out, prev, rows, count, reasons, acc["changed"])
        del out["elements"]
        out["diff"] = body
    elif diff:
        out["diff"] = {"base": base, "count": count}
        if prev is not None and prev.table is not None and prev.table is not table and prev.table.next > 1:
            out["diff"]["invalidated"] = {"from": 1, "to": prev.table.next - 1}  # the old document's refs
    if matches is not None:
        out["matches"] = matches
    obs.listed = [element["ref"] for element, _ in rows[:count]]
    obs.count = count
    listed = set(obs.listed)
    for hint in out["hints"]:  # refs this observation returned only
        if "refs" in hint:
            hint["refs"] = [r for r in hint["refs"] if r in listed]
    out["truncationReasons"] = [r for r in REASON_ORDER if r in reasons]
    out["truncated"] = bool(out["truncationReasons"])
    broker.agents.store_observation(agent, raw, obs)
    return out


def _lead(rows, limit):
    """(rows, left out): when not all rows fit the limit, those the walker marked changed since the
    Agent's last observation (the menu a click opened, the button typing re-enabled) first, then
    the rest, each in page order; and how many changed rows do not fit. When all fit, page order."""
    if len(rows) <= limit:
        return rows, 0
    changed = [row for row in rows if row[0].get("c")]
    if not changed:
        return rows, 0
    rest = [row for row in rows if not row[0].get("c")]
    return changed + rest, max(0, len(changed) - limit)


def _grep(rows, text, role, limit, reasons):
    """(rows, total): the rows whose name, value or context contains text (any case) and whose
    role is role, at most limit of them (element_limit past it), and how many matched."""
    needle = text.casefold() if text else None
    found = []
    for element, world in rows:
        if role is not None and element["role"] != role:
            continue
        if needle is not None and not any(needle in str(element.get(field) or "").casefold()
                                          for field in ("name", "value", "context")):
            continue
        found.append((element, world))
    if len(found) > limit:
        reasons.add("element_limit")
    return found[:limit], len(found)


def _diff_base(obs, prev):
    """What a --diff observation is relative to: "previous" (a diff), else why it is complete:
    "none" (no previous observation of this tab, or one of another connection or CDP session),
    "expired" (the previous one expired or was evicted), "navigation" (another document)."""
    if prev is None or prev.generation != obs.generation or prev.session is not obs.session:
        return "none"
    if prev.expired():
        return "expired"
    if prev.loader != obs.loader or prev.context_id != obs.context_id:
        return "navigation"
    return "previous"


def _diff_body(prev, rows, count, changed_fields):
    """Numbers are stable, so an element is the same one when its ref is: added (not in the
    previous observation), changed (in it, some field changed), removed (in it, not now)."""
    before = set(prev.listed)
    added, changed, now = [], [], set()
    for element, _ in rows[:count]:
        ref = element["ref"]
        now.add(ref)
        if ref not in before:
            added.append(element)
            continue
        fields = changed_fields.get(ref)
        if fields:
            entry = {"ref": ref, "was": ref, **{k: v for k, v in element.items() if k != "ref"}}
            # A field that went away is reported as its empty value, not left out.
            if "value" in fields and "value" not in entry:
                entry["value"] = ""
            if "checked" in fields and "checked" not in entry:
                entry["checked"] = False
            entry["fields"] = fields
            changed.append(entry)
    kept = len(now & before)
    return {"base": "previous", "count": count, "added": added, "changed": changed,
            "removed": sorted(before - now), "unchanged": kept - len(changed)}


def _diff(out, prev, rows, count, reasons, changed_fields):
    """(count, diff) of this observation's first `count` elements against the previous
    observation of the tab. No ref is superseded (numbers are stable), so there is no refMap:
    an element kept its number. A diff that would still pass the byte budget is cut like a full
    observation: fewer refs, byte_limit."""
    # What the reply adds around the diff: the header, the "diff" key, a truncation reason.
    budget = MAX_BYTES - _size({k: v for k, v in out.items() if k != "elements"}) - 64
    body = _diff_body(prev, rows, count, changed_fields)
    if fastjson.size_within(body, budget):
        return count, body
    reasons.add("byte_limit")
    low, high = 0, count  # the largest count whose diff fits
    while low < high:
        mid = (low + high + 1) // 2
        if _size(_diff_body(prev, rows, mid, changed_fields)) <= budget:
            low = mid
        else:
            high = mid - 1
    return low, _diff_body(prev, rows, low, changed_fields)


def stale(reason, message="The ref is stale: the page changed since the snapshot."):
    return BPError("stale_ref", message, context={"field": "ref", "reason": reason})


def check_ref(broker, agent, raw, session, ref):
    """(RefTable, World, ref): where the Agent's ref table of this tab's document holds the ref,
    or stale_ref. Any number the table gave out counts, whether or not the latest observation
    listed it; the node itself is checked in its world (_in_world)."""
    held = agent.known(raw)
    obs = held.observation if held is not None else None
    table = (held.ref_table if held is not None else None) or (obs.table if obs is not None else None)
    if table is None:
        raise stale("no_observation", "There is no snapshot of this tab for this Agent; run 'bp snapshot'.")
    if table.generation != broker.browser.generation:
        raise stale("browser_reconnected")
    if obs is not None and obs.table is table and obs.expired():
        raise stale("expired")
    if not isinstance(ref, int) or not 1 <= ref < table.next:
        last = f"1-{table.next - 1}" if table.next > 1 else "none yet"
        raise BPError("stale_ref", f"Ref {ref} was never given on this page ({last}).",
                      context={"field": "ref", "reason": "unknown_ref"})
    if table.session is not session or not session.alive:
        raise stale("session_replaced")
    if session.loader != table.loader:
        raise stale("navigation")
    if obs is not None and obs.table is table and ((held.frame if held is not None else None) or {}).get("frameId") != obs.frame:
        raise stale("frame_changed", "The selected frame changed since the snapshot ('bp frame'); run 'bp snapshot'.")
    world = table.locate(ref)
    for w in _chain(world):
        if not w.session.alive:
            raise stale("frame_detached")
    return table, world, ref


def _chain(world):
    while world is not None:
        yield world
        world = world.parent


def _in_world(world, table, opts, fn=None):
    return _answered(world, lambda: call_in_world(world.session, world.context_id, script("resolve.js"),
                                                  {"table": table.id, **opts}, fn=fn))


def _answered(world, run):
    """The resolver's answer run() gets from `world`, its staleness as stale_ref."""
    try:
        answer = run()
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


def refusal(answer, field="ref", message="The element cannot be acted on now"):
    """The in-page hit test's refusal (scripts/lib.js: covered, outside the viewport, …) as the
    Agent's retryable action_not_verified, with what covers the element when it is covered."""
    context = {"field": field, "reason": answer["refuse"]}
    if answer.get("obstruction"):
        context["obstruction"] = {k: v for k, v in answer["obstruction"].items() if v}
    hint = SETTLED_REFUSALS.get(answer["refuse"])
    # A field the page made read-only or disabled stays so when asked again: not retryable, and
    # what to do instead. The rest (covered, out of view, no layout yet) can pass in a moment.
    return BPError("action_not_verified", f"{message}: {answer['refuse']}.", retryable=hint is None, context=context,
                   hint=hint)


SETTLED_REFUSALS = {
    "readonly": "The field is read-only: the page does not take typing there. Look for an Edit button or another "
                "field in a fresh 'bp snapshot'.",
    "not_editable": "The element does not take text: type into a textbox, searchbox or combobox of 'bp snapshot'.",
    "disabled": "The control is disabled: do what enables it first (fill the required fields), then snapshot again.",
}


def resolve(broker, agent, raw, session, ref, mode="act", **extra):
    """Validate ref against the Agent's ref table of this tab's document; returns the resolver's
    answer (top-level viewport coordinates and state) or raises stale_ref / action_not_verified.
    Never rebinds. Inside out-of-process iframes the hit points are mapped up through every
    embedding document, each of which must show the frame there."""
    table, world, ref = check_ref(broker, agent, raw, session, ref)
    key = world_key(agent.key)
    opts = {"key": key, "ref": ref, "mode": mode, **extra}
    nested = world.parent is not None and mode == "act"
    focus = opts.pop("focus", False) if nested else False
    answer = _in_world(world, table, dict(opts, allPoints=True, nested=True) if nested else opts)
    if answer.get("refuse"):
        raise refusal(answer)
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
        mapped = _in_world(child.parent, table, {"key": key, "mode": "frame", "slot": child.slot, "points": points,
                                               "nested": child.parent.parent is not None})
        if mapped.get("refuse"):
            raise refusal(mapped)
        points, child = mapped["points"], child.parent
    if target is None:
        target = (session, points)
    first = next(i for i, p in enumerate(points) if p)
    if focus:
        # Focus only once the element is known to be reachable through every frame above it.
        focused = _in_world(world, table, dict(opts, focus=True, nested=True))
        if focused.get("refuse"):
            raise refusal(focused)
        answer.update(editable=focused.get("editable"), state=focused.get("state"))
    answer["x"], answer["y"] = points[first]
    answer["input"] = (target[0], *target[1][first])
    return answer


class StateLater:
    """resolve(mode="state") sent ahead (resolve_later): answer() waits for it, drop() forgets it."""

    def __init__(self, world, sent):
        self.world, self.sent = world, sent

    def answer(self):
        answer = _answered(self.world, self.sent.value)
        if answer.get("refuse"):
            raise refusal(answer)
        return answer

    def drop(self):
        self.sent.drop()


def resolve_later(broker, agent, raw, session, ref, **extra):
    """resolve(..., mode="state", **extra) sent now, its answer read later (StateLater): the round
    trip overlaps the caller's next call. The staleness checks of the ref run now."""
    table, world, ref = check_ref(broker, agent, raw, session, ref)
    opts = {"table": table.id, "key": world_key(agent.key), "ref": ref, "mode": "state", "ahead": True, **extra}
    return StateLater(world, send_in_world(world.session, world.context_id, script("resolve.js"), opts))


def on_ref(broker, agent, raw, session, ref, source, args=None, timeout_s=15.0):
    """Run the JavaScript function `source` as fn(element, args) against the ref's element in
    Browser Pilot's isolated world, after the same staleness checks as resolve(); returns its
    (JSON) value."""
    table, world, ref = check_ref(broker, agent, raw, session, ref)
    answer = _in_world(world, table, {"key": world_key(agent.key), "ref": ref, "mode": "call", "args": args or {}},
                       fn=source)
    return answer.get("value")
