"""HAR 1.2 of a key's network journal (`bp net export FILE.har`).

Built from the journal as it is (broker/network/journal.py): the same entries `bp net` lists, the same
redaction as `bp net show` (sensitive headers, and every cookie value, unless --reveal), and
response bodies only with --bodies, each within the journal's bounds (journal.MAX_BODY, read
from the browser while it still holds them) and all of them within MAX_BODIES_TOTAL.
"""

import base64
import datetime
from urllib.parse import parse_qsl, urlsplit

import bp
from broker.network import entries
from broker.network import journal
from broker.network.interception import glob_matcher

MAX_BODIES_TOTAL = 16 * 1024 * 1024  # bytes of body text in one export; later bodies are left out


def _iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000.0, datetime.UTC).isoformat(timespec="milliseconds") \
        .replace("+00:00", "Z")


def _header(rows, name):
    return [r["value"] for r in rows or () if r["name"].lower() == name]


def _request_cookies(headers, reveal):
    out = []
    for value in _header(headers, "cookie"):
        for part in value.split(";"):
            name, _, cookie_value = part.strip().partition("=")
            if name:
                out.append({"name": name[:256], "value": cookie_value if reveal else entries.REDACTED})
    return out


def _response_cookies(headers, reveal):
    out = []
    for value in _header(headers, "set-cookie"):
        first, *attributes = value.split(";")
        name, _, cookie_value = first.strip().partition("=")
        if not name:
            continue
        cookie = {"name": name[:256], "value": cookie_value if reveal else entries.REDACTED}
        for attribute in attributes:
            key, _, val = attribute.strip().partition("=")
            key = key.lower()
            if key in ("path", "domain"):
                cookie[key] = val
            elif key == "httponly":
                cookie["httpOnly"] = True
            elif key == "secure":
                cookie["secure"] = True
        out.append(cookie)
    return out


def _query(url):
    try:
        return [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)]
    except ValueError:
        return []


def _entry(entry, reveal, body):
    request_headers, _ = entries.redact(entry.request_headers, reveal)
    response_headers, _ = entries.redact(entry.response_headers or [], reveal)
    request = {"method": entry.method, "url": entry.url, "httpVersion": "HTTP/1.1",
               "cookies": _request_cookies(entry.request_headers, reveal), "headers": request_headers,
               "queryString": _query(entry.url), "headersSize": -1, "bodySize": -1}
    if entry.post_data is not None:
        mime = next(iter(_header(entry.request_headers, "content-type")), "")
        request["postData"] = {"mimeType": mime, "text": entry.post_data}
        request["bodySize"] = len(entry.post_data.encode("utf-8", "replace"))
    content = {"size": entry.size if entry.size is not None else 0, "mimeType": entry.mime or "x-unknown"}
    if body is not None:
        text, encoded = body
        content["text"] = text
        if encoded:
            content["encoding"] = "base64"
    location = next(iter(_header(entry.response_headers, "location")), "")
    response = {"status": entry.status or 0, "statusText": entry.status_text or "", "httpVersion": "HTTP/1.1",
                "cookies": _response_cookies(entry.response_headers, reveal), "headers": response_headers,
                "content": content, "redirectURL": location, "headersSize": -1,
                "bodySize": entry.size if entry.size is not None else -1}
    wait = max(0, entry.duration or 0)
    out = {"startedDateTime": _iso(entry.started), "time": wait, "request": request, "response": response,
           "cache": {}, "timings": {"send": 0, "wait": wait, "receive": 0},
           "_id": entry.id, "_resourceType": entry.type}
    if entry.failed:
        out["_error"] = entry.error
    return out


def export(hub_, agent, args, timeout_s):
    """(the HAR document, how many entries, how many bodies included, whether any was left out)."""
    import time

    deadline = time.monotonic() + timeout_s
    state = hub_.state(agent)
    url_match = glob_matcher(args["url"]) if args.get("url") else None
    after = journal._seq_of(args["after"], "after") if args.get("after") else None
    with hub_.lock:
        chosen = [e for e in hub_.materialized(state)  # the journal parses its events when read
                  if (after is None or e.seq > after) and (url_match is None or url_match(e.url))]
    reveal, entries, bodies, budget, cut = bool(args.get("reveal")), [], 0, MAX_BODIES_TOTAL, False
    for entry in chosen:
        body = None
        if args.get("bodies") and entry.finished and not entry.failed and entry.status is not None:
            fetched = journal.body_of(entry, max(0.5, deadline - time.monotonic()))
            if fetched[0] is not None:
                text, encoded = fetched
                limit = min(journal.MAX_BODY, budget)
                if len(text) > limit:
                    cut = True
                    text = _cut(text, encoded, limit)
                budget -= len(text)
                body = (text, encoded)
                bodies += 1
        entries.append(_entry(entry, reveal, body))
    document = {"log": {"version": "1.2", "creator": {"name": "Browser Pilot", "version": bp.__version__},
                        "pages": [], "entries": entries}}
    return document, len(entries), bodies, cut


def _cut(text, encoded, limit):
    """A body cut to `limit` characters; base64 stays decodable."""
    if not encoded:
        return text[:limit]
    return base64.b64encode(base64.b64decode(text)[:max(0, limit // 4 * 3)]).decode("ascii")
