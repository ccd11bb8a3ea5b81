"""Issue 37: the CLI writes its requests without importing `json` (bp/wirejson.py) and checks
client keys and request ids without `re` (bp/protocol.py). Both must agree with what they
replace, byte for byte and answer for answer, on anything."""

import json
import re

from hypothesis import given, settings, strategies as st

from bp import protocol, wirejson

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
                      | st.dictionaries(st.text(), inner, max_size=5), max_leaves=30)


@settings(max_examples=600)
@given(values)
def test_a_request_is_written_as_json_writes_it(value):
    assert wirejson.dumps(value) == json.dumps(value, separators=(",", ":"))


@given(st.dictionaries(st.integers() | st.text(), st.text(), max_size=3))
def test_what_json_would_convert_is_left_to_json(value):
    assert wirejson.dumps(value) == json.dumps(value, separators=(",", ":"))


key_text = st.text(alphabet=st.sampled_from("aZ09._:-\n\t é/"), max_size=140) | st.text(max_size=140)


@settings(max_examples=600)
@given(key_text)
def test_client_keys_and_request_ids_are_checked_as_their_patterns_say(text):
    assert protocol.client_key_ok(text) == bool(re.match(r"^[A-Za-z0-9][A-Za-z0-9._:-]{2,127}\Z", text))
    assert protocol.request_id_ok(text) == bool(re.match(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z", text))
    assert protocol.client_key_ok(text) == bool(protocol.CLIENT_KEY_RE.match(text))
