"""Scrolling: the page, a container (ref or CSS selector), to an end, or to a piece of text.

Programmatic scrolling in Browser Pilot's isolated world (scripts/scroll.js); the evidence is
the measured offsets before and after. Scrolling that cannot move (at an end) is a `mismatch`
with reason `at_boundary`, not an error; text that is not on the page is `text_not_found`.
"""

from bp.errors import BPError
from broker.actions import settle as settling
from broker.observe import snapshot, worlds

def in_world(session, source, opts, timeout_s=15.0, fn=None):
    """Run a script in the isolated world of the tab's current document (once more if the
    document changed between finding the world and using it)."""
    return worlds.run_in_world(session, source, opts, timeout_s, fn)


def scroll(broker, agent, raw, session, args, deadline):
    if "toText" in args:
        opts = {"mode": "text", "text": args["toText"], "exact": args.get("exact", False)}
    elif "to" in args:
        opts = {"mode": "position", "to": args["to"]}
    else:
        opts = {"mode": "relative", "direction": args.get("direction", "down"), "amount": args.get("amount", 1),
                "unit": args.get("unit", "viewport")}
    source = worlds.script("scroll.js")
    since = session.mark()
    session.dispatching()  # the script checks the target and scrolls in one step
    if "ref" in args:
        evidence = snapshot.on_ref(broker, agent, raw, session, args["ref"], source, opts)
    else:
        evidence = worlds.by_selector(session, source, {**opts, "selector": args.get("selector")})
    if evidence is None:
        raise BPError("internal_error", "The scroll script returned nothing.")
    # Scrolling can load more content or (rarely) navigate: settle like any other input.
    settling.navigation(session, since, deadline)
    return evidence
