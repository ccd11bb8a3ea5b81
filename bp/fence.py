"""Untrusted page text marked as such: `--fence` / BROWSER_PILOT_FENCE=1.

Page text reaches the Agent's context, and a page can write anything, instructions included.
With the fence on, every string of page-derived text in a reply is wrapped in a boundary made
of a fresh random token per call,

    <<page:9f3a0c…>>text the page wrote<<end:9f3a0c…>>

and the reply says which token it used (`fence`), so an Agent (or a program) knows exactly where
page data starts and ends. The token is drawn by the CLI after the reply arrived, so no page can
know it; and any marker-shaped text inside page text (`<<page:`, `<<end:`, any case, spaces
allowed) is neutralised (`‹‹page:`), so a page cannot even try to close the fence with a guess.

Applied in ONE place, to the whole reply just before it is printed (cli/output.py finish), JSON
and human output alike; nothing in the broker or the in-page scripts knows about it. What is page
text is decided by field name, wherever it occurs (PAGE_FIELDS: titles, element names, values
and contexts, read and search text, find attributes, dropdown labels, dialog and console
messages, cookie and header values, bodies, eval values); every string under such a field is
fenced, nested ones included (an eval's object). URLs are not fenced (an Agent passes them back
to `bp open`) but are neutralised like every other string. Stdlib only, imported only when on.
"""

import os
import re

TYPE_CHECKING = False  # stdlib only and no typing at run time: the annotations are strings
if TYPE_CHECKING:
    from typing import Any

ENV = "BROWSER_PILOT_FENCE"
_OFF = ("", "0", "false", "no", "off")

# Fields whose strings are page (or server) text, wherever they are in a reply.
PAGE_FIELDS = frozenset({
    "title", "name", "value", "context", "text", "message", "label", "description", "placeholder", "selected",
    "matchedText", "body", "postData", "attributes", "options",
})
# Broker-made subtrees that share a field name with page text: left as they are.
NOT_PAGE = frozenset({"remediation", "recovery", "service", "installation", "policy", "processes", "command",
                      "commands", "browser", "janitor", "fence"})
_MARKER = re.compile(r"<<(?=\s*(?:page|end)\s*:)", re.IGNORECASE)


def enabled(environ=None):
    """Whether BROWSER_PILOT_FENCE asks for the fence: any value but empty/0/false/no/off."""
    value = (os.environ if environ is None else environ).get(ENV)
    return value is not None and value.strip().lower() not in _OFF


def new_token():
    return os.urandom(8).hex()


def neutralise(text):
    """Text in which nothing can read as a fence marker."""
    return _MARKER.sub("‹‹", text) if "<<" in text else text


def wrap(text, token):
    return f"<<page:{token}>>{neutralise(text)}<<end:{token}>>"


def apply(reply: "dict[str, Any]", token: "str | None" = None) -> "dict[str, Any]":
    """A copy of the reply with its page text fenced and `fence` set to the token used."""
    token = token or new_token()
    out = _walk(reply, token, False)
    out["fence"] = token
    return out


def _walk(value: "Any", token: "str", page: "bool") -> "Any":
    if isinstance(value, str):
        return wrap(value, token) if page and value else neutralise(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = neutralise(key) if isinstance(key, str) else key
            out[name] = item if key in NOT_PAGE and not page else _walk(item, token, page or key in PAGE_FIELDS)
        return out
    if isinstance(value, list):
        return [_walk(item, token, page) for item in value]
    return value
