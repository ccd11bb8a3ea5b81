"""Host spellings (issue 27 item 1d): every way of writing a host the browser reads as the same
address is read as that address by the person's bounds (bp/urls.py canonical_host), so a block
list cannot be stepped around by spelling, and nothing the browser would read as another host
is folded into a blocked one.

The spellings are the URL standard's: IPv4 as 1-4 parts in decimal, 0x hex or 0-prefixed octal
(the last part filling the remaining bytes), an IPv4-mapped IPv6 literal in any IPv6 form, a
trailing dot, any case, percent-encoded letters and Unicode (IDNA) names. Whether Chrome itself
reads them so is checked on a real browser in tests/e2e/test_containment.py."""

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from bp import policy, urls

ADDRESSES = st.integers(min_value=0, max_value=2 ** 32 - 1)


def _dotted(value):
    return str(ipaddress.IPv4Address(value))


def _part(number, style):
    if style == "hex":
        return hex(number)
    if style == "HEX":
        return "0X" + format(number, "X")
    if style == "octal":
        return "0" + format(number, "o")
    return str(number)


@st.composite
def ipv4_spellings(draw):
    """(address as an int, one spelling of it)."""
    value = draw(ADDRESSES)
    count = draw(st.integers(min_value=1, max_value=4))
    octets = list(ipaddress.IPv4Address(value).packed)
    head = octets[:count - 1]
    tail = int.from_bytes(bytes(octets[count - 1:]), "big")
    styles = draw(st.lists(st.sampled_from(["dec", "hex", "HEX", "octal"]), min_size=count, max_size=count))
    text = ".".join(_part(n, s) for n, s in zip(head + [tail], styles))
    if draw(st.booleans()):
        text += "."
    return value, text


@st.composite
def mapped_ipv6_spellings(draw):
    value = draw(ADDRESSES)
    mapped = ipaddress.IPv6Address("::ffff:" + _dotted(value))
    form = draw(st.sampled_from(["compressed", "exploded", "dotted", "upper"]))
    if form == "dotted":
        text = "::ffff:" + _dotted(value)
    elif form == "exploded":
        text = mapped.exploded
    else:
        text = mapped.compressed
    return value, "[" + (text.upper() if form == "upper" else text) + "]"


LABELS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12).filter(
    lambda s: not s.startswith("-") and not s.endswith("-") and not s.isdigit() and not s.startswith("xn--")
    and s[2:4] != "--")
NAMES = st.lists(LABELS, min_size=1, max_size=4).map(".".join).filter(lambda s: not s.split(".")[-1][0].isdigit())


@settings(max_examples=300)
@given(ipv4_spellings())
def test_every_ipv4_spelling_reads_as_its_address(spelled):
    value, text = spelled
    assert urls.canonical_host(text) == _dotted(value), text
    assert urls.split_origin(f"http://{text}:8080/x") == ("http", _dotted(value), 8080)


@settings(max_examples=200)
@given(mapped_ipv6_spellings())
def test_ipv4_mapped_ipv6_reads_as_the_ipv4_address(spelled):
    value, text = spelled
    assert urls.canonical_host(text) == _dotted(value), text


@settings(max_examples=200)
@given(NAMES, st.data())
def test_case_trailing_dot_and_percent_encoding_read_as_the_name(name, data):
    spelled = "".join(c.upper() if data.draw(st.booleans()) else c for c in name)
    if data.draw(st.booleans()):
        spelled = "".join(f"%{ord(c):02X}" if c.isalpha() and data.draw(st.booleans()) else c for c in spelled)
    if data.draw(st.booleans()):
        spelled += "."
    assert urls.canonical_host(spelled) == name, spelled


@settings(max_examples=200)
@given(st.one_of(ipv4_spellings(), mapped_ipv6_spellings()), st.sampled_from(["http", "https", "ws", "wss"]))
def test_a_blocked_address_is_blocked_under_every_spelling(spelled, scheme):
    value, text = spelled
    port_scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    rules = policy.Policy(policy.validate({"version": 1, "origins": {
        "block": [f"{port_scheme}://{_dotted(value)}:*", f"{scheme}://{_dotted(value)}:*"]}}))
    assert not rules.url_allowed(f"{scheme}://{text}:4321/path"), text
    other = _dotted((value + 1) % 2 ** 32)
    assert rules.url_allowed(f"{scheme}://{other}:4321/path")  # another address is not folded in


@settings(max_examples=150)
@given(NAMES, st.booleans())
def test_patterns_are_read_like_urls(name, trailing):
    """A pattern written with a trailing dot or in upper case means the same host; a Unicode
    name in a pattern matches the browser's punycode."""
    written = name.upper() + ("." if trailing else "")
    rules = policy.Policy(policy.validate({"version": 1, "origins": {"allow": [f"https://{written}"]}}))
    assert rules.url_allowed(f"https://{name}./")
    assert rules.url_allowed(f"https://{name}/")
    assert not rules.url_allowed(f"https://x{name}/")


@settings(max_examples=100)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:.[]%@/\\#?x-\u00fc\u3002\uff0e", max_size=40))
def test_split_origin_never_raises(text):
    scheme, host, port = urls.split_origin("http://" + text)
    assert scheme in ("http", "invalid")
    assert host is None or (host and host == host.lower())
    assert port is None or 0 <= port <= 65535
