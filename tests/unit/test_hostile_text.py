"""Issue 14 units: the linear glob, text cleaning at boundaries, redacted tracebacks."""

import logging

import pytest

from bp import globs, logs, text
from bp.errors import BPError


@pytest.mark.parametrize("pattern,url,expected", [
    ("*", "", True),
    ("*", "http://a/", True),
    ("http://a/*", "HTTP://A/x", True),
    ("*.png", "http://a/b.PNG", True),
    ("*.png", "http://a/b.png?x", False),
    ("a*a", "a", False),
    ("a*a", "aa", True),
    ("a**b", "ab", True),
    ("*a*b*", "xxbxxa", False),
    ("*a*b*", "xxaxxb", True),
    ("http://x/[a]", "http://x/[a]", True),  # only * is special
    ("http://x/?", "http://x/a", False),
    ("exact", "exact", True),
    ("exact", "exactly", False),
])
def test_glob_matches_like_a_full_glob(pattern, url, expected):
    assert globs.Glob(pattern)(url) is expected


def test_glob_searches_each_piece_once_left_to_right():
    glob = globs.Glob("*" * 50 + "a*" * 30 + "b")
    trace = []
    assert glob("a" * 10_000, trace) is False
    assert len(trace) <= 30
    assert all(end <= start2 for (_, end), (start2, _) in zip(trace, trace[1:]))


def test_glob_length_is_bounded():
    with pytest.raises(BPError) as caught:
        globs.Glob("*" * (globs.MAX_GLOB_CHARS + 1), "pattern")
    assert caught.value.context["field"] == "pattern"


def test_clean_replaces_lone_surrogates_only():
    assert text.clean("a \ud800 b") == "a \ufffd b"
    assert text.clean("\udcff.png") == "\ufffd.png"
    assert text.clean("ok \U0001F600") == "ok \U0001F600"
    assert text.clean("\ud83d\ude00") == "\ufffd\ufffd"  # a pair split in a str is two lone halves


def test_tracebacks_are_redacted_and_surrogates_do_not_lose_records(tmp_path):
    log_file = logs.setup_broker_logging(str(tmp_path))
    log = logging.getLogger("broker.test")
    try:
        raise ValueError("bad header Authorization: Bearer sekrit-token-123 and password=hunter2")
    except ValueError:
        log.exception("handler failed on \ud800")
    for handler in logging.getLogger().handlers:
        handler.flush()
    logging.shutdown()
    content = open(log_file, encoding="utf-8").read()
    assert "handler failed on" in content
    assert "ValueError" in content
    assert "sekrit-token-123" not in content and "hunter2" not in content
    assert "Logging error" not in content
