"""A request's JSON for the CLI's every step, without importing `json`.

`import json` pulls in `re` and `enum` and costs about a third of the CLI's imports. A request
is small and made of plain values, so `dumps(value)` writes it here: byte for byte what
`json.dumps(value, separators=(",", ":"))` writes (ASCII only, the same escapes), checked
against it by tests/fuzz/test_wirejson.py. Anything else (a float that is not finite, a type
`json` would reject or convert) is left to `json` itself.
"""

_ESCAPES = {i: f"\\u{i:04x}" for i in (*range(0x20), 0x7F)}  # json escapes all outside " "-"~"
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f",
                 0x0D: "\\r"})
_INFINITY = float("inf")


class _Other(Exception):
    """A value this writer leaves to `json`."""


def _string(text):
    if text.isascii():
        return '"' + text.translate(_ESCAPES) + '"'
    out = []
    for char in text:
        code = ord(char)
        if code < 0x80:
            out.append(_ESCAPES.get(code, char))
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            code -= 0x10000
            out.append(f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}")
    return '"' + "".join(out) + '"'


def _value(value, depth):
    kind = type(value)
    if kind is str:
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return str(value)
    if kind is float:
        if value != value or value in (_INFINITY, -_INFINITY):
            raise _Other
        return repr(value)
    if depth > 64:
        raise _Other
    if kind is dict:
        parts = []
        for key, item in value.items():
            if type(key) is not str:
                raise _Other
            parts.append(_string(key) + ":" + _value(item, depth + 1))
        return "{" + ",".join(parts) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join(_value(item, depth + 1) for item in value) + "]"
    raise _Other


def dumps(value):
    """json.dumps(value, separators=(",", ":")), for the plain values a request holds."""
    try:
        return _value(value, 0)
    except _Other:
        import json

        return json.dumps(value, separators=(",", ":"))
