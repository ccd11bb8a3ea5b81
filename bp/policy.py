"""The person's launch-time policy (BR-22): which operations Agents may not run, and where their
tabs may go. Read once, when the broker starts; nothing an Agent sends can change it.

BROWSER_PILOT_POLICY (an absolute path) or <home>/policy.json, held to the private-file rules
(regular file, ours, 0600, no symlink). Absent means everything is allowed, as the spec says; a
file that is there but cannot be read or understood stops the service (fail closed): the error
is `unsafe_state` (the file itself) or `invalid_argument` with the field. Format: docs/policy.md.

Stdlib only: `bp connect` imports this on its error path.
"""

import hashlib
import json
import os
import re

from bp import globs, ops, paths
from bp.errors import BPError, invalid_argument, remediation

ENV = "BROWSER_PILOT_POLICY"
FILE_NAME = "policy.json"
MAX_BYTES = 64 * 1024
MAX_ENTRIES = 256
VERSION = 1
# Liveness, not an operation of the Agent: the CLI pings before every long command.
EXEMPT = frozenset({ops.OP_PING})
DENIED_MESSAGE = "The person's policy forbids it: this Browser Pilot service was started with a policy that removes it."
_ORIGIN_RE = re.compile(r"^([a-z][a-z0-9+.-]*)://(\[[0-9a-f:.]+\]|[^/:?#@\s\[\]]+)(?::(\*|[0-9]{1,5}))?$")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_SOCKET_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


def path_for(home_dir):
    """(path, source): the env variable's absolute path, else <home>/policy.json."""
    value = os.environ.get(ENV)
    if value is not None:
        if not value or not os.path.isabs(value):
            raise invalid_argument(ENV, f"{ENV} must be an absolute path.", value=value[:256])
        return os.path.normpath(value), "env"
    return os.path.join(home_dir, FILE_NAME), "home"


class OriginPattern:
    """`scheme://host[:port]`: `*` stands for one host label, or (as the port) for any port; no
    port means the scheme's default port. The host is read the way the browser reads it
    (bp/urls.py canonical_host: IDNA, case, a trailing dot, IPv4 spellings, IPv6 literals in
    brackets, IPv4-mapped IPv6 as the IPv4 address), and so is every URL it is matched against."""

    __slots__ = ("text", "scheme", "labels", "port")

    def __init__(self, text, field):
        if not isinstance(text, str) or len(text) > 512:
            raise invalid_argument(field, "An origin pattern is a string like https://*.example.com or http://127.0.0.1:*.")
        m = _ORIGIN_RE.match(text.strip().lower())
        if not m:
            raise invalid_argument(field, f"Not an origin pattern (scheme://host[:port]): {text[:128]!r}.")
        self.text = text
        self.scheme, host, port = m.group(1), m.group(2), m.group(3)
        self.labels = _pattern_labels(host, text, field)
        if port is None:
            self.port = _DEFAULT_PORTS.get(self.scheme)
        elif port == "*":
            self.port = "*"
        else:
            self.port = int(port)
            if not 0 < self.port < 65536:
                raise invalid_argument(field, f"Port out of range in {text[:128]!r}.")

    def __call__(self, parsed):
        scheme, host, port = parsed
        if scheme != self.scheme or host is None:
            return False
        labels = [host] if host.startswith("[") else host.split(".")
        if len(labels) != len(self.labels):
            return False
        if any(p != "*" and p != h for p, h in zip(self.labels, labels)):
            return False
        return self.port == "*" or self.port == port


    def socket_patterns(self):
        """URLPattern strings (the syntax of CDP's Network.emulateNetworkConditionsByRule) for the
        WebSocket URLs of this origin: ws:// for http, wss:// for https (a WebSocket's origin
        is its page's scheme). The URL parser keeps two spellings apart that reach the same
        host, so each comes with its twin: a trailing dot, and an IPv4 address written as an
        IPv4-mapped IPv6 literal. A `*` label is a named group: exactly one label."""
        scheme = _SOCKET_SCHEMES.get(self.scheme)
        if scheme is None:
            return []
        port = "*" if self.port == "*" else str(self.port)
        hosts = [".".join(f":h{i}" if label == "*" else label for i, label in enumerate(self.labels))]
        if hosts[0].startswith("["):
            hosts[0] = hosts[0].replace(":", "\\:")  # `:` opens a named group in a URLPattern
        elif all(label.isdigit() for label in self.labels) and len(self.labels) == 4:
            import ipaddress

            mapped = ipaddress.IPv6Address("::ffff:" + hosts[0]).compressed
            hosts.append(f"[{mapped}]".replace(":", "\\:"))
        else:
            hosts.append(hosts[0] + ".")
        return [f"{scheme}://{host}:{port}/*" for host in hosts]


