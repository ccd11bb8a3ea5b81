"""Traces: per Agent, a bounded in-memory record of every command it ran, for a person to look at.

`bp trace start [--screenshots]` begins one for the caller's key; from then on each command the
broker answers for that key (but the trace commands themselves and the front loop's bookkeeping:
ping, commands, command, cancel) adds one step when its reply is ready: the operation, its
arguments with every secret replaced (an allowlist: a field not known to be harmless is
`[redacted]`), the result code, the evidence (with whatever it holds, `settle` included), hint
codes, the URL and title of the Agent's tab after it, when it started and how long it took. No
page content (observations, read text, eval values) is kept.

Secrets typed during the trace (type/keyboard text, cookie values, header values, credentials,
prompt answers) are kept in memory with the trace only to scrub them out of what the page shows
back (a title "Results for <typed text>", a query string), and go with it.

With --screenshots, a command that reached the browser (its record was dispatched) gets a small
JPEG of the tab after it: captured on the tab's worker after the reply went out (the Agent does
not wait for it; the tab's next command queues behind it), kept in the Agent's private artifact
storage (broker/files/artifacts.py: its quotas, lifetime and release apply), and the trace
never takes the last free slot of the key's artifact count from the Agent's own files.

Bounds: MAX_STEPS steps and MAX_TRACE_BYTES per trace (the oldest steps go first, counted in
`dropped`), MAX_DETAIL_BYTES of evidence and error context per step, MAX_IMAGES thumbnails per
trace (the oldest are released), MAX_TRACES traces in the broker. A trace goes with the key's
other state (`bp disconnect`, the lease's end) or the next `bp trace start`.
"""

import base64
import collections
import logging
import threading
import time
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from bp import fastjson, ops
from bp.errors import BPError

log = logging.getLogger("broker.trace")

MAX_TRACES = 64
MAX_STEPS = 500
MAX_TRACE_BYTES = 1024 * 1024
MAX_DETAIL_BYTES = 8 * 1024
MAX_IMAGES = 100
MAX_SECRETS = 64
MIN_SECRET_CHARS = 3  # shorter typed text is not scrubbed (it would mangle every title)
MAX_TEXT = 512  # a title, a message, a URL in a step
THUMB_WIDTH = 400  # CSS pixels of the viewport are scaled to this width
THUMB_QUALITY = 55
CAPTURE_TIMEOUT_S = 5.0
REDACTED = "[redacted]"

# Operations that are not the Agent's browser work: never traced.
UNTRACED = frozenset({ops.OP_TRACE_START, ops.OP_TRACE_STOP, ops.OP_TRACE_EXPORT}) | frozenset(
    name for name, op in ops.OPS.items() if op.runs == ops.FRONT)

# Argument fields shown as given: numbers, flags, choices, selectors, the Agent's own search
# strings. Anything else is replaced (an unknown or new field included).
SAFE_ARGS = frozenset({
    "ref", "xy", "button", "clickCount", "limit", "clear", "submit", "delay", "key", "direction", "amount", "unit",
    "selector", "to", "toText", "exact", "option", "by", "contains", "index", "targetId", "release", "new", "profile",
    "diff", "grep", "role", "query", "caseSensitive", "wholeWord", "anchor", "attributes", "noShadow", "interval",
    "dialog", "download", "popup", "dialogId", "action", "full", "annotate", "landscape", "id", "reveal", "save",
    "bodies", "type", "pattern", "status", "method", "contentType", "ruleId", "all", "domain", "name", "secure",
    "httpOnly", "sameSite", "expires", "level", "after", "verify", "width", "height", "device", "scale", "mobile",
    "userAgent", "latitude", "longitude", "timezone", "locale", "colorScheme", "offline", "reset", "browser",
    "identify", "refresh", "nth", "commandId", "screenshots", "overwrite", "createOutputDir", "click", "path",
    "file", "url", "headers", "steps", "text", "cmd", "op", "args", "timeoutMs",
})
# Typed into the page or sent as credentials: secret, and scrubbed from what the page shows back.
SECRET_ARGS = {
    ops.OP_TYPE: ("text",), ops.OP_KEYBOARD: ("text",), ops.OP_COOKIE_SET: ("value",),
    ops.OP_AUTH_SET: ("username", "password"), ops.OP_DIALOG: ("promptText",),
}
# `text` is harmless only where it is a condition to wait for, not typed text.
TEXT_IS_SAFE = frozenset({ops.OP_WAIT})
# Error context fields that could carry a value: replaced whatever the code.
SENSITIVE_CONTEXT = frozenset({"value", "text", "expression", "promptText", "password", "username", "cookie",
                               "cookies", "headers", "header", "body", "postData"})


