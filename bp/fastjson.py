"""The broker's JSON: orjson where it gives exactly the standard library's bytes, else `json`.

A 10,000-element observation is about half a megabyte, and the broker encoded it three times
with `json` (the byte budget, the command record, the reply) and decoded its CDP reply once.
orjson does each several times faster, but is not used on the CLI: its import pulls in uuid,
dataclasses, datetime and json itself, several times the cost of `import json`
(tests/bench/bench_json.py prints both).

`compact(value)` is `json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()` byte
for byte, except that NaN and ±Infinity (which `json` writes as the non-JSON NaN/Infinity) are
null. orjson formats some floats differently (1e-05 as 0.00001, 1e+16 as 1e16): an output
that may hold such a number (an exponent, or "0.0000", after a digit run where a value starts)
is made again by `json`, as is anything orjson refuses (lone surrogates, integers beyond 64 bits, non-string
keys). Without orjson installed, everything takes the `json` path: only slower.
"""

import json

try:
    import orjson
except ImportError:  # pragma: no cover - a platform without its wheel
    orjson = None

# Digits all read as "0", so that the checks below are plain substring searches (C speed: a
# regular expression over half a megabyte costs more than json.dumps itself).
_ZEROS = bytes.maketrans(b"123456789", b"0" * 9)
_NUMBER_START = frozenset(b":,[")  # what precedes a number in compact JSON (or nothing)
_NUMBER_CHARS = frozenset(b"0.-")


def _formatted_differently(data):
    """Whether orjson's output may hold a float written unlike `json` writes it: a number with
    an exponent, or below 1e-4 (written 0.0000…). Text in strings may look so too: then the
    answer is yes, and only speed is lost."""
    zeros = data.translate(_ZEROS)
    for text, pattern in ((zeros, b"0e"), (zeros, b"0E"), (data, b"0.0000")):
        at = text.find(pattern)
        while at >= 0:
            start = at
            while start > 0 and zeros[start - 1] in _NUMBER_CHARS:
                start -= 1
            if start == 0 or zeros[start - 1] in _NUMBER_START:
                return True
            at = text.find(pattern, at + 1)
    return False


def _stdlib(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def compact(value):
    """The compact UTF-8 JSON of value; raises UnicodeEncodeError on lone surrogates (as the
    standard library's bytes would), ValueError/TypeError on what is not JSON."""
    if orjson is not None:
        try:
            data = orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            return _stdlib(value)
        if not _formatted_differently(data):
            return data
    return _stdlib(value)


def size_within(value, limit):
    """Whether len(json.dumps(value, ensure_ascii=False).encode()) — the default separators,
    ", " and ": " — is at most limit, encoding with the default separators only when the compact
    form cannot tell: each separator adds one byte to a compact text of more than twice as many."""
    if orjson is not None:
        try:
            if 2 * len(orjson.dumps(value)) <= limit:
                return True
        except (TypeError, orjson.JSONEncodeError):
            pass
    return len(json.dumps(value, ensure_ascii=False).encode()) <= limit


def loads(raw):
    """json.loads(raw); for bytes faster where orjson reads the same (no NaN, no lone surrogates,
    no integer of 19 digits or more)."""
    # orjson reads an integer beyond 64 bits as a float: any run of 19 digits takes the stdlib.
    if orjson is not None and isinstance(raw, bytes) and raw.translate(_ZEROS).find(b"0" * 19) < 0:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)
