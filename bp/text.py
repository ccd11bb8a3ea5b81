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
