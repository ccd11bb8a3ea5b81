"""Dropdowns: bp dropdown, bp select.

Broker side: broker/commands/forms.py and broker/forms/select.py (same operation names, from bp.protocol).
"""

from bp import protocol
from cli import render
from cli.build import MAX_SELECTOR, Refused, given, ref_or_selector
from cli.commands import built, send
from cli.declare import Choice, IntRange, argument, command, option
from cli.output import escape

def _options(r):
    kind = "native select" if r.get("kind") == "native" else "ARIA combobox/listbox"
    flags = [f for f, on in (("multiple", r.get("multiple")), ("expanded", r.get("expanded")),
                              ("requires open", r.get("requiresOpen"))) if on]
    lines = [f"[dropdown] {kind}" + (f" ({', '.join(flags)})" if flags else "") + f" | {escape(r.get('url', ''))}"]
    for o in r.get("options") or []:
        line = f"[{o['index']}] \"{escape(o['label'])}\""
        if o.get("value") != o.get("label"):
            line += f" value=\"{escape(o['value'])}\""
        line += " selected" if o.get("selected") else ""
        line += " disabled" if o.get("disabled") else ""
        lines.append(line)
    if not r.get("options"):
        lines.append("(no options exposed" + ("; 'bp select' opens it" if r.get("requiresOpen") else "") + ")")
    if r.get("truncated"):
        lines.append("[truncated: first 500 options]")
    return "\n".join(lines)


@command()
@argument("target")
def dropdown(target):
    """List the options of a dropdown: a native <select>, or an ARIA combobox/listbox.

    TARGET is a ref from the latest snapshot, or a CSS selector. A custom widget whose options
    are not rendered until it is opened reports requiresOpen (bp select opens it by itself).
    Option indexes are 1-based, as 'bp select --by index' takes them.

    \b
    Example:  bp dropdown 4
    Example:  bp dropdown "select[name=country]"
    """
    send(protocol.OP_DROPDOWN, built(lambda v: ref_or_selector(v["target"]), {"target": target}), _options)


@command()
@argument("target")
@argument("option")
@option("--by", type=Choice(["label", "value", "index"]), default="label", show_default=True,
              help="Match OPTION against the option's label, value, or 1-based index.")
@option("--contains", is_flag=True, help="Case-insensitive substring match (default: exact).")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def select(**values):
    """Choose OPTION in the dropdown TARGET (a ref, or a CSS selector).

    A native <select> is set with the input and change events a person's choice fires; an ARIA
    widget is opened if needed and its option clicked with real mouse input. Evidence reads the
    selection back; an unknown option is a mismatch (option_not_found) and nothing is chosen.

    \b
    Example:  bp select 4 "Canada"
    Example:  bp select "#size" m --by value
    """
    send(protocol.OP_SELECT, built(select_request, values), render.observation)


def select_request(v):
    if len(v["option"]) > MAX_SELECTOR:
        raise Refused(f"at most {MAX_SELECTOR} characters", param_hint="OPTION")
    return given({**ref_or_selector(v["target"]), "option": v["option"], "by": v["by"], "limit": v["limit"]}, contains=v["contains"])
