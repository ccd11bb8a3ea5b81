"""The hot commands' replies against their schemas (bp/replies.py, issue 28 item 3), on real
Chromium: every corpus page, a data grid, a page with disabled and covered controls, and a
dialog an action opens. Each reply is checked as the Agent gets it, so a field that appears,
changes its type or goes away fails here first."""

from bp import ops, replies
from tests.corpus import CASES
from tests.e2e.test_observe_grids import FILES, GRID, STRUCTURES
from tests.helpers import bp

MORE = {
    "grid": GRID,
    "structures": STRUCTURES,
    "files": FILES,
    "left out": """<button disabled>Save</button><div style="position:relative"><button>Under</button>
<div style="position:absolute;inset:0;background:white"></div></div><button style="opacity:0">Ghost</button>
<input aria-label="Name" required aria-invalid="true"><h2>Title</h2><button aria-pressed="mixed">Bold</button>""",
    "dialog": """<button onclick="confirm('Sure?')">Ask</button>""",
}


def _checked(home, env, op, *args, failures, shapes=None):
    result = bp(home, op, *args, env=env)
    if not result.json.get("ok"):
        return result.json  # failures are checked by bp/schemas.py ReplySchema, in every test
    if shapes is not None:
        shapes.add("dialog" if "dialog" in result.json else "evidence" if "evidence" in result.json else op)
    problems = replies.check(op, result.json)
    if problems:
        failures.append((op, args, problems))
    return result.json


# Every command on these corpus cases and on MORE; the observation alone (open, snapshot, a click)
# on the others, so the check stays a few seconds.
EVERY_COMMAND = {"native_controls", "select_variants", "shadow_dom", "same_origin_iframe", "aria_modal", "covered"}


def test_every_hot_reply_conforms_to_its_schema(home, connected, pages):
    failures, shapes = [], set()
    urls = [(pages.url(f"/corpus/{case}"), case in EVERY_COMMAND) for case in sorted(CASES)]
    urls += [(pages.page(html), True) for html in MORE.values()]
    _checked(home, connected, "status", failures=failures)
    for url, every in urls:
        page = _checked(home, connected, "open", url, failures=failures)
        _checked(home, connected, "snapshot", "--disabled", failures=failures)
        elements = page.get("elements") or []
        if every:
            _checked(home, connected, "snapshot", "--diff", failures=failures)
            _checked(home, connected, "snapshot", "--grep", "a", failures=failures)
            _checked(home, connected, "tabs", failures=failures)
            _checked(home, connected, "read", failures=failures)
            _checked(home, connected, "search", "a", failures=failures)
            _checked(home, connected, "find", "button, a, input", "--attributes", "id", failures=failures)
            _checked(home, connected, "wait", "--selector", "body", failures=failures)
            for element in elements[:2]:
                _checked(home, connected, "hover", str(element["ref"]), failures=failures)
            fields = [e for e in elements if e["role"] in ("textbox", "searchbox")]
            if fields:
                _checked(home, connected, "type", str(fields[0]["ref"]), "abc", failures=failures)
        if elements:
            _checked(home, connected, "click", str(elements[0]["ref"]), failures=failures, shapes=shapes)
        if every:
            _checked(home, connected, "press", "Tab", failures=failures)
            _checked(home, connected, "keyboard", "x", failures=failures)
            _checked(home, connected, "scroll", failures=failures)
    assert failures == [], "\n".join(repr(f) for f in failures)
    assert shapes == {"evidence", "dialog"}  # an observation with evidence, and a dialog that blocks it


def test_every_hot_command_declares_its_reply_schema():
    from cli import table

    for name in table.HOT:
        op = {"status": ops.OP_STATUS}.get(name, name)
        assert ops.OPS[op].reply, f"{name}: no reply schema (bp/ops.py reply=)"
        assert replies.reply_schema(op) is not None


def test_a_reply_that_drifts_fails_its_schema():
    good = {"ok": True, "title": "t", "url": "u", "elements": [{"ref": 1, "role": "button", "name": "Go"}],
            "page": {k: 0 for k in replies.Page().fields}, "truncated": False, "truncationReasons": [], "hints": []}
    assert replies.check("snapshot", good) == {}
    assert "elements" in replies.check("snapshot", dict(good, elements=[{"ref": 1, "role": "button", "name": "Go",
                                                                         "newField": 1}]))
    assert "elements" in replies.check("snapshot", dict(good, elements=[{"ref": "1", "role": "button", "name": "Go"}]))
    assert "page" in replies.check("snapshot", {k: v for k, v in good.items()} | {"page": {}})
    assert "surprise" in replies.check("snapshot", dict(good, surprise=True))
