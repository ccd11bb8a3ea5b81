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
