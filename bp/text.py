"""Text from outside (page text, argv, raw requests) made safe to encode.

A Python string may hold lone surrogates: JSON `"\\ud800"` escapes, `surrogateescape`d argv
bytes, a page's `'a \\ud800 b'`. They cannot be encoded as UTF-8, so each boundary replaces them
with U+FFFD (a valid surrogate pair is already one code point in a Python string).
"""

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean(text):
    """`text` with every lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text) if _SURROGATE.search(text) else text


def clean_argv(args):
    """Command-line arguments with undecodable bytes (surrogate-escaped by Python) replaced."""
    return [clean(arg) for arg in args]


# A JSON text that may decode to lone surrogates: a \uD800-\uDFFF escape, or their raw
# (CESU-style) bytes, which json.loads of bytes lets through.
_MAY_HOLD_SURROGATES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def clean_data(value):
    """`value` (decoded JSON) with lone surrogates replaced in every string and key, in place;
    iterative, so a deep page value cannot exhaust the stack."""
    if isinstance(value, str):
        return clean(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = clean(item)
                elif isinstance(item, (list, dict)):
                    stack.append(item)
        elif isinstance(node, dict):
            for key in list(node):
                item = node[key]
                if _SURROGATE.search(key):
                    del node[key]
                    key = clean(key)
                if isinstance(item, str):
                    item = clean(item)
                elif isinstance(item, (list, dict)):
                    stack.append(item)
                node[key] = item
    return value


def loads(raw):
    """json.loads of text from outside (a CDP reply, say) whose strings are safe to encode."""
    from bp import fastjson  # the broker's decoder: orjson where it reads the same

    value = fastjson.loads(raw)
    probe = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    return clean_data(value) if _MAY_HOLD_SURROGATES.search(probe) else value
