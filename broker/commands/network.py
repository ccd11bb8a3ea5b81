"""Network family: net (journal, show, rules), cookies, auth, console, errors
(cli/commands/net.py, cli/commands/browser_data.py). Logic: broker/network/journal.py
(requests), interception.py (rules, credentials), console.py."""

import re

from bp import outputs, protocol
from bp.errors import BPError, invalid_argument, target_crashed
from broker.browser.connection import CDPError
from broker.network import console as console_journal
from broker.network import interception
from broker.network import journal
from broker.tabs import routing
from broker.registry import handler


def _hub(broker, request):
    """The broker's network hub and the request's Agent (its held tabs are journaled since
    they were held)."""
    return broker.network_hub, routing.agent_for(broker, request)


# `bp net …` and `bp auth …` that the journal answers as it is: fn(hub, agent, args).
JOURNAL_OPS = {
    protocol.OP_NET: journal.list_requests,
    protocol.OP_NET_CLEAR: lambda hub, agent, args: journal.clear(hub, agent),
    protocol.OP_NET_RULE_ADD: interception.add_rule,
    protocol.OP_NET_RULES: lambda hub, agent, args: interception.list_rules(hub, agent),
    protocol.OP_AUTH_SET: interception.set_auth,
    protocol.OP_AUTH_CLEAR: lambda hub, agent, args: interception.clear_auth(hub, agent),
}
for _op, _fn in JOURNAL_OPS.items():
    handler(_op)(lambda broker, request, fn=_fn: fn(*_hub(broker, request), request.args))


@handler(protocol.OP_NET_SHOW)
def net_show(broker, request):
    hub, agent = _hub(broker, request)
    args = request.args
    if not args.get("save"):
        return journal.show(hub, agent, args, request.remaining())
    data, mime, entry = journal.body_bytes(hub, agent, args["id"], request.remaining())
    path, size = outputs.export(args, f"response-{entry.seq}", [data])
    return {"file": path, "mimeType": mime, "sizeBytes": size}


@handler(protocol.OP_NET_RULE_REMOVE)
def net_rule_remove(broker, request):
    if not request.args.get("all") and not request.args.get("ruleId"):
        raise invalid_argument("ruleId", "Give a rule id (see 'bp net rules') or --all.")
    hub, agent = _hub(broker, request)
    return interception.remove_rules(hub, agent, request.args)


def _journal(broker, request, rows):
    hub, agent = _hub(broker, request)
    crashed = broker.browser.targets.crash_state(agent.selected) if agent.selected else None
    if crashed:
        # The selected tab's renderer is gone: say so instead of a journal that stopped.
        raise target_crashed(crashed["reason"], targetId=agent.opaque_id(agent.selected))
    return rows(hub, agent, request.args)  # journaled since its tabs were held


@handler(protocol.OP_CONSOLE)
def console(broker, request):
    return _journal(broker, request, console_journal.console_rows)


@handler(protocol.OP_ERRORS)
def errors(broker, request):
    return _journal(broker, request, console_journal.error_rows)


# --- cookies (the selected tab's browser context) ---------------------------------------------------

def _cookie_row(cookie, values):
    row = {"name": str(cookie.get("name"))[:4096], "domain": cookie.get("domain"), "path": cookie.get("path"),
           "httpOnly": bool(cookie.get("httpOnly")), "secure": bool(cookie.get("secure")),
           "expires": cookie.get("expires") if not cookie.get("session") else -1}
    if cookie.get("sameSite"):
        row["sameSite"] = cookie["sameSite"]
    value = str(cookie.get("value") or "")
    if values:
        row["value"] = value[:4096]
    else:
        row["valueLength"] = len(value)
    return row


def _domain_matches(cookie_domain, wanted):
    cookie_domain = (cookie_domain or "").lower().lstrip(".")
    wanted = wanted.lower().lstrip(".")
    return cookie_domain == wanted or cookie_domain.endswith("." + wanted)


def _all_cookies(session, timeout_s):
    """Every cookie of the tab's browser context (the session's storage partition)."""
    return session.call("Storage.getCookies", {}, timeout_s=min(10.0, timeout_s)).get("cookies") or []


def _page_url(session):
    return session.page_state()["url"]


