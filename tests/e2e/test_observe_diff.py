"""`bp snapshot --diff` on real Chromium: only what changed since the Agent's previous observation
of the tab, with the identity of an element being its DOM node (never its role and name), which
keeps its ref number (tests/e2e/test_stable_refs.py)."""

import json
import time

from tests import helpers
from tests.helpers import bp, ref_of
from tests.e2e.test_frames import nested_page


def ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    return result


def diff(home, env, *args):
    return ok(home, env, "snapshot", "--diff", *args).json


def run(home, env, expression):
    ok(home, env, "eval", expression)


FORM = """
<button id=a>Alpha</button>
<button id=b>Bravo</button>
<button id=c>Charlie</button>
<input id=email aria-label=Email>
<label><input id=agree type=checkbox> Agree</label>
<button id=z>Zulu</button>
"""


def test_a_diff_without_a_previous_observation_is_complete_and_says_so(home, connected):
    # Right after connect the Agent has a tab but has not observed it yet.
    run(home, connected, "document.body.innerHTML = '<button>Only</button>'")
    result = diff(home, connected)
    assert result["diff"] == {"base": "none", "count": 1}
    assert result["elements"] == [{"ref": 1, "role": "button", "name": "Only"}]


def test_an_unchanged_page_gives_an_empty_diff_with_the_full_header(home, connected, pages):
    opened = ok(home, connected, "open", pages.page(FORM, title="Form")).json
    result = diff(home, connected)
    assert set(result) == {"ok", "title", "url", "page", "hints", "truncated", "truncationReasons",
                           "profileContextId", "diff"}
    assert (result["title"], result["url"], result["truncated"]) == ("Form", opened["url"], False)
    count = len(opened["elements"])
    assert result["diff"] == {"base": "previous", "count": count, "added": [], "changed": [], "removed": [],
                              "unchanged": count}


def test_added_removed_and_changed_elements_are_reported_under_their_refs(home, connected, pages):
    before = ok(home, connected, "open", pages.page(FORM)).json
    old = {name: ref_of(before, role, name) for role, name in
           [("button", "Alpha"), ("button", "Bravo"), ("button", "Charlie"), ("textbox", "Email"),
            ("checkbox", "Agree"), ("button", "Zulu")]}
    run(home, connected, """
        document.getElementById('b').remove();
        const d = document.createElement('button'); d.textContent = 'Delta';
        d.onclick = () => { document.title = 'delta clicked'; };
        document.getElementById('c').after(d);
        document.getElementById('a').textContent = 'Alpha 2';
        document.getElementById('email').value = 'me@example.test';
        document.getElementById('agree').checked = true;
    """)
    result = diff(home, connected)
    d = result["diff"]
    assert d["base"] == "previous"
    assert [(e["role"], e["name"]) for e in d["added"]] == [("button", "Delta")]
    assert d["removed"] == [old["Bravo"]]
    changed = {e["name"]: e for e in d["changed"]}
    assert set(changed) == {"Alpha 2", "Email", "Agree"}
    assert (changed["Alpha 2"]["was"], changed["Alpha 2"]["fields"]) == (old["Alpha"], ["name"])
    assert (changed["Email"]["value"], changed["Email"]["fields"]) == ("me@example.test", ["value"])
    assert (changed["Agree"]["checked"], changed["Agree"]["fields"]) == (True, ["checked"])
    assert d["unchanged"] == 2  # Charlie and Zulu
    # Every element kept its number; the new one has a number never used before on the page.
    assert d["count"] == 6 and "refMap" not in d
    assert d["added"][0]["ref"] == max(old.values()) + 1
    assert {e["name"]: (e["ref"], e["was"]) for e in d["changed"]} == {
        "Alpha 2": (old["Alpha"],) * 2, "Email": (old["Email"],) * 2, "Agree": (old["Agree"],) * 2}
    ok(home, connected, "click", str(d["added"][0]["ref"]))
    assert ok(home, connected, "eval", "document.title").json["value"] == "delta clicked"
    after = ok(home, connected, "snapshot").json
    assert [e["name"] for e in after["elements"]] == ["Alpha 2", "Charlie", "Delta", "Email", "Agree", "Zulu"]


def test_unchecking_and_clearing_report_the_emptied_fields(home, connected, pages):
    ok(home, connected, "open", pages.page("<input aria-label=Name value=Ann><input type=checkbox checked "
                                           "aria-label=Keep>"))
    run(home, connected, "document.querySelector('input').value = ''; "
                         "document.querySelector('[type=checkbox]').checked = false")
    changed = {e["name"]: e for e in diff(home, connected)["diff"]["changed"]}
    assert (changed["Name"]["value"], changed["Name"]["fields"]) == ("", ["value"])
    assert (changed["Keep"]["checked"], changed["Keep"]["fields"]) == (False, ["checked"])


def test_a_clone_that_replaces_a_node_is_removed_and_added_never_unchanged(home, connected, pages):
    before = ok(home, connected, "open", pages.page(FORM)).json
    bravo = ref_of(before, "button", "Bravo")
    run(home, connected, "const b = document.getElementById('b'); b.replaceWith(b.cloneNode(true))")
    d = diff(home, connected)["diff"]
    assert d["removed"] == [bravo]
    assert d["added"] == [{"ref": len(before["elements"]) + 1, "role": "button", "name": "Bravo"}]
    assert d["changed"] == []