def _now_ms():
    return int(time.time() * 1000)


def _cut(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def clean_url(url):
    """A URL as a trace shows it: no user:password@, query and fragment values replaced (tokens
    travel there), bounded."""
    if not isinstance(url, str) or not url:
        return ""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]

        def masked(text, keep_plain):
            if not text or ("=" not in text and keep_plain):
                return text  # an anchor (#section) says where, not who
            pairs = parse_qsl(text, keep_blank_values=True) if "=" in text else []
            return "&".join(f"{k}=…" for k, _ in pairs) or "…"

        return _cut(urlunsplit((parts.scheme, netloc, parts.path, masked(parts.query, False), masked(parts.fragment, True))), 2048)
    except ValueError:
        return "[unparsable URL]"


def _basename(path):
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def redact_args(op, args, secrets):
    """The arguments as a trace shows them; secret values go to `secrets` (for scrubbing)."""
    out = {}
    secret_fields = SECRET_ARGS.get(op, ())
    for field, value in (args or {}).items():
        if field in secret_fields:
            if isinstance(value, str):
                secrets.append(value)
            out[field] = REDACTED
        elif field == "text" and op not in TEXT_IS_SAFE:
            if isinstance(value, str):
                secrets.append(value)
            out[field] = REDACTED
        elif field not in SAFE_ARGS:
            out[field] = REDACTED
        elif field == "url":
            out[field] = clean_url(value)
        elif field in ("path", "file"):
            out[field] = _cut(_basename(value), 200)  # never the person's directories
        elif field == "headers" and isinstance(value, list):
            rows = []
            for header in value[:64]:
                if isinstance(header, dict):
                    if isinstance(header.get("value"), str):
                        secrets.append(header["value"])
                    rows.append({"name": _cut(header.get("name", ""), 256), "value": REDACTED})
            out[field] = rows
        elif field == "steps" and op == ops.OP_BATCH and isinstance(value, list):
            out[field] = [{"cmd": _cut(step.get("cmd", ""), 64), "op": step.get("op"),
                           "args": redact_args(step.get("op"), step.get("args"), secrets)}
                          for step in value[:64] if isinstance(step, dict)]
        elif isinstance(value, str):
            out[field] = _cut(value)
        elif isinstance(value, (int, float, bool)) or value is None:
            out[field] = value
        elif isinstance(value, list) and all(isinstance(v, (int, float, str)) for v in value):
            out[field] = [v if not isinstance(v, str) else _cut(v, 200) for v in value[:64]]
        else:
            out[field] = REDACTED
    return out


def _size(value):
    try:
        return len(fastjson.compact(value))
    except (TypeError, ValueError, UnicodeEncodeError):
        return MAX_DETAIL_BYTES + 1


def _bounded(value):
    """value, or a note of its size when it is too big to keep."""
    size = _size(value)
    return value if size <= MAX_DETAIL_BYTES else {"omitted": True, "sizeBytes": size}


def _context(context):
    out = {}
    for key, value in list((context or {}).items())[:64]:
        out[key] = REDACTED if key in SENSITIVE_CONTEXT else value
    return out


def outcome_of(reply):
    if reply.get("ok"):
        evidence = reply.get("evidence") or {}
        return "mismatch" if isinstance(evidence, dict) and evidence.get("status") == "mismatch" else "ok"
    return "unknown_outcome" if reply.get("code") == "unknown_outcome" else "failed"


class Trace:
    def __init__(self, key, agent, screenshots):
        self.key = key
        self.agent = agent  # the Agent object: a new Agent for the same key does not inherit it
        self.screenshots = screenshots
        self.recording = True
        self.started_at = _now_ms()
        self.stopped_at = None
        self.steps = collections.deque()  # dicts, oldest first
        self.bytes = 0
        self.dropped = 0
        self.seq = 0
        self.secrets = []  # typed secrets, newest last, bounded
        self.images = collections.OrderedDict()  # seq -> Artifact, oldest first
        self.images_dropped = 0
        self.seen = {}  # raw target -> (url, title) of the latest reply that showed them
        self.lock = threading.Lock()

    def add_secrets(self, values):
        for value in values:
            if len(value) >= MIN_SECRET_CHARS and value not in self.secrets:
                self.secrets.append(value)
        del self.secrets[:-MAX_SECRETS]

    def scrub(self, value):
        """value with every secret of this trace replaced (strings, lists, dicts)."""
        if isinstance(value, str):
            for secret in self.secrets:
                if secret in value:
                    value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def append(self, step):
        with self.lock:
            self.seq += 1
            step["seq"] = self.seq
            size = _size(step)
            step["_size"] = size
            self.steps.append(step)
            self.bytes += size
            while len(self.steps) > MAX_STEPS or (self.bytes > MAX_TRACE_BYTES and len(self.steps) > 1):
                old = self.steps.popleft()
                self.bytes -= old["_size"]
                self.dropped += 1
            return step

    def summary(self):
        with self.lock:
            return {"recording": self.recording, "screenshots": self.screenshots, "steps": len(self.steps),
                    "dropped": self.dropped, "images": len(self.images), "startedAt": self.started_at}


