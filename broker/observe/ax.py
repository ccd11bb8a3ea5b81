"""Chromium's accessibility engine names what the walker lists.

The walker (scripts/observe.js) decides *what* an observation offers: what shows, where the
pointer lands, what only a JavaScript listener makes clickable, editors, hidden inputs operated
through a label or track. What each offered element *is* — its role, name, description and
states — comes from Chromium's accessibility engine, the same answer a screen reader gets: an
icon button named by its SVG title, a link not named by the text of an SVG <style>, a
`role=combobox` with the value it shows, aria-expanded/pressed/required/invalid as the engine
reads them.

Measured before choosing (2 cores, loaded; tests/bench/bench_big_snapshot.py has the product
figures): `Accessibility.getFullAXTree` takes ~23 ms on a page of 50 controls, ~410 ms at 1,000
and ~21 s at 10,000. `getPartialAXTree` of one node costs ~0.1 ms on a small page but ~1.5-2.5 ms
on a page of 10,000 controls (the engine brings the whole document's tree up to date for each
call). So the engine is asked about the listed elements only, at most AX_MAX of them per
observation, all sent at once, and its answers are kept per element until a change of the
document can have touched them: the walker logs which node each change touched and says, per
listed element, the latest change of itself, what it holds, its ancestors' attributes, its
labels and what its aria-labelledby/-describedby name (an id, a label's `for` or a style
sheet changing asks again about all). An unchanged page, or a click that only rewrites a status
line, costs no accessibility call at all (issue 37: 26 calls, ~40 ms, on a 26-control page
before). Values and
the checked state of native inputs change without a mutation: those stay the walker's, read
afresh in every observation. Past AX_MAX elements (a `--limit 10000` observation) the rest keep
the walker's own role and name.
"""

import json

from bp import protocol
from bp.errors import BPError

AX_MAX = 200  # elements per observation the engine names (see above)
MAX_NAME = 4096
MAX_PLACEHOLDER = 80  # a name that is only a placeholder (a 400-character hint) is cut here
MAX_DESCRIPTION = 200
ROLES = set(protocol.ELEMENT_ROLES)
# The engine's names for controls our vocabulary calls otherwise.
ROLE_MAP = {"DisclosureTriangle": "button", "ColorWell": "button", "Date": "textbox", "DateTime": "textbox",
            "InputTime": "textbox", "PopUpButton": "combobox", "ToggleButton": "button"}
GROUP = "browser-pilot-ax"

ELEMENTS_OF = ("function (opts) { const t = (globalThis.__browserPilot || {})[opts.key];"
               " return opts.refs.map((r) => { const h = t && t.byRef.get(r); return h ? h.el : null; }); }")


def _clean(text):
    return " ".join(str(text or "").split())


# Glyphs a stylesheet draws around a name (a submenu's "❯", a dropdown's "▾" from ::after) and
# icon-font characters (Unicode's private use areas): the engine reads them into the name; an
# Agent matching "Share" gains nothing from "Share ❯". Dropped at a name's edges, never alone.
DECORATIONS = "❯❮›‹»«▸▹▾▿▴▵►▶◀◂▼▲◄"


def _private_use(char):
    code = ord(char)
    return 0xE000 <= code <= 0xF8FF or code >= 0xF0000


def readable_name(name):
    """The engine's name without an icon font's private-use characters, and without decoration
    glyphs at its edges when words remain (a name that is only a glyph keeps it)."""
    kept = "".join(c for c in name if not _private_use(c))
    kept = _clean(kept.strip(DECORATIONS + " "))
    return kept or name


def _props(node):
    return {p.get("name"): (p.get("value") or {}).get("value") for p in node.get("properties") or ()}


