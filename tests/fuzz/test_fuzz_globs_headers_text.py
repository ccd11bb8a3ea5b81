"""The glob matcher (same answers as a full-match glob; work bounded by construction), header
validation (nothing accepted can split a header), and the text boundary (anything decoded
from outside encodes as UTF-8, and clean text is left alone)."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bp import globs, text
from bp.errors import BPError
from broker.network import interception
from tests.fuzz.strategies import hostile_text, json_values

SMALL = st.text(alphabet="ab*", max_size=12)
URLS = st.text(alphabet="abAB", max_size=16)


def _reference(pattern, url):
    """The old regex translation: the meaning the linear matcher must keep (small inputs only)."""
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, url, re.IGNORECASE | re.DOTALL) is not None


@settings(max_examples=200)
@given(SMALL, URLS)
def test_glob_matches_like_the_regex_translation(pattern, url):
    assert globs.Glob(pattern)(url) is _reference(pattern, url)


@settings(max_examples=150)
@given(st.text(alphabet="a*b.:/", min_size=1, max_size=300), st.text(alphabet="ab.:/", max_size=3000))
def test_glob_work_is_one_pass(pattern, url):
    """Each literal piece between stars is searched once, in windows that never overlap or go
    back: at most len(url) characters are looked at, whatever the pattern."""
    glob = globs.Glob(pattern)
    trace = []
    glob(url, trace)
    assert len(trace) <= len(glob.middle)
    position = 0
    for start, end in trace:
        assert position <= start <= end <= len(url)
        position = end
    assert sum(end - start for start, end in trace) <= len(url)


@settings(max_examples=100)
@given(st.text(max_size=40), hostile_text)
def test_accepted_headers_cannot_split_a_request(name, value):
    try:
        interception.check_header(name, value)
    except BPError as exc:
        assert exc.code == "invalid_argument" and exc.context["field"] == "headers"
        return
    assert re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}", name)
    assert name.lower() not in interception.FORBIDDEN_HEADERS
    assert not any(ch in value for ch in "\r\n\x00")
    assert all(ord(ch) >= 0x20 and ord(ch) != 0x7f or ch == "\t" for ch in value)


@settings(max_examples=100)
@given(json_values)
def test_decoded_page_data_always_encodes(value):
    raw = json.dumps(value, ensure_ascii=True).encode()  # as Chrome escapes a lone surrogate
    cleaned = text.loads(raw)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # never raises
    if not re.search(r"[\ud800-\udfff]", json.dumps(value, ensure_ascii=False)):
        assert cleaned == json.loads(raw)  # clean data is left as it was


@settings(max_examples=200)
@given(st.binary(max_size=60))
def test_argv_bytes_become_text(raw):
    import os

    arg = os.fsdecode(raw)  # how Python hands undecodable argv bytes over (surrogateescape)
    cleaned = text.clean_argv([arg])[0]
    cleaned.encode("utf-8")
    if raw.decode("utf-8", "ignore") == raw.decode("utf-8", "replace"):
        assert cleaned == raw.decode("utf-8")


@pytest.mark.chromium
def test_page_text_boundary_on_real_chromium(home, connected, pages):
    """Generated hostile strings as a page's title and text: every observation answers."""
    from tests.helpers import bp

    assert bp(home, "open", pages.page("<p id='t'>x</p>"), env=connected).rc == 0

    @settings(max_examples=4)
    @given(st.lists(hostile_text, min_size=1, max_size=4))
    def observed(strings):
        script = ("document.title = " + json.dumps(strings[0]) + "; document.getElementById('t').textContent = "
                  + json.dumps(" ".join(strings)) + "; 1")
        assert bp(home, "eval", script, env=connected).rc == 0
        for args in (("snapshot",), ("read",), ("find", "p")):
            result = bp(home, *args, env=connected)
            assert result.rc == 0, result
            assert result.json["ok"] is True

    observed()