@handler(protocol.OP_COOKIES)
def cookies(tab):
    _check_cookie({"url": tab.args["url"]} if tab.args.get("url") else {})
    session, args, timeout_s = tab.session, tab.args, tab.remaining(floor=1.0)
    if args.get("domain"):
        found = [c for c in _all_cookies(session, timeout_s) if _domain_matches(c.get("domain"), args["domain"])]
        scope = {"domain": args["domain"].lower().lstrip(".")}
    else:
        url = args.get("url") or _page_url(session)
        if not url.lower().startswith(("http:", "https:")):
            raise invalid_argument("url", "Cookies are scoped to an http(s) URL: give --url or a domain.")
        found = session.call("Network.getCookies", {"urls": [url]}, timeout_s=min(10.0, timeout_s)).get("cookies") or []
        scope = {"url": url[:8192]}
    rows = [_cookie_row(c, args.get("values")) for c in found[:1000]]
    return {"cookies": rows, "scope": scope, "valuesIncluded": bool(args.get("values")),
            "truncated": len(found) > 1000}


# RFC 6265: a cookie name is a token; a value, domain or path holds no ';' and no control
# character (Chrome refuses them only after the call, as an opaque "Sanitizing cookie failed").
_COOKIE_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_COOKIE_FORBIDDEN = re.compile(r"[;\x00-\x1f\x7f]")


def _check_cookie(args):
    if "name" in args and not _COOKIE_NAME.match(args["name"]):
        raise invalid_argument("name", "A cookie name is letters, digits and !#$%&'*+-.^_`|~ only "
                               "(no '=', ';', space or control character).")
    for field in ("value", "domain", "path"):
        if field in args and _COOKIE_FORBIDDEN.search(args[field]):
            raise invalid_argument(field, f"A cookie {field} holds no ';' and no control character.")
    if args.get("url") and not args["url"].lower().startswith(("http://", "https://")):
        raise invalid_argument("url", "Cookies are scoped to an http(s) URL.")


@handler(protocol.OP_COOKIE_SET)
def cookie_set(tab):
    _check_cookie(tab.args)
    session, args, timeout_s = tab.session, tab.args, tab.remaining(floor=1.0)
    params = {k: v for k, v in args.items() if k in ("name", "value", "url", "domain", "path", "secure",
                                                      "httpOnly", "sameSite", "expires")}
    if not params.get("url") and not params.get("domain"):
        params["url"] = _page_url(session)
        if not params["url"].lower().startswith(("http:", "https:")):
            raise invalid_argument("url", "Give --url or --domain: the tab is not on an http(s) page.")
    try:
        reply = session.call("Network.setCookie", params, timeout_s=min(10.0, timeout_s))
    except CDPError as exc:
        if not exc.cookie_refused:
            raise
        reply = {"success": False}
    if reply.get("success") is False:
        raise BPError("action_not_verified", "The browser refused the cookie (check name, domain, secure/URL).",
                      context={"reason": "cookie_rejected"})
    return {"cookie": {"name": args["name"], "domain": args.get("domain"), "url": params.get("url"),
                       "path": args.get("path")}}


@handler(protocol.OP_COOKIE_DELETE)
def cookie_delete(tab):
    _check_cookie(tab.args)
    session, args, timeout_s = tab.session, tab.args, tab.remaining(floor=1.0)
    if args.get("all"):
        if not args.get("domain"):
            raise invalid_argument("domain", "Clearing cookies needs --domain (never the whole cookie jar).")
        found = [c for c in _all_cookies(session, timeout_s) if _domain_matches(c.get("domain"), args["domain"])]
        for c in found:
            session.call("Network.deleteCookies", {"name": c["name"], "domain": c["domain"], "path": c["path"]},
                         timeout_s=min(10.0, timeout_s))
        return {"deleted": len(found)}
    if not args.get("name"):
        raise invalid_argument("name", "Give the cookie name.")
    params = {k: v for k, v in args.items() if k in ("name", "url", "domain", "path")}
    if not params.get("url") and not params.get("domain"):
        params["url"] = _page_url(session)
    session.call("Network.deleteCookies", params, timeout_s=min(10.0, timeout_s))
    return {"name": args["name"]}


@handler(protocol.OP_NET_EXPORT)
def net_export(broker, request):
    """HAR 1.2 of the key's journal, written through the same export path as every other file."""
    import json

    from broker.network import har

    hub, agent = _hub(broker, request)
    document, count, bodies, cut = har.export(hub, agent, request.args, request.remaining())
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path, size = outputs.export(request.args, "network", [data])
    result = {"file": path, "mimeType": "application/json", "sizeBytes": size, "entries": count,
              "revealed": bool(request.args.get("reveal"))}
    if request.args.get("bodies"):
        result["bodies"] = bodies
        result["bodiesTruncated"] = cut
    return result