def facts_of(node):
    """What an observation takes from one accessibility node: {role?, name?, ...}; {} when the
    engine ignores the node (the walker's facts stay)."""
    if not node or node.get("ignored"):
        return {}
    out = {}
    role = (node.get("role") or {}).get("value")
    if role is not None:  # no role: nothing to map
        role = ROLE_MAP.get(role, role)
    if role in ROLES:
        out["role"] = role
    name_info = node.get("name") or {}
    name = readable_name(_clean(name_info.get("value")))
    if name:
        sources = [s for s in name_info.get("sources") or () if "value" in s and not s.get("superseded")]
        if sources and sources[0].get("attribute") == "placeholder" and len(name) > MAX_PLACEHOLDER:
            name = name[:MAX_PLACEHOLDER - 1].rstrip() + "\u2026"
        out["name"] = name[:MAX_NAME]
    description = _clean((node.get("description") or {}).get("value"))
    if description and description != name:
        out["description"] = description[:MAX_DESCRIPTION]
    value = (node.get("value") or {}).get("value")
    if value not in (None, ""):
        out["value"] = str(value)
    props = _props(node)
    if props.get("checked") == "mixed":
        out["checked"] = "mixed"
    elif props.get("checked") == "true":
        out["checked"] = True
    if isinstance(props.get("expanded"), bool):
        out["expanded"] = props["expanded"]
    for state in ("selected", "required", "readonly"):
        if props.get(state) is True:
            out[state] = True
    if props.get("pressed") in ("true", "mixed"):
        out["pressed"] = True if props["pressed"] == "true" else "mixed"
    if props.get("invalid") not in (None, "false"):
        out["invalid"] = True
    if isinstance(props.get("level"), int):
        out["level"] = props["level"]
    # (A number field without bounds reads min 0 and max 0 from the engine: no range at all.)
    if not (props.get("valuemin") == props.get("valuemax") == 0):
        for key, field in (("valuemin", "min"), ("valuemax", "max")):
            if isinstance(props.get(key), (int, float)):
                out[field] = props[key]
    # A menu entry that opens a submenu says so (not every combobox: its popup is its nature).
    popup = "menu" if props.get("hasPopup") == "true" else props.get("hasPopup")
    if out.get("role") == "menuitem" and popup in protocol.HASPOPUP:
        out["haspopup"] = popup
    if props.get("multiselectable") is True:
        out["multiple"] = True
    return out


# Roles whose value the engine reads better than the walker when the walker has none: a custom
# combobox shows its choice as text; an ARIA slider its aria-valuetext.
VALUE_FROM_ENGINE = {"combobox", "slider", "spinbutton"}


def fuse(element, facts):
    """Apply the engine's facts to a walker element (in place). The walker keeps: the ref, live
    values and native checked state, and role and name where the engine has none (listener-only
    controls, focusable containers the engine calls generic)."""
    if not facts:
        return element
    # The field of an ARIA 1.1 combobox (a role=combobox box around it, "k" from the walker) is the
    # combobox: the engine calls it a text field, the walker knows the box it types into.
    if "role" in facts and not (element.get("k") and facts["role"] in ("textbox", "searchbox")):
        element["role"] = facts["role"]
    if "name" in facts:
        element["name"] = facts["name"]
    if "value" in facts and "value" not in element and element["role"] in VALUE_FROM_ENGINE:
        element["value"] = facts["value"]
    if facts.get("checked") == "mixed":  # (true/false: the walker's, read live)
        element["checked"] = "mixed"
    for field in ("description", "expanded", "haspopup", "selected", "pressed", "required", "readonly", "invalid",
                  "level", "min", "max", "multiple"):
        if field in facts:
            element[field] = facts[field]
    return element


def ask_since(opts, table, session):
    """Ask the walker (opts.axSince) which of the listed elements a change since the oldest facts
    cached for the tab's own document may have touched: the rest keep theirs (annotate)."""
    if table is None:
        return
    top = (id(session), table.context_id)
    gens = [entry[0] for k, entry in table.ax.items() if (k[0], k[1]) == top and entry[0] is not None]
    if gens:
        opts["axSince"] = min(gens)
        opts["axCount"] = AX_MAX


def _still_true(entry, gen, since):
    """Whether cached facts (gen, facts) still hold: no change since they were asked (gen), or
    none that can have touched the element (`since`: the walker's x, for the tab's own document)."""
    if entry is None or gen is None:
        return False
    return entry[0] == gen or (since is not None and entry[0] is not None and entry[0] >= since)


