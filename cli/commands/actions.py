"""Action family: click, type, hover, drag (keyboard and press: cli/commands/keys.py).

Broker side: broker/commands/actions.py (same operation names, from bp.protocol).
"""

from bp import protocol
from cli import render
from cli.build import Refused, given, ref_or_selector
from cli.commands import built, send
from cli.declare import IntRange, argument, command, option


def _xy(ctx, param, value):
    if value is None:
        return None
    try:
        x, y = (float(v) for v in value.split(","))
    except ValueError:
        raise Refused("must be x,y in CSS pixels of the viewport, e.g. 120,340") from None
    if not (0 <= x <= 100000 and 0 <= y <= 100000):
        raise Refused("coordinates must be within the viewport")
    return [x, y]


@command()
@argument("ref", type=IntRange(1, protocol.MAX_REF), required=False)
@option("--xy", callback=_xy, metavar="X,Y", help="Click viewport coordinates instead of a ref.")
@option("--double", is_flag=True, help="Double-click.")
@option("--right", is_flag=True, help="Right-click.")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def click_ref(**values):
    """Click an element by its ref from the latest snapshot (or at --xy coordinates).

    Checked before dispatch: the ref is current, the element enabled and not covered. Returns a
    fresh snapshot plus evidence of what changed; the tab and window are never brought to front.

    \b
    Example:  bp click 3
    """
    send(protocol.OP_CLICK, built(click_request, values), render.observation)


def click_request(v):
    if (v["ref"] is None) == (v["xy"] is None):
        raise Refused("Give exactly one of REF or --xy.")
    if v["double"] and v["right"]:
        raise Refused("--double and --right cannot be combined.")
    args = {"limit": v["limit"]}
    if v["ref"] is not None:
        args["ref"] = v["ref"]
    else:
        args["xy"] = v["xy"]
    if v["right"]:
        args["button"] = "right"
    if v["double"]:
        args["clickCount"] = 2
    return args


MAX_STDIN_TEXT = 100_000


def text_argument(text):
    """TEXT as given, or from stdin when it is '-' (so a secret stays out of argv); the builder bounds it."""
    if text == "-":
        import sys

        text = sys.stdin.read(MAX_STDIN_TEXT + 1)
    return text


def bounded_text(text):
    """TEXT once read (the builders' check): at most MAX_STDIN_TEXT characters."""
    if len(text) > MAX_STDIN_TEXT:
        raise Refused(f"at most {MAX_STDIN_TEXT} characters", param_hint="TEXT")
    return text


@command(name="type")
@argument("ref", type=IntRange(1, protocol.MAX_REF))
@argument("text")
@option("-c", "--clear", is_flag=True, help="Empty the field first (select all, delete; also rich editors).")
@option("-s", "--submit", is_flag=True, help="Press Enter afterwards (not sent if the page changed meanwhile).")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def type_text(**values):
    """Type TEXT into the field REF from the latest snapshot. TEXT '-' reads it from stdin, so a
    secret never appears in the command line.

    Evidence reports lengths and whether the field reads back exactly what was expected;
    password fields report lengths only, and typed text is never echoed or logged.

    \b
    Example:  bp type 1 "Ada Lovelace" --clear
    Example:  printf %s "$PASSWORD" | bp type 4 - --submit
    """
    values["text"] = text_argument(values["text"])
    send(protocol.OP_TYPE, built(type_request, values), render.observation)


def type_request(v):
    return given({"ref": v["ref"], "text": bounded_text(v["text"]), "limit": v["limit"]},
                 clear=v["clear"], submit=v["submit"])


@command()
@argument("ref", type=IntRange(1, protocol.MAX_REF))
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def hover(**values):
    """Move the pointer over the element REF (for menus that open on hover).

    Checked like a click (current ref, not covered); nothing is pressed. Returns a fresh
    snapshot, which shows what the hover revealed.

    \b
    Example:  bp hover 7
    """
    send(protocol.OP_HOVER, built(hover_request, values), render.observation)


def hover_request(v):
    return {"ref": v["ref"], "limit": v["limit"]}


@command()
@argument("source")
@argument("target")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def drag(**values):
    """Drag SOURCE onto TARGET: each a ref of the latest snapshot, or a CSS selector.

    Presses on SOURCE, moves the pointer to TARGET in steps with the button down, and releases
    there: HTML5 drag and drop (draggable items) and pointer-driven lists alike. Returns a fresh
    snapshot; check the order it shows. A list item without a ref (a plain sortable <li>) is
    reached by a selector.

    \b
    Example:  bp drag 4 7
    Example:  bp drag "#tasks li:nth-child(3)" "#tasks li:first-child"
    """
    send(protocol.OP_DRAG, built(drag_request, values), render.observation)


def drag_request(v):
    source, target = ref_or_selector(v["source"], "SOURCE"), ref_or_selector(v["target"], "TARGET")
    out = dict(source)
    out.update({"to": target["ref"]} if "ref" in target else {"toSelector": target["selector"]})
    out["limit"] = v["limit"]
    return out
