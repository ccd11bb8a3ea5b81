"""Page family: read, search, find, locate, frame, eval — smaller representations of the page
than a snapshot, the frame they look at, and the JavaScript escape hatch.

Broker side: broker/commands/page.py and broker/page/content.py (same operation names, from bp.protocol).
"""

import json
import re

from bp import protocol
from cli.build import Refused, given
from cli.commands import built, send
from cli.declare import IntRange, argument, command, option
from cli.output import escape

MAX_EXPRESSION = 100_000
ATTRIBUTE_NAME = re.compile(r"^[A-Za-z_:][-A-Za-z0-9_:.]{0,127}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _header(r):
    return f"[page] {escape(r.get('title', ''))} | {escape(r.get('url', ''))}"


def _where(item):
    return f"at {item['x']},{item['y']} {item['width']}x{item['height']}"


def _render_read(r):
    # Page text is what the person asked to read: keep its lines, drop control characters
    # (no escape sequence of the page reaches the terminal).
    lines = [_header(r), "", _CONTROL.sub("", r.get("text", ""))]
    if r.get("truncated"):
        lines += ["", f"[truncated at {r['length']} characters: use --limit]"]
    return "\n".join(lines)


def _render_search(r):
    lines = [_header(r), f"{r['totalMatches']} match(es)"]
    for m in r["matches"]:
        lines.append(f"[{m['index']}] <{escape(m['tagName'])}> {_where(m)}{'' if m['visible'] else ' (hidden)'}: "
                     f"{escape(m['context'])}")
    if r.get("truncated"):
        lines.append("[truncated: more matches than shown]")
    return "\n".join(lines)


def _render_find(r):
    lines = [_header(r), f"{r['totalMatches']} element(s)"]
    for e in r["elements"]:
        flags = ("" if e["visible"] else " hidden") + ("" if e["enabled"] else " disabled")
        line = f"[{e['index']}] <{escape(e['tagName'])}>"
        if e.get("role"):
            line += f" {escape(e['role'])}"
        if e.get("name"):
            line += f' "{escape(e["name"])}"'
        line += f" {_where(e)}{flags}"
        if e.get("text") and e["text"] != e.get("name"):
            line += f" text={escape(e['text'][:120])!s}"
        for attr in e.get("attributes") or []:
            line += f" {escape(attr['name'])}={escape(attr['value'][:200])}"
        lines.append(line)
    if r.get("truncated"):
        lines.append("[truncated: more elements than shown]")
    return "\n".join(lines)


def _render_locate(r):
    return f"centre {r['x']},{r['y']} | box left {r['left']}, top {r['top']}, {r['width']}x{r['height']}"


def _render_frames(r):
    if "frames" not in r:
        return f"frame {r['frame']} selected | {escape(r.get('url', ''))}"
    lines = []
    for f in r["frames"]:
        parent = f" (in {f['parentIndex']})" if "parentIndex" in f else ""
        name = f' "{escape(f["name"])}"' if f.get("name") else ""
        lines.append(f"{'*' if f.get('selected') else ' '} [{f['index']}]{name} {escape(f['url'])}{parent}")
    return "\n".join(lines)


def _render_eval(r):
    value = r.get("value")
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    return _CONTROL.sub("", text) + ("\n[truncated]" if r.get("truncated") else "")


@command()
@argument("selector", required=False)
@option("--limit", type=IntRange(1, 1_000_000), default=3000, show_default=True, metavar="CHARS",
              help="Most characters of text to return (1-1000000).")
@option("--from-anchor", "anchor", metavar="ID",
              help="Start at the element with this id (a section); default: the URL's #fragment, if any.")
def read(**values):
    """Read the selected frame's text as a person sees it: the main content (or SELECTOR's),
    without navigation, headers/footers, scripts, hidden or aria-hidden parts.

    Without SELECTOR the root is the first of main, article, [role=main], body. Iframes are left
    out: select one with 'bp frame <index>' to read it. A SELECTOR that matches nothing fails
    with invalid_argument (field "selector").

    \b
    Example:  bp read --limit 8000
    Example:  bp read "#results"
    Example:  bp read --from-anchor installation
    """
    send(protocol.OP_READ, built(read_request, values), _render_read)


def read_request(v):
    args = {"limit": v["limit"]}
    if v["selector"] is not None:
        args["selector"] = v["selector"]
    if v["anchor"]:
        args["anchor"] = v["anchor"].lstrip("#") or v["anchor"]
    return args


@command()
@argument("query")
@option("--selector", metavar="CSS", help="Only search inside elements matching this selector.")
@option("--case-sensitive", is_flag=True, help="Match letter case exactly.")
@option("--whole-word", is_flag=True, help="Match whole words only.")
@option("-l", "--limit", type=IntRange(1, 200), default=20, show_default=True,
              help="Most matches to return (1-200); totalMatches counts them all.")
def search(**values):
    """Find QUERY in the rendered text of the selected frame (open shadow DOM and same-origin
    frames included): each match with up to 500 characters of context, its element's tag and
    its box in viewport pixels. Whitespace in QUERY matches any run of whitespace.

    \b
    Example:  bp search "free shipping" --whole-word
    """
    send(protocol.OP_SEARCH, built(search_request, values), _render_search)


def search_request(v):
    args = given({"query": v["query"], "limit": v["limit"]}, caseSensitive=v["case_sensitive"],
                 wholeWord=v["whole_word"])
    if v["selector"] is not None:
        args["selector"] = v["selector"]
    return args


def _attributes(ctx, param, value):
    if value is None:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names or len(names) > 20:
        raise Refused("give 1-20 comma-separated attribute names")
    for name in names:
        if not ATTRIBUTE_NAME.match(name):
            raise Refused(f"not an attribute name: {name[:64]!r}")
    return names


@command()
@argument("selector")
@option("-l", "--limit", type=IntRange(1, 200), default=20, show_default=True,
              help="Most elements to return (1-200); totalMatches counts them all.")
@option("--attributes", callback=_attributes, metavar="A,B",
              help="Attributes to report for each element (up to 20 names; values cut at 2048 characters).")
@option("--no-shadow", is_flag=True, help="Do not look inside open shadow roots.")
def find(**values):
    """List the elements matching the CSS SELECTOR in the selected frame, with tag, role, name,
    text (500 characters at most), visibility, enabled state and box in viewport pixels.

    Open shadow roots and same-origin frames are searched too. The index is only a position in
    this answer, not a ref: act on elements through 'bp snapshot' refs. A password field's value
    is never reported, not even as an attribute.

    \b
    Example:  bp find "a.result" --attributes href,title --limit 50
    """
    send(protocol.OP_FIND, built(find_request, values), _render_find)


def find_request(v):
    return given({"selector": v["selector"], "limit": v["limit"]}, attributes=v["attributes"],
                 noShadow=v["no_shadow"])


@command()
@argument("selector")
def locate(selector):
    """Scroll the first element matching the CSS SELECTOR to the middle of the view and give its
    centre (x, y) and box in viewport pixels of the tab, e.g. for 'bp click --xy'.

    \b
    Example:  bp locate "canvas#map"
    """
    send(protocol.OP_LOCATE, {"selector": selector}, _render_locate)


@command()
@argument("index", type=IntRange(0, 10_000), required=False)
def frame(index):
    """List the frames of the selected tab (0 is the page itself), or select frame INDEX.

    The selection belongs to this Agent and this tab. eval, read, search, find and locate then
    work in that frame; it goes back to the page (0) when the tab navigates to a new document.
    An out-of-range INDEX fails with invalid_argument (field "target").

    \b
    Example:  bp frame        # list
    Example:  bp frame 1      # work inside the first iframe
    """
    send(protocol.OP_FRAME, {} if index is None else {"index": index}, _render_frames)


@command(name="eval")
@argument("expression", required=False)
def eval_js(expression):
    """Evaluate a JavaScript EXPRESSION in the page's own world of the selected frame and print
    its JSON value; a promise is awaited. EXPRESSION '-' (or none, when stdin is not a terminal)
    reads it from stdin. This is an escape hatch: prefer snapshot, read, search and find.

    The value comes back as JSON, cut at 64 KiB (truncated: true). A thrown error fails with
    invalid_argument (reason "exception", exceptionType) without its message: catch it in the
    expression and return String(error) to see it.

    \b
    Example:  bp eval "document.querySelectorAll('tr').length"
    Example:  echo 'await fetch("/api/me").then(r => r.status)' | bp eval
    """
    import click

    if expression is None or expression == "-":
        import sys

        if expression is None and sys.stdin.isatty():
            raise click.UsageError("Give an EXPRESSION, or '-' to read it from stdin.")
        expression = sys.stdin.read(MAX_EXPRESSION + 1)
    param = click.get_current_context().command.params[0]
    if len(expression) > MAX_EXPRESSION:
        raise click.BadParameter(f"at most {MAX_EXPRESSION} characters", param=param)
    if not expression.strip():
        raise click.BadParameter("the expression is empty", param=param)
    send(protocol.OP_EVAL, {"expression": expression}, _render_eval)
