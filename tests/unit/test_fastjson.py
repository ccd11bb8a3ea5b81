"""The broker's JSON (bp/fastjson.py) writes exactly the bytes the standard library wrote, with
orjson where orjson agrees and `json` where it does not, and reads exactly what `json` reads."""

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from bp import fastjson
from broker.server import Broker


def stdlib(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def observation(count, tricky=True):
    """A 10,000-element observation's shape, with text pages put in names and values (now and
    then text that looks like a number orjson writes differently, which takes the exact path)."""
    names = ["Item", "Ünïcödé ✓", "emoji 😀", 'quote " and \\ back', "tab\tnew\nline\r", "\x00\x1f\x7f",
             "\u2028\u2029", "", "日本語のボタン", "Add to cart", "Sign in"]
    odd = ["1e5 sale", "0.00001% off", ",1e5", "[0.00001"] if tricky else ["1e5 sale", "0.00001% off"]
    elements = []
    for ref in range(1, count + 1):
        name = odd[ref // 1000 % len(odd)] if ref % 1000 == 0 else names[ref % len(names)]
        element = {"ref": ref, "role": "button" if ref % 3 else "textbox", "name": f"{name} {ref}"}
        if ref % 7 == 0:
            element["value"] = names[(ref // 7) % len(names)] * 3
        if ref % 11 == 0:
            element["checked"] = True
        elements.append(element)
    return {"ok": True, "title": "Page — ✓", "url": "http://127.0.0.1:8000/p?q=a%20b", "elements": elements,
            "page": {"viewportWidth": 780, "scrollY": 12.5, "scrollPercentY": 33, "ratio": 0.1 + 0.2},
            "truncated": False, "truncationReasons": [], "hints": [{"code": "x", "refs": [1, 2, 3]}]}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30)


@pytest.mark.parametrize("tricky", [False, True])
def test_a_large_observation_encodes_to_the_same_bytes_with_and_without_orjson(tricky, monkeypatch):
    value = observation(10_000, tricky)
    expected = stdlib(value)
    assert fastjson.orjson is not None, "orjson is a dependency of the broker (setup.cfg)"
    # Text that only looks like a number written differently keeps orjson's bytes; ",1e5" in a
    # string is taken for one, and the standard library writes the reply.
    assert fastjson._formatted_differently(fastjson.orjson.dumps(value)) is tricky
    assert fastjson.compact(value) == expected
    monkeypatch.setattr(fastjson, "orjson", None)
    assert fastjson.compact(value) == expected


def test_the_broker_sends_the_bytes_it_sent_before():
    value = observation(500)
    assert Broker.encode(value) == stdlib(value)
    with_surrogate = {"ok": True, "title": "a \ud800 b", "x": 1e-07}
    assert Broker.encode(with_surrogate) == '{"ok":true,"title":"a \ufffd b","x":1e-07}'.encode()


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_any_json_value_encodes_as_the_standard_library_encodes_it(value):
    try:
        expected = stdlib(value)
    except UnicodeEncodeError:  # lone surrogates: both refuse, the caller replaces them
        with pytest.raises(UnicodeEncodeError):
            fastjson.compact(value)
        return
    assert fastjson.compact(value) == expected


@settings(max_examples=200, deadline=None)
@given(JSON, st.integers(min_value=0, max_value=4000))
def test_the_size_bound_answers_as_the_exact_size_does(value, limit):
    try:
        exact = len(json.dumps(value, ensure_ascii=False).encode())
    except UnicodeEncodeError:
        return
    assert fastjson.size_within(value, limit) == (exact <= limit)


@settings(max_examples=300, deadline=None)
@given(JSON | st.floats(), st.booleans())
def test_reading_gives_what_the_standard_library_reads(value, ascii_only):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    expected, got = json.loads(raw), fastjson.loads(raw)
    assert repr(got) == repr(expected) or (isinstance(got, float) and math.isnan(got) and math.isnan(expected))