class Traces:
    """Every key's trace. record() is called for each answered command; it costs one dict lookup
    when the key has no trace."""

    def __init__(self, store, agents, browser, workers):
        # Handed by the broker (broker/server.py): the artifact store (the trace's images), the
        # Agents, the browser and the tab workers (for a step's tab and thumbnail).
        self.store, self.agents, self.browser, self.workers = store, agents, browser, workers
        self._traces = {}  # key -> Trace
        self._lock = threading.Lock()

    # --- control ----------------------------------------------------------------------------

    def start(self, agent, screenshots):
        with self._lock:
            old = self._traces.pop(agent.key, None)
            if old is None and len(self._traces) >= MAX_TRACES:
                raise BPError("quota_exceeded", f"Too many traces at once (limit {MAX_TRACES}); stop and export others.",
                              context={"limit": "traces", "max": MAX_TRACES})
            trace = self._traces[agent.key] = Trace(agent.key, agent, screenshots)
        discarded = 0
        if old is not None:
            discarded = len(old.steps)
            self._release_images(old)
        return trace, discarded

    def get(self, key, agent=None):
        with self._lock:
            trace = self._traces.get(key)
        if trace is not None and agent is not None and trace.agent is not agent:
            self.release_key(key)  # an earlier Agent's (its lease ended): not this one's
            return None
        return trace

    def release_key(self, key):
        with self._lock:
            trace = self._traces.pop(key, None)
        if trace is not None:
            self._release_images(trace)

    def _release_images(self, trace):
        store = self.store
        with trace.lock:
            items, trace.images = list(trace.images.values()), collections.OrderedDict()
        for item in items:
            store.release(item)

    # --- recording --------------------------------------------------------------------------

    def record(self, request, reply):
        """One step for an answered command of a key that is tracing (any thread)."""
        if not self._traces or request.op in UNTRACED or request.batched:
            return  # a batch's steps are in the batch's own step (a denied one too)
        trace = self._traces.get(request.client)
        if trace is None or not trace.recording:
            return
        try:
            self._record(trace, request, reply)
        except Exception:  # a trace must never change or delay an answer
            log.exception("could not trace %s", request.op)

    def _record(self, trace, request, reply):
        secrets = []
        args = redact_args(request.op, request.args, secrets)
        trace.add_secrets(secrets)
        outcome = outcome_of(reply)
        step = {"op": request.op, "args": args, "ok": bool(reply.get("ok")), "outcome": outcome,
                "startedAt": _now_ms() - int((time.monotonic() - request.received_at) * 1000),
                "durationMs": round((time.monotonic() - request.received_at) * 1000, 1)}
        if request.command_id:
            step["commandId"] = request.command_id
        if not reply.get("ok"):
            step["code"] = reply.get("code")
            step["message"] = _cut(reply.get("error") or "")
            if reply.get("context"):
                step["context"] = _bounded(_context(reply["context"]))
        evidence = reply.get("evidence")
        if evidence is None and not reply.get("ok"):
            evidence = (reply.get("context") or {}).get("evidence")  # unknown_outcome carries it there
        if isinstance(evidence, dict):
            step["evidence"] = _bounded(evidence)
        # What the command waited for after it acted: in its evidence (an action) or beside it (open).
        settle = evidence.get("settle") if isinstance(evidence, dict) and "settle" in evidence else reply.get("settle")
        if settle is not None:
            step["settle"] = _bounded(settle)
        hints = [h.get("code") for h in reply.get("hints") or () if isinstance(h, dict)]
        if hints:
            step["hints"] = hints[:16]
        if isinstance(reply.get("dialog"), dict):
            step["dialog"] = reply["dialog"].get("type")
        counts = {k: len(v) for k, v in reply.items() if isinstance(v, list) and k not in ("hints", "truncationReasons")}
        if counts:
            step["counts"] = counts
        if request.op == ops.OP_BATCH and isinstance(reply.get("steps"), list):
            step["batch"] = [_bounded({"cmd": _cut(e.get("cmd", ""), 64), "ok": bool(e.get("ok")),
                                       **({"code": (e.get("error") or {}).get("code")} if not e.get("ok") else {}),
                                       **({"evidence": e["evidence"]} if isinstance(e.get("evidence"), dict) else {})})
                             for e in reply["steps"][:64] if isinstance(e, dict)]
        url, title, raw = self._where(trace, request, reply)
        step["url"], step["title"] = clean_url(url), _cut(title or "")
        step = trace.scrub(step)
        acted = request.record is not None and request.record.dispatched_at is not None
        if trace.screenshots and acted and raw is not None:
            step["image"] = "pending"
            trace.append(step)
            request.after_reply.append(lambda: self._capture(trace, step, raw))
        else:
            trace.append(step)

    def _where(self, trace, request, reply):
        """(url, title, raw target) of the Agent's tab after the command: the reply's own (a fresh
        observation) where it has them, else what this trace last saw of the tab while it still
        shows that URL, else the target table's (whose title can lag behind the page)."""
        agent = self.agents.get(request.client)
        raw = agent.selected if agent is not None else None
        url, title = reply.get("url"), reply.get("title")
        if isinstance(url, str) and isinstance(title, str):
            if raw is not None:
                trace.seen.pop(raw, None)
                trace.seen[raw] = (url, title)
                while len(trace.seen) > 64:
                    trace.seen.pop(next(iter(trace.seen)))
            return url, title, raw
        if raw is None:
            return "", "", None
        info = self.browser.targets.info(raw) or {}
        seen = trace.seen.get(raw)
        if seen is not None and seen[0] == info.get("url", seen[0]):
            return seen[0], seen[1], raw
        return info.get("url") or "", info.get("title") or "", raw

    # --- screenshots ------------------------------------------------------------------------

    def _capture(self, trace, step, raw):
        """After the reply: a small JPEG of the tab, on its worker (behind nothing the Agent asked
        for yet), into the Agent's private storage."""
        note = None
        began = time.monotonic()
        try:
            data = self.workers.run(raw, lambda worker: _thumbnail(worker), timeout_s=CAPTURE_TIMEOUT_S)
            step["imageMs"] = round((time.monotonic() - began) * 1000, 1)  # the tab's time spent on it
            if isinstance(data, str):
                note, data = data, None
            if data is not None:
                item = self._store(trace, data)
                if item is None:
                    note = "storage_full"
                else:
                    with trace.lock:
                        trace.images[step["seq"]] = item
                        step["image"] = item.id
                        while len(trace.images) > MAX_IMAGES:
                            _, old = trace.images.popitem(last=False)
                            self.store.release(old)
                            trace.images_dropped += 1
        except BPError as exc:
            note = exc.code
        except Exception:
            log.exception("trace screenshot failed")
            note = "internal_error"
        if note is not None:
            with trace.lock:
                step["image"] = None
                step["imageNote"] = note

    def _store(self, trace, data):
        from broker.files import artifacts

        store = self.store
        with store.lock:
            mine = sum(1 for a in store.items.values() if a.key == trace.key)
        if mine >= artifacts.MAX_ITEMS_PER_KEY - 1:
            # Never push out the Agent's own files (an upload Chrome still reads): our oldest go.
            with trace.lock:
                oldest = trace.images.popitem(last=False)[1] if trace.images else None
            if oldest is None:
                return None
            store.release(oldest)
        try:
            return store.put_bytes(trace.agent, "trace", data, "image/jpeg")
        except BPError as exc:
            if exc.code == "quota_exceeded":
                return None
            raise


def _thumbnail(worker):
    """JPEG bytes of the tab's viewport scaled to THUMB_WIDTH, or a note why there is none."""
    from broker.files import media

    session = worker.session
    if session is None or not session.alive:
        return "no_session"
    if session.dialog_open():
        return "dialog_open"  # the page is blocked; a capture would wait for a frame that never comes
    metrics = session.call("Page.getLayoutMetrics", timeout_s=CAPTURE_TIMEOUT_S)
    view = metrics.get("cssVisualViewport") or metrics.get("visualViewport") or {}
    width, height = view.get("clientWidth") or 0, view.get("clientHeight") or 0
    if width < 1 or height < 1:
        return "no_layout"
    params = {"format": "jpeg", "quality": THUMB_QUALITY, "fromSurface": True,
              "clip": {"x": view.get("pageX", 0), "y": view.get("pageY", 0), "width": width, "height": height,
                       "scale": min(1.0, THUMB_WIDTH / width)}}
    reply = media._capture(session, params, CAPTURE_TIMEOUT_S)
    data = base64.b64decode((reply or {}).get("data") or "")
    return data or "no_image"
