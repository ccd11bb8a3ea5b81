"""The request journal's entries: one per request of a held tab, built from Chrome's Network
events (applied as they arrive, or later from their raw bytes: broker/network/journal.py), with
bounded URLs, headers and post data. URL credentials are never kept; sensitive header values are
redacted in results unless asked for (`bp net show --reveal`)."""

import re
import time

MAX_ENTRIES = 500  # per key
MAX_URL = 16384
DATA_URL_PREFIX = 64
MAX_HEADERS = 128
MAX_HEADER_VALUE = 8192
MAX_POST_STORED = 16 * 1024
REDACTED = "[redacted]"
SENSITIVE_HEADERS = frozenset({"cookie", "set-cookie", "authorization", "proxy-authorization", "x-api-key",
                               "api-key", "x-auth-token", "x-csrf-token", "x-xsrf-token"})
_URL_CREDENTIALS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@")


def without_credentials(url):
    """The URL with any user:password@ removed: the journal never keeps URL credentials."""
    return _URL_CREDENTIALS.sub(r"\1", url, count=1)


def now_ms():
    return int(time.time() * 1000)


def cdp_headers(raw):
    """CDP headers (object) -> bounded [{name, value}]."""
    rows = []
    for name, value in (raw or {}).items():
        if len(rows) >= MAX_HEADERS:
            break
        for part in str(value).split("\n"):  # Chrome joins repeated headers with newlines
            rows.append({"name": str(name)[:256], "value": part[:MAX_HEADER_VALUE]})
    return rows


def redact(rows, reveal):
    if reveal:
        return rows, []
    out, redacted = [], []
    for row in rows:
        if row["name"].lower() in SENSITIVE_HEADERS:
            out.append({"name": row["name"], "value": REDACTED})
            if row["name"].lower() not in redacted:
                redacted.append(row["name"].lower())
        else:
            out.append(row)
    return out, redacted


class Entry:
    __slots__ = ("id", "seq", "session", "request_id", "method", "url", "url_length", "type", "status",
                 "status_text", "mime", "from_cache", "failed", "error", "started", "started_mono", "duration", "size",
                 "request_headers", "response_headers", "post_data", "post_truncated", "has_post", "finished",
                 "blocked_by", "rule_refused", "pending", "pending_bytes")

    def __init__(self, seq, session, request_id, request=None, resource_type=None, at=None):
        self.seq = seq
        self.id = f"req-{seq}"
        self.session = session
        self.request_id = request_id
        self.method, self.url, self.url_length, self.type = "GET", "", None, "other"
        self.status = self.status_text = self.mime = self.error = self.duration = self.size = None
        self.from_cache = self.failed = self.finished = self.has_post = self.post_truncated = False
        self.started = now_ms()
        self.started_mono = time.monotonic() if at is None else at
        self.request_headers, self.response_headers, self.post_data = [], None, None
        self.blocked_by = None
        self.rule_refused = None  # why Chrome refused a rule's change; the request went on unmodified
        self.pending = []  # [(method, raw event bytes, monotonic arrival)] not parsed yet (journal.Hub.raw_event)
        self.pending_bytes = 0
        if request is not None:
            self.request(request, resource_type)

    def request(self, request, resource_type):
        self.method = str(request.get("method") or "GET")[:32]
        url = without_credentials(str(request.get("url") or ""))
        # A data: URL can be megabytes of one image: its scheme and type are what says something.
        cut = DATA_URL_PREFIX if url[:5].lower() == "data:" else MAX_URL
        if len(url) > cut:
            self.url, self.url_length = url[:cut], len(url)  # the row says it was cut (urlLength)
        else:
            self.url = url
        self.type = str(resource_type or "other").lower()[:32]
        self.request_headers = cdp_headers(request.get("headers"))
        post = request.get("postData")
        self.has_post = bool(request.get("hasPostData") or post)
        self.post_data = post[:MAX_POST_STORED] if isinstance(post, str) else None
        self.post_truncated = isinstance(post, str) and len(post) > MAX_POST_STORED

    def response(self, response):
        self.status = response.get("status")
        self.status_text = str(response.get("statusText") or "")[:256]
        self.mime = str(response.get("mimeType") or "")[:256] or None
        self.from_cache = bool(response.get("fromDiskCache") or response.get("fromPrefetchCache")
                               or response.get("fromServiceWorker"))
        self.response_headers = cdp_headers(response.get("headers"))

    def done(self, size=None, error=None, at=None):
        self.finished = True
        self.duration = int(((time.monotonic() if at is None else at) - self.started_mono) * 1000)
        if size is not None:
            self.size = int(size)
        if error is not None:
            self.failed = True
            self.error = str(error)[:256]

    def row(self):
        row = {"id": self.id, "method": self.method, "url": self.url, "type": self.type, "startedAt": self.started}
        if self.url_length is not None:
            row["urlLength"] = self.url_length  # the url is its first characters only
        if self.status is not None:
            row["status"] = self.status
        if self.mime:
            row["mimeType"] = self.mime
        if self.size is not None:
            row["size"] = self.size
        if self.duration is not None:
            row["durationMs"] = self.duration
        if self.from_cache:
            row["fromCache"] = True
        if self.failed:
            row["failed"] = True
            row["errorText"] = self.error
        if self.rule_refused:
            row["ruleRefused"] = self.rule_refused
        return row


JOURNALED = frozenset({"Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished",
                       "Network.loadingFailed", "Network.requestWillBeSentExtraInfo",
                       "Network.responseReceivedExtraInfo"})
# Chrome writes the event's method, then its params in protocol order: requestId comes first.
_REQUEST_ID = re.compile(rb'\{"method":"Network\.[A-Za-z]{1,64}","params":\{"requestId":"([^"\\]{1,128})"')


def apply_event(entry, method, params, at):
    """One Network event (or "redirect": a requestWillBeSent of the same request id, whose
    redirectResponse ends the entry) applied to its journal entry."""
    if method == "redirect":
        if params.get("redirectResponse"):
            entry.response(params["redirectResponse"])
            entry.done(at=at)
    elif method == "Network.requestWillBeSent":
        entry.request(params.get("request") or {}, params.get("type"))
    elif method == "Network.requestWillBeSentExtraInfo":
        headers = cdp_headers(params.get("headers"))
        if headers:
            entry.request_headers = headers  # the headers actually sent (Cookie included)
    elif method == "Network.responseReceivedExtraInfo":
        headers = cdp_headers(params.get("headers"))
        if headers:
            entry.response_headers = headers  # Set-Cookie included
            if entry.status is None:
                entry.status = params.get("statusCode")
    elif method == "Network.responseReceived":
        extra = entry.response_headers
        entry.response(params.get("response") or {})
        if extra and len(extra) >= len(entry.response_headers or []):
            entry.response_headers = extra
        if params.get("type"):
            entry.type = str(params["type"]).lower()[:32]
    elif method == "Network.loadingFinished":
        entry.done(size=params.get("encodedDataLength"), at=at)
    elif method == "Network.loadingFailed":
        entry.done(error=params.get("blockedReason") or params.get("errorText") or "failed", at=at)