def _pattern_labels(host, text, field):
    """The pattern's host labels, canonical like a URL's host; `*` labels kept as they are."""
    from bp import urls

    if host.endswith(".") and host != ".":
        host = host[:-1]  # `bank.example.com.` is `bank.example.com`
    labels = host.split(".")
    if any(not label for label in labels) or any("*" in label and label != "*" for label in labels):
        raise invalid_argument(field, f"In {text[:128]!r}, '*' stands for a whole host label.")
    if "*" not in labels:
        canonical = urls.canonical_host(host)
        if canonical is None:
            raise invalid_argument(field, f"Not a host the browser accepts in {text[:128]!r}.")
        return [canonical] if canonical.startswith("[") else canonical.split(".")
    out = []
    for label in labels:
        canonical = label if label == "*" else urls.canonical_host(label)
        if canonical is None or canonical.startswith("[") or (label != "*" and "." in canonical):
            raise invalid_argument(field, f"Not a host the browser accepts in {text[:128]!r}.")
        out.append(canonical)
    return out


def parse_origin(url):
    """(scheme, canonical host, effective port) of a URL as the browser parses it (bp/urls.py
    split_origin); host None when it has none (about:, data:); scheme "invalid" when the
    browser would refuse the URL."""
    from bp import urls

    return urls.split_origin(url)


def origin_of(url):
    """The origin of a URL as text (scheme://host[:port]), for evidence and the audit journal;
    never the path, query or credentials."""
    scheme, host, port = parse_origin(url)
    if host is None:
        return f"{scheme}:" if scheme else "null"
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


class Policy:
    """What is in force. `Policy.none()` allows everything."""

    def __init__(self, data=None, path=None, source="none", digest=None):
        self.data = data
        self.path = path
        self.source = source
        self.digest = digest
        data = data or {}
        self.deny = frozenset(data.get("deny", ()))
        self.keys = [(globs.matcher(pattern, f"keys.{pattern}"), frozenset(entry.get("deny", ())))
                     for pattern, entry in (data.get("keys") or {}).items()]
        origins = data.get("origins") or {}
        self.allow = [OriginPattern(p, "origins.allow") for p in origins.get("allow", ())] if "allow" in origins else None
        self.block = [OriginPattern(p, "origins.block") for p in origins.get("block", ())]
        self.subresources = bool(origins.get("subresources", False))
        self._denied = {}  # (key, op) -> capability or None, memoised (keys are bounded by the broker)

    @classmethod
    def none(cls):
        return cls()

    @property
    def in_force(self):
        return self.data is not None

    @property
    def bounds(self):
        """Whether navigation bounds apply at all."""
        return self.allow is not None or bool(self.block)

    def denied(self, key, op):
        """The capability or operation name that denies `op` for `key`, or None."""
        if not self.in_force or op in EXEMPT:
            return None
        found = self._denied.get((key, op), False)
        if found is not False:
            return found
        declared = ops.OPS[op]
        lists = [self.deny] + [deny for match, deny in self.keys if match(key)]
        found = None
        for deny in lists:
            if declared.capability in deny:
                found = declared.capability
                break
            if op in deny:
                found = op
                break
        if len(self._denied) < 65536:
            self._denied[(key, op)] = found
        return found

    def capability_withheld(self, key, capability):
        """The name that withholds `capability` from `key`: the capability itself or any one
        operation that needs it (denying `click` alone withholds input as much as denying
        `action.input`), or None. What another capability could be used to get back
        (docs/policy.md, "One capability does not unlock another")."""
        for op, declared in ops.OPS.items():
            if declared.capability == capability:
                found = self.denied(key, op)
                if found is not None:
                    return found
        return None

    def url_allowed(self, url):
        """Whether a top-level navigation to `url` stays within the bounds. about:blank and
        about:srcdoc never leave the browser, so they are always allowed."""
        if not self.bounds:
            return True
        text = str(url)
        if text.lower().startswith("about:"):
            return True
        parsed = parse_origin(text)
        if parsed[0] == "invalid":
            return False  # what we cannot read the way the browser does is not let through
        if any(p(parsed) for p in self.block):
            return False
        return self.allow is None or any(p(parsed) for p in self.allow)

    def describe(self):
        """What `bp policy`, `bp status` and `bp doctor` show."""
        if not self.in_force:
            return {"inForce": False, "path": self.path, "source": self.source,
                    "default": "every operation allowed, no navigation bounds"}
        return {"inForce": True, "path": self.path, "source": self.source, "digest": self.digest}


def capability_denied(op, capability_or_name, **context):
    declared = ops.OPS[op]
    return BPError("capability_denied", f"The person's policy forbids {op!r} ({declared.capability}).",
                   context={"capability": declared.capability, "operation": op, "deniedBy": capability_or_name,
                            **context},
                   remediation=remediation("policy_forbids", action_required=True, message=DENIED_MESSAGE))


def navigation_denied(op, url, **context):
    declared = ops.OPS[op]
    return BPError("capability_denied", "The person's policy does not allow this origin.",
                   context={"capability": declared.capability, "operation": op, "origin": origin_of(url),
                            "reason": "navigation_blocked", **context},
                   remediation=remediation("policy_forbids", action_required=True,
                                           message="The person's policy forbids navigating to this origin."))


