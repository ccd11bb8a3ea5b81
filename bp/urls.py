"""URLs an Agent may open: http(s), about:, file: and data: — never javascript: or browser pages."""

import re
from urllib.parse import urlsplit

from bp.errors import invalid_argument

MAX_URL_CHARS = 8192
ALLOWED_SCHEMES = ("http", "https", "about", "file", "data")
_BAD_HOST = re.compile(r'[\s\\<>^{|}"`]')  # never in a host; Chrome refuses them ('bp open \')
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(.*)$", re.S)


def normalize(url):
    """The URL to open, `https://` added when there is no scheme; invalid_argument otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise invalid_argument("url", "Give a URL to open.")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise invalid_argument("url", f"The URL is longer than {MAX_URL_CHARS} characters.")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in url):
        raise invalid_argument("url", "The URL contains control characters.")
    match = _SCHEME.match(url)
    host_port = match and re.match(r"^[0-9]+(/|$|\?|#)", match.group(2))  # "localhost:8080/x" has no scheme
    if not match or host_port:
        url = "https://" + url
        match = _SCHEME.match(url)
    assert match is not None  # "https:" and anything after it is a scheme and a rest
    scheme = match.group(1).lower()
    if scheme not in ALLOWED_SCHEMES:
        raise invalid_argument("url", f"Browser Pilot does not open {scheme}: URLs.", scheme=scheme[:32])
    if scheme in ("http", "https"):
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError:
            raise invalid_argument("url", "The URL is malformed.") from None
        if not parts.hostname or _BAD_HOST.search(parts.netloc):
            raise invalid_argument("url", "The URL has no valid host.")
    return url


# --- hosts as the browser reads them (WHATWG URL host parsing), for the person's bounds ----------

SPECIAL_SCHEMES = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}
# Code points the URL standard forbids in a domain (after percent-decoding and IDNA).
_FORBIDDEN_DOMAIN = frozenset("\x00\t\n\r #/:<>?@[\\]^|%\x7f")
_C0_SPACE = "".join(chr(c) for c in range(0x21))


def _ipv4_number(part):
    """The number a dotted part stands for (decimal, 0x hex, 0 octal), or None."""
    if not part:
        return None
    base = 10
    if part[:2] in ("0x", "0X"):
        part, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        part, base = part[1:], 8
    if part == "":
        return 0
    digits = {8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}[base]
    return int(part, base) if all(c in digits for c in part) else None


def _ends_in_number(host):
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    if last and all(c in "0123456789" for c in last):
        return True
    return _ipv4_number(last) is not None and last[:2].lower() == "0x"


def _ipv4(host):
    """The dotted-decimal address a host ending in a number stands for, or None (invalid)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]  # one trailing dot is allowed in an IPv4 host
    if len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return None
        numbers.append(number)
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return ".".join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def canonical_host(host):
    """The host as the browser resolves it, for matching against the person's bounds; None when
    the browser would refuse it.

    WHATWG host parsing (percent-decoding, IDNA to ASCII, lower case, IPv4 in decimal, hex or
    octal parts written as four decimal bytes, IPv6 compressed) plus two identities the
    standard keeps apart but the network does not: a trailing dot (`bank.example.com.` is the
    same DNS name) and an IPv4-mapped IPv6 literal (`[::ffff:127.0.0.1]` reaches 127.0.0.1).
    An IPv6 literal is returned in brackets."""
    import ipaddress
    from urllib.parse import unquote

    if not isinstance(host, str) or not host:
        return None
    if host.startswith("["):
        if not host.endswith("]"):
            return None
        try:
            address = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return f"[{address.compressed}]"
    try:
        domain = unquote(host, errors="strict")
    except UnicodeDecodeError:
        return None
    try:
        # Python's codec is IDNA 2003 (the browser's UTS #46 differs only for a few deviation
        # characters such as ß and ς); it lower-cases and maps full-width dots as well.
        ascii_host = domain.encode("idna").decode("ascii").lower() if not domain.isascii() else domain.lower()
    except UnicodeError:
        return None
    if not ascii_host or any(c in _FORBIDDEN_DOMAIN or ord(c) < 0x20 for c in ascii_host):
        return None
    if _ends_in_number(ascii_host):
        return _ipv4(ascii_host)
    if ascii_host.endswith("."):
        ascii_host = ascii_host[:-1]
    return ascii_host or None


def split_origin(url):
    """(scheme, canonical host, port) of a URL as the browser parses it: leading and trailing
    spaces and controls and any tab or newline are dropped; in http(s)/ws(s)/ftp/file URLs
    backslashes count as slashes and user info is skipped. Host None for URLs without one
    (about:, data:, blob:, javascript:); scheme "invalid" when the browser would refuse it."""
    text = str(url).strip(_C0_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    colon = text.find(":")
    if colon <= 0 or not text[0].isascii() or not text[0].isalpha() \
            or any(not (c.isascii() and (c.isalnum() or c in "+-.")) for c in text[:colon]):
        return ("invalid", None, None)
    scheme = text[:colon].lower()
    rest = text[colon + 1:]
    if scheme == "blob":
        inner = split_origin(rest)  # a blob: URL has the origin of the URL it was made under
        return inner if inner[1] is not None else ("blob", None, None)
    if scheme == "file":
        if rest[:2] not in ("//", "\\\\", "/\\", "\\/"):
            return (scheme, None, None)
        rest = rest[2:]
        end = min([i for i in (rest.find(c) for c in "/\\?#") if i >= 0], default=len(rest))
    elif scheme not in SPECIAL_SCHEMES:
        if not rest.startswith("//"):
            return (scheme, None, None)
        rest = rest[2:]
        end = min([i for i in (rest.find(c) for c in "/?#") if i >= 0], default=len(rest))
    else:
        rest = rest.lstrip("/\\")
        end = min([i for i in (rest.find(c) for c in "/\\?#") if i >= 0], default=len(rest))
    authority = rest[:end]
    authority = authority[authority.rfind("@") + 1:]
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return ("invalid", None, None)
        raw_host, port_text = authority[:close + 1], authority[close + 1:]
        if port_text and not port_text.startswith(":"):
            return ("invalid", None, None)
        port_text = port_text[1:]
    else:
        raw_host, _, port_text = authority.partition(":")
    default = SPECIAL_SCHEMES.get(scheme)
    if port_text:
        if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
            return ("invalid", None, None)
        port = int(port_text)
    else:
        port = default
    if scheme == "file" and raw_host in ("", "localhost"):
        return (scheme, None, None)  # file:///path: a local file, no host
    if not raw_host:
        return ("invalid", None, None) if scheme in SPECIAL_SCHEMES else (scheme, None, None)
    host = canonical_host(raw_host) if scheme in SPECIAL_SCHEMES or raw_host.startswith("[") else raw_host.lower()
    if host is None:
        return ("invalid", None, None)
    return (scheme, host, port)