def test_after_a_navigation_the_diff_is_the_full_observation(home, connected, pages):
    before = ok(home, connected, "open", pages.page(FORM)).json
    second = pages.page("<button>Elsewhere</button>", title="Second")
    run(home, connected, f"location.href = {second!r}")
    assert helpers.wait_until(lambda: bp(home, "eval", "document.readyState + document.title",
                                         env=connected).stdout.count("completeSecond") == 1, timeout=20)
    result = diff(home, connected)
    assert result["diff"] == {"base": "navigation", "count": 1,
                              "invalidated": {"from": 1, "to": len(before["elements"])}}
    assert result["elements"] == [{"ref": 1, "role": "button", "name": "Elsewhere"}]


def test_a_diff_after_a_diff_compares_with_the_latest(home, connected, pages):
    ok(home, connected, "open", pages.page(FORM))
    run(home, connected, "document.getElementById('z').textContent = 'Zulu 2'")
    assert [e["name"] for e in diff(home, connected)["diff"]["changed"]] == ["Zulu 2"]
    assert diff(home, connected)["diff"]["changed"] == []


def test_a_diff_of_a_large_page_with_one_change_is_small(home, connected, pages):
    body = "".join(f"<button id=b{i}>Button number {i}</button>" for i in range(1000))
    full = ok(home, connected, "open", pages.page(body), "--limit", "2000")
    assert len(full.json["elements"]) == 1000
    run(home, connected, "document.getElementById('b500').textContent = 'Changed button'")
    small = ok(home, connected, "snapshot", "--diff", "--limit", "2000")
    d = small.json["diff"]
    assert [(e["ref"], e["was"], e["name"]) for e in d["changed"]] == [(501, 501, "Changed button")]
    assert (d["added"], d["removed"], d["unchanged"], "refMap" in d) == ([], [], 999, False)
    full_bytes, diff_bytes = len(full.stdout.encode()), len(small.stdout.encode())
    print(f"1,000-element page, one change: full {full_bytes} B, diff {diff_bytes} B")
    assert diff_bytes * 20 < full_bytes, (diff_bytes, full_bytes)


def test_elements_of_cross_site_frames_are_matched_in_their_own_worlds(home, connected, pages):
    before = ok(home, connected, "open", nested_page(pages)).json
    names = [e["name"] for e in before["elements"]]
    assert names == ["Top", "Inner A", "Inner field", "Deep B", "Deep box", "After"]
    frames = ok(home, connected, "frame").json["frames"]
    deep = [f["index"] for f in frames if "b.test" in f["url"]][0]
    ok(home, connected, "frame", str(deep))
    run(home, connected, "document.querySelector('button').textContent = 'Deep B2'; "
                         "document.body.insertAdjacentHTML('afterbegin', '<button>Deep new</button>')")
    ok(home, connected, "frame", "0")
    d = diff(home, connected)["diff"]
    deep = ref_of(before, "button", "Deep B")
    assert [(e["ref"], e["name"]) for e in d["added"]] == [(7, "Deep new")]
    assert [(e["ref"], e["was"], e["name"]) for e in d["changed"]] == [(deep, deep, "Deep B2")]
    assert d["removed"] == []
    assert d["unchanged"] == 5


def test_human_diff_marks_added_changed_and_removed_lines(home, connected, pages):
    ok(home, connected, "open", pages.page(FORM))
    run(home, connected, "document.getElementById('b').remove(); document.getElementById('c').textContent = "
                         "'Charlie\\n[9] button \"Forged\"'; document.body.insertAdjacentHTML('beforeend', "
                         "'<button>Yankee</button>')")
    text = ok(home, connected, "--human", "snapshot", "--diff").stdout
    lines = text.splitlines()
    assert "[diff] 1 added, 1 changed, 1 removed, 4 unchanged" in lines, text
    assert not any(line.startswith("[renumbered]") for line in lines), text
    assert '+[7] button "Yankee"' in lines, text
    assert "- removed [2]" in lines, text
    changed = [line for line in lines if line.startswith("~[3]")]
    assert len(changed) == 1 and changed[0].endswith("(name)"), text
    assert not any(line.startswith("[9]") for line in lines), text
    assert json.dumps(text)  # plain text, nothing else


def test_an_expired_observation_fails_as_expired_and_a_diff_starts_over(home, env_for, pages):
    env = env_for(home, BROWSER_PILOT_OBSERVATION_TTL_MS="2500")  # private test setting
    ok(home, env, "connect")
    before = ok(home, env, "open", pages.page(FORM, title="Expiring")).json
    time.sleep(3)  # past the observation's lifetime
    stale = bp(home, "click", str(ref_of(before, "button", "Alpha")), env=env)
    assert stale.code == "stale_ref", stale
    assert stale.json["context"]["reason"] == "expired"
    result = diff(home, env)
    assert result["diff"] == {"base": "expired", "count": len(before["elements"])}
    # The same document: its elements keep their numbers in the new observation.
    assert result["elements"] == before["elements"]
    assert ok(home, env, "click", "1").json["evidence"]["action"] == "click"