# Bodies the browser never runs as script, whatever the URL is used for (every net mock also carries
# X-Content-Type-Options: nosniff, so a script element refuses them instead of sniffing).
INERT_TYPES = ("text/plain", "text/css", "text/csv", "application/json", "application/octet-stream",
               "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp", "image/x-icon",
               "image/vnd.microsoft.icon", "font/", "audio/", "video/")
SCRIPT_GUARDS = ("developer.eval", "action.input")  # what a page of the Agent's own script could do


def script_capable(content_type):
    """Whether a mock of this Content-Type could run script in the page (HTML, SVG, XML,
    JavaScript, PDF, anything not known to be inert). No type given means text/plain."""
    kind = (content_type or "text/plain").split(";", 1)[0].strip().lower()
    return not any(kind == t or (t.endswith("/") and kind.startswith(t)) for t in INERT_TYPES)


def implied_denied(op, capability, denied_by, **context):
    """capability_denied for an operation allowed in itself that would hand back a capability
    the policy withholds (a net mock serving script while eval or input is denied)."""
    return BPError("capability_denied", f"The person's policy withholds {capability}, and {op!r} could be used to "
                                        "get it back this way.",
                   context={"capability": capability, "operation": op, "deniedBy": denied_by, **context},
                   remediation=remediation("policy_forbids", action_required=True, message=DENIED_MESSAGE))


def _names(value, field):
    if not isinstance(value, list) or len(value) > MAX_ENTRIES:
        raise invalid_argument(field, f"{field} is a list of at most {MAX_ENTRIES} capability or operation names.")
    for i, name in enumerate(value):
        if not isinstance(name, str) or (name not in ops.CAPABILITIES and name not in ops.OPS):
            shown = name[:64] if isinstance(name, str) else type(name).__name__
            raise invalid_argument(f"{field}[{i}]", f"Unknown capability or operation name {shown!r} "
                                                    "(the names in bp/ops.py; see docs/policy.md).")
    return value


def validate(data):
    """invalid_argument naming the field unless `data` is a policy this version understands."""
    if not isinstance(data, dict):
        raise invalid_argument("policy", "A policy is a JSON object.")
    unknown = sorted(set(data) - {"version", "deny", "keys", "origins"})
    if unknown:
        raise invalid_argument(unknown[0][:64], f"Unknown policy key {unknown[0][:64]!r}.")
    if data.get("version") != VERSION:
        raise invalid_argument("version", f"The policy's version must be {VERSION}.")
    _names(data.get("deny", []), "deny")
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or len(keys) > MAX_ENTRIES:
        raise invalid_argument("keys", f"keys maps at most {MAX_ENTRIES} client-key patterns to {{\"deny\": [...]}}.")
    for pattern, entry in keys.items():
        field = f"keys.{pattern[:64]}"
        if not pattern or len(pattern) > 256:
            raise invalid_argument(field, "A client-key pattern is 1-256 characters.")
        if not isinstance(entry, dict) or set(entry) - {"deny"}:
            raise invalid_argument(field, "A key pattern maps to {\"deny\": [...]} (it adds to the global deny, "
                                          "never removes from it).")
        _names(entry.get("deny", []), f"{field}.deny")
    origins = data.get("origins", {})
    if not isinstance(origins, dict) or set(origins) - {"allow", "block", "subresources"}:
        raise invalid_argument("origins", "origins holds allow, block and subresources only.")
    for name in ("allow", "block"):
        if name in origins:
            value = origins[name]
            if not isinstance(value, list) or len(value) > MAX_ENTRIES:
                raise invalid_argument(f"origins.{name}", f"origins.{name} is a list of at most {MAX_ENTRIES} patterns.")
            for i, pattern in enumerate(value):
                OriginPattern(pattern, f"origins.{name}[{i}]")
    if not isinstance(origins.get("subresources", False), bool):
        raise invalid_argument("origins.subresources", "origins.subresources is true or false.")
    return data


def load(home_dir):
    """The policy in force for this home. Raises (never "no policy") when the file is there but
    unsafe or invalid."""
    path, source = path_for(home_dir)
    raw = paths.read_private_file(path, max_bytes=MAX_BYTES)
    if raw is None:
        if source == "env":
            # The person named a file: its absence is a mistake, not "allow everything".
            raise BPError("invalid_argument", f"{ENV} names a file that does not exist.",
                          context={"field": ENV, "path": path})
        return Policy(None, path, "none")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise invalid_argument("policy", "The policy file is not valid UTF-8 JSON.", path=path) from None
    try:
        validate(data)
    except BPError as exc:
        exc.context = dict(exc.context or {}, path=path)
        raise
    return Policy(data, path, source, "sha256:" + hashlib.sha256(raw).hexdigest())