def annotate(table, rows, key, done, stamps=None, timeout_s=5.0):
    """Fuse the engine's facts into the first AX_MAX (element, world) rows not yet fused (ids
    of the fused elements are kept in `done`). `stamps`: id(element) -> the walker's x, the
    latest change that can have touched it (ask_since)."""
    stamps = stamps or {}
    by_world = {}
    for element, world in rows[:AX_MAX]:
        if id(element) in done:
            continue
        done.add(id(element))
        by_world.setdefault((world.session, world.context_id), (world, []))[1].append(element)
    cache = table.ax
    for (session, context_id), (world, elements) in by_world.items():
        gen = getattr(world, "gen", None)
        wanted = []
        top = context_id == table.context_id
        for element in elements:
            entry_key = (id(session), context_id, element["ref"])
            entry = cache.get(entry_key)
            if _still_true(entry, gen, stamps.get(id(element)) if top else None):
                if entry[0] != gen:
                    cache[entry_key] = (gen, *entry[1:])  # still true as of this walk
                fuse(element, entry[1])
            else:
                wanted.append(element)
        if not wanted:
            continue
        nodes = []  # the engine's node of each wanted ref, when an earlier answer named it
        for element in wanted:
            entry = cache.get((id(session), context_id, element["ref"]))
            nodes.append(entry[2] if entry is not None else None)
        try:
            found = _query(session, context_id, key, [e["ref"] for e in wanted], timeout_s, nodes)
        except BPError:
            continue  # the walker's facts stand (a document going away, a renderer busy)
        if len(cache) > 4 * AX_MAX + len(found):
            cache.clear()
        for element, (facts, node) in zip(wanted, found):
            if facts is None:
                continue
            if gen is not None:
                cache[(id(session), context_id, element["ref"])] = (gen, facts, node)
            fuse(element, facts)


class _Answered:
    """A call already answered, read like a sent one (a frame's session sends one at a time)."""

    def __init__(self, reply):
        self.reply = reply

    def result(self, timeout_s=None):
        return self.reply


def _send(session, method, params):
    if hasattr(session, "call_later"):
        return session.call_later(method, params)
    return _Answered(session.call(method, params, timeout_s=5.0))


def _ask(session, params):
    """The engine's node for one element, sent now (read with _answer)."""
    try:
        return _send(session, "Accessibility.getPartialAXTree", dict(params, fetchRelatives=False))
    except BPError:
        return None


def _answer(later, timeout_s, node=None):
    """(facts, its backend node id) of a sent _ask, or None; with `node`, None unless the answer is
    about that node (it can have left the document: then the element is asked for by object)."""
    if later is None:
        return None
    try:
        nodes = (later.result(timeout_s=timeout_s) or {}).get("nodes") or ()
    except BPError:
        return None
    if not nodes or (node is not None and nodes[0].get("backendDOMNodeId") != node):
        return None
    return facts_of(nodes[0]), nodes[0].get("backendDOMNodeId")


def _query(session, context_id, key, refs, timeout_s, nodes=None):
    """[(facts, backend node id) or (None, None)] for these refs of the world, asked of the
    engine at once. A ref whose node an earlier answer named (`nodes`, by position) is asked by
    that node: one round trip, where finding its object first costs two more."""
    nodes = nodes or [None] * len(refs)
    by_node = [_ask(session, {"backendNodeId": node}) if node is not None else None for node in nodes]
    found = [_answer(later, timeout_s, node) for later, node in zip(by_node, nodes)]
    missing = [index for index, answer in enumerate(found) if answer is None]
    if missing:
        for index, answer in zip(missing, _query_objects(session, context_id, key, [refs[i] for i in missing],
                                                         timeout_s)):
            found[index] = answer
    return [answer or (None, None) for answer in found]


def _query_objects(session, context_id, key, refs, timeout_s):
    """[(facts, backend node id) or None] for these refs, found as objects in the world."""
    reply = session.call("Runtime.evaluate", {
        "expression": f"({ELEMENTS_OF})({json.dumps({'key': key, 'refs': refs})})", "contextId": context_id,
        "objectGroup": GROUP}, timeout_s=timeout_s)
    array = (reply.get("result") or {}).get("objectId")
    if not array:
        return [None] * len(refs)
    try:
        props = session.call("Runtime.getProperties", {"objectId": array, "ownProperties": True},
                             timeout_s=timeout_s).get("result") or ()
        objects = {}
        for prop in props:
            name, value = prop.get("name"), prop.get("value") or {}
            if name and name.isdigit() and value.get("objectId"):
                objects[int(name)] = value["objectId"]
        # All sent at once, then read: the renderer answers them in order, one round trip in all.
        sent = [_ask(session, {"objectId": objects[index]}) if index in objects else None
                for index in range(len(refs))]
        return [_answer(later, timeout_s) for later in sent]
    finally:
        try:
            session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": GROUP})
        except BPError:
            pass
