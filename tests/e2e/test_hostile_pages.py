"""Issue 14, "Hostile text is data": page text holding lone surrogates is answered, with U+FFFD,
by every observation; the broker stays healthy (real Chromium)."""

import json

import pytest

from tests.helpers import bp

# Set from script: HTML cannot carry a lone surrogate, JavaScript strings can.
HOSTILE = """<main><h1 id="h">head</h1><p id="p">x</p><button id="b">go</button>
<input id="i" aria-label="field"></main>
<script>
  document.title = 'a \\ud800 b';
  document.getElementById('h').textContent = 'heading \\udfff end';
  document.getElementById('p').textContent = 'para \\ud800 lone and more words';
  document.getElementById('b').textContent = 'btn \\udc00';
  document.getElementById('b').setAttribute('data-x', 'attr \\ud800');
  document.getElementById('i').value = 'v \\ud800';
</script>"""


def _ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    assert result.json["ok"] is True
    result.stdout.encode("utf-8")  # strict: valid text
    return result.json


@pytest.fixture
def hostile_tab(home, connected, pages):
    opened = _ok(home, connected, "open", pages.page(HOSTILE))
    return opened


def test_open_and_snapshot_answer_with_replacement_characters(home, connected, hostile_tab):
    assert "\ufffd" in hostile_tab["title"]
    snap = _ok(home, connected, "snapshot")
    assert snap["title"] == "a \ufffd b"
    assert "\ufffd" in json.dumps(snap, ensure_ascii=False)


def test_read_find_search_are_answered(home, connected, hostile_tab):
    read = _ok(home, connected, "read")
    assert "para \ufffd lone" in json.dumps(read, ensure_ascii=False)
    found = _ok(home, connected, "find", "button", "--attributes", "data-x")
    assert "\ufffd" in json.dumps(found, ensure_ascii=False)
    searched = _ok(home, connected, "search", "lone")
    assert searched["matches"], searched
    assert bp(home, "status", env=connected).rc == 0


def test_eval_of_a_lone_surrogate_string_is_answered(home, connected, hostile_tab):
    result = _ok(home, connected, "eval", "'x\\ud800y'")
    assert "x\ufffdy" in json.dumps(result, ensure_ascii=False)
