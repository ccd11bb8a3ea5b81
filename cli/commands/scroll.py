"""Scrolling: bp scroll.

Broker side: broker/commands/forms.py and broker/forms/scroll.py (same operation name, from bp.protocol).
"""

from bp import protocol
from cli import render
from cli.build import Refused
from cli.commands import built, send
from cli.declare import Choice, FloatRange, IntRange, argument, command, option


@command()
@argument("direction", type=Choice(["up", "down", "left", "right"]), required=False)
@option("--amount", type=FloatRange(min=0, max=1_000_000, min_open=True), default=None,
              help="How far: in viewports (default 1) or, with --unit pixels, in CSS pixels.")
@option("--unit", type=Choice(["pixels", "viewport"]), default=None,
              help="Unit of --amount (default viewport: the scroller's visible height or width).")
@option("--ref", type=IntRange(1, protocol.MAX_REF), default=None, help="Scroll this container (a ref).")
@option("--selector", default=None, metavar="CSS", help="Scroll this container (first CSS match).")
@option("--to", "to", type=Choice(["start", "end"]), default=None, help="Scroll to the top or bottom.")
@option("--to-text", "to_text", default=None, metavar="TEXT",
              help="Scroll the first visible match of TEXT into view (case-insensitive substring).")
@option("--exact", is_flag=True, help="With --to-text: the whole text of a text node, case-sensitive.")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def scroll(**values):
    """Scroll the page, or a container, by an amount, to an end, or to a text.

    Without arguments: down by one viewport. Give at most one of DIRECTION, --to, --to-text.
    Evidence reports the measured offsets before and after; nothing left to scroll is a
    mismatch with reason at_boundary (not an error), a missing text is text_not_found.
    A --ref or --selector that does not scroll itself scrolls its nearest scrolling ancestor.

    \b
    Example:  bp scroll down --amount 400 --unit pixels
    Example:  bp scroll --to-text "Terms of service"
    Example:  bp scroll --selector "#results" --to end
    """
    send(protocol.OP_SCROLL, built(scroll_request, values), render.observation)


def scroll_request(v):
    direction, to, to_text = v["direction"], v["to"], v["to_text"]
    if sum(x is not None for x in (direction, to, to_text)) > 1:
        raise Refused("Give at most one of DIRECTION, --to and --to-text.")
    if v["ref"] is not None and v["selector"] is not None:
        raise Refused("--ref and --selector cannot be combined.")
    if (v["amount"] is not None or v["unit"] is not None) and (to is not None or to_text is not None):
        raise Refused("--amount and --unit go with a direction, not with --to or --to-text.")
    if v["exact"] and to_text is None:
        raise Refused("--exact goes with --to-text.")
    if to_text is not None and not 1 <= len(to_text) <= 1000:
        raise Refused("must be 1-1000 characters", param_hint="--to-text")
    args = {"limit": v["limit"]}
    if to is not None:
        args["to"] = to
    elif to_text is not None:
        args["toText"] = to_text
        if v["exact"]:
            args["exact"] = True
    else:
        args["direction"] = direction or "down"
        for name in ("amount", "unit"):
            if v[name] is not None:
                args[name] = v[name]
    for name in ("ref", "selector"):
        if v[name] is not None:
            args[name] = v[name]
    return args
