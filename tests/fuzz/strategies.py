"""Hostile values shared by the fuzz tests."""

from hypothesis import strategies as st

# Lone surrogates, both halves, replacement chars, controls, bidi and digits of other scripts.
HOSTILE_CHARS = st.sampled_from(["\ud800", "\udfff", "\udc80", "\ufffd", "\x00", "\r", "\n", "\x1b", "\u202e",
                                 "\u0661", "\uff11", "*", "\\", '"', "\U0001F600", "é"])
hostile_text = st.text(alphabet=st.one_of(st.characters(), HOSTILE_CHARS), max_size=40)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                         st.floats(allow_nan=False, allow_infinity=False), hostile_text)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)), max_leaves=20)


def nested(depth, leaf=1):
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value
