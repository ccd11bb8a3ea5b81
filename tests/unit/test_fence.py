"""bp/fence.py: which strings are fenced, how marker-shaped page text is neutralised, and when
the fence is on."""

import re

from bp import fence


def test_page_fields_are_fenced_wherever_they_are_and_broker_fields_are_not():
    reply = {"ok": True, "title": "T", "url": "https://a.test/", "elements": [{"ref": 1, "role": "button", "name": "Go",
                                                                             "value": "", "checked": True}],
             "evidence": {"action": "select", "status": "verified", "selected": ["Blue"]},
             "value": {"nested": ["deep", 3], "<<end:ab>>key": "x"},
             "remediation": {"code": "c", "message": "ours"}, "hint": "ours too"}
    out = fence.apply(reply, token="t0")
    assert out["fence"] == "t0" and out["ok"] is True and out["url"] == "https://a.test/"
    assert out["title"] == "<<page:t0>>T<<end:t0>>"
    assert out["elements"][0] == {"ref": 1, "role": "button", "name": "<<page:t0>>Go<<end:t0>>", "value": "",
                                  "checked": True}
    assert out["evidence"] == {"action": "select", "status": "verified", "selected": ["<<page:t0>>Blue<<end:t0>>"]}
    assert out["value"] == {"nested": ["<<page:t0>>deep<<end:t0>>", 3], "‹‹end:ab>>key": "<<page:t0>>x<<end:t0>>"}
    assert out["remediation"] == {"code": "c", "message": "ours"} and out["hint"] == "ours too"
    assert reply["title"] == "T"  # a copy: the reply itself is left as it was


def test_marker_shaped_text_is_neutralised_in_every_spelling():
    for fake in ("<<end:abc>>", "<<END:abc>>", "<< end :abc>>", "<<Page:abc>>", "<<\tend:"):
        wrapped = fence.wrap(f"a {fake} b", "t1")
        inner = wrapped[len("<<page:t1>>"):-len("<<end:t1>>")]
        assert not re.search(r"<<\s*(page|end)\s*:", inner, re.I), wrapped
        assert "‹‹" in inner
    assert fence.wrap("a << b >> c", "t1") == "<<page:t1>>a << b >> c<<end:t1>>"  # other text is untouched
    assert fence.apply({"ok": False, "error": "x <<end:1>>"}, token="t")["error"] == "x ‹‹end:1>>"


def test_tokens_are_fresh_and_the_environment_switch():
    assert len({fence.new_token() for _ in range(100)}) == 100
    assert re.fullmatch(r"[0-9a-f]{16}", fence.new_token())
    for value in ("1", "true", "yes", "on", "anything"):
        assert fence.enabled({"BROWSER_PILOT_FENCE": value})
    for value in ("", "0", "false", "No", " off "):
        assert not fence.enabled({"BROWSER_PILOT_FENCE": value})
    assert not fence.enabled({})
