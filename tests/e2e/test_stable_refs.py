"""Stable ref numbers on real Chromium: within one document of a tab, an element keeps its number
in every later observation of the Agent, a number is never given to another element, and a new
document numbers from 1 again (issue 16 item 1); `snapshot --grep/--role` and `find`'s ref
(item 4)."""

from tests import helpers
from tests.helpers import bp, ok, ref_of


def run(home, env, expression):
    ok(home, env, "eval", expression)


def refs(observation):
    return {(e["role"], e["name"]): e["ref"] for e in observation["elements"]}


def assert_stale(home, env, ref, reason):
    """A click on `ref` is refused as stale_ref for this reason."""
    stale = bp(home, "click", str(ref), env=env)
    assert (stale.code, stale.json["context"]["reason"]) == ("stale_ref", reason), stale


FORM = """
<button id=a onclick="document.title='alpha'">Alpha</button>
<button id=b onclick="document.title='bravo'">Bravo</button>
<input id=email aria-label=Email>
<button id=z onclick="document.title='zulu'">Zulu</button>
"""


def bravo_then_snapshot(home, env, pages, expression):
    """On a fresh FORM page: the first observation, Bravo's ref in it, and a snapshot taken after
    running `expression`."""
    before = ok(home, env, "open", pages.page(FORM))
    bravo = ref_of(before, "button", "Bravo")
    run(home, env, expression)
    return before, bravo, ok(home, env, "snapshot")


def test_an_element_keeps_its_number_when_another_is_inserted_before_it(home, connected, pages):
    before = refs(ok(home, connected, "open", pages.page(FORM)))
    run(home, connected, "document.body.insertAdjacentHTML('afterbegin', "
                         "'<a href=#skip>Skip to content</a><button>Reset</button>')")
    after = ok(home, connected, "snapshot")
    now = refs(after)
    for key, ref in before.items():
        assert now[key] == ref, (key, before, now)
    # The new ones come first in the page, with numbers never used before in it.
    assert [e["name"] for e in after["elements"][:2]] == ["Skip to content", "Reset"]
    assert {now[("link", "Skip to content")], now[("button", "Reset")]} == {max(before.values()) + 1,
                                                                             max(before.values()) + 2}
    ok(home, connected, "click", str(before[("button", "Zulu")]))
    assert ok(home, connected, "eval", "document.title")["value"] == "zulu"


def test_an_opening_listbox_does_not_shift_the_buttons_after_it(home, connected, pages):
    page = pages.page("""
      <input role=combobox aria-label=Country aria-expanded=false
             onfocus="document.getElementById('list').hidden = false">
      <ul id=list role=listbox hidden>
        <li role=option>France</li><li role=option>Spain</li><li role=option>Italy</li>
      </ul>
      <button onclick="document.title='execute'">Execute</button>""")
    before = ok(home, connected, "open", page)
    execute = ref_of(before, "button", "Execute")
    opened = ok(home, connected, "click", str(ref_of(before, "combobox", "Country")))
    assert [e["name"] for e in opened["elements"] if e["role"] == "option"] == ["France", "Spain", "Italy"]
    assert ref_of(opened, "button", "Execute") == execute
    ok(home, connected, "click", str(execute))
    assert ok(home, connected, "eval", "document.title")["value"] == "execute"


def test_a_ref_from_an_earlier_observation_works_after_an_action_listed_fewer(home, connected, pages):
    before = ok(home, connected, "open", pages.page(FORM))
    zulu = ref_of(before, "button", "Zulu")
    small = ok(home, connected, "click", str(ref_of(before, "button", "Alpha")), "--limit", "1")
    assert [e["name"] for e in small["elements"]] == ["Alpha"] and small["truncated"] is True
    clicked = ok(home, connected, "click", str(zulu))  # not listed by the latest observation
    assert clicked["evidence"]["action"] == "click"
    assert ok(home, connected, "eval", "document.title")["value"] == "zulu"
    assert ref_of(clicked, "button", "Zulu") == zulu


def test_a_diff_keeps_the_numbers_and_reports_changes_under_them(home, connected, pages):
    before = refs(ok(home, connected, "open", pages.page(FORM)))
    run(home, connected, "document.getElementById('b').remove(); document.getElementById('a').textContent = 'Alpha 2';"
                         "document.body.insertAdjacentHTML('afterbegin', '<button>New</button>')")
    d = ok(home, connected, "snapshot", "--diff")["diff"]
    new = max(before.values()) + 1
    assert d["added"] == [{"ref": new, "role": "button", "name": "New"}]
    assert [(e["ref"], e["was"], e["name"], e["fields"]) for e in d["changed"]] == [
        (before[("button", "Alpha")], before[("button", "Alpha")], "Alpha 2", ["name"])]
    assert d["removed"] == [before[("button", "Bravo")]]
    assert "refMap" not in d and "invalidated" not in d  # nothing moved, nothing superseded
    assert d["unchanged"] == 2
    full = refs(ok(home, connected, "snapshot"))
    assert full == {("button", "New"): new, ("button", "Alpha 2"): before[("button", "Alpha")],
                    ("textbox", "Email"): before[("textbox", "Email")], ("button", "Zulu"): before[("button", "Zulu")]}


def test_a_removed_elements_number_is_never_given_again_and_fails_as_detached(home, connected, pages):
    before, bravo, after = bravo_then_snapshot(
        home, connected, pages, "document.getElementById('b').remove();"
                                "document.body.insertAdjacentHTML('beforeend', '<button>Bravo</button>')")
    assert ref_of(after, "button", "Bravo") > max(e["ref"] for e in before["elements"])
    assert bravo not in [e["ref"] for e in after["elements"]]
    assert_stale(home, connected, bravo, "node_detached")


def test_a_clone_that_replaces_an_element_gets_a_new_number_and_the_old_one_fails(home, connected, pages):
    before, bravo, after = bravo_then_snapshot(
        home, connected, pages, "const b = document.getElementById('b'); b.replaceWith(b.cloneNode(true))")
    clone = ref_of(after, "button", "Bravo")
    assert clone != bravo and clone > max(e["ref"] for e in before["elements"])
    assert_stale(home, connected, bravo, "node_detached")


def test_a_renamed_element_keeps_its_number_and_an_older_observation_of_it_fails(home, connected, pages):
    before = ok(home, connected, "open", pages.page(FORM))
    alpha = ref_of(before, "button", "Alpha")
    run(home, connected, "document.getElementById('a').textContent = 'Forged'")
    assert_stale(home, connected, alpha, "node_changed")  # named Alpha when last observed
    assert ref_of(ok(home, connected, "snapshot"), "button", "Forged") == alpha


def test_a_new_document_numbers_from_one_and_fails_the_old_refs(home, connected, pages):
    before = ok(home, connected, "open", pages.page(FORM))
    zulu = ref_of(before, "button", "Zulu")
    second = pages.page("<button>Elsewhere</button><button>Other</button>", title="Second")
    run(home, connected, f"location.href = {second!r}")
    assert helpers.wait_until(lambda: bp(home, "eval", "document.readyState + document.title",
                                         env=connected).stdout.count("completeSecond") == 1, timeout=20)
    assert_stale(home, connected, zulu, "navigation")
    after = ok(home, connected, "snapshot")
    assert [(e["ref"], e["name"]) for e in after["elements"]] == [(1, "Elsewhere"), (2, "Other")]
    assert_stale(home, connected, zulu, "unknown_ref")


def test_past_the_table_bound_the_oldest_unlisted_refs_expire(home, env_for, pages):
    env = env_for(home, BROWSER_PILOT_MAX_REFS="4")  # private test setting (10,000 by default)
    ok(home, env, "connect")
    before = ok(home, env, "open", pages.page("".join(f"<button>B{i}</button>" for i in range(4))))
    assert [e["ref"] for e in before["elements"]] == [1, 2, 3, 4]
    run(home, env, "document.body.insertAdjacentHTML('afterbegin', '<button>N0</button><button>N1</button>')")
    # Lists N0, N1 (5, 6); the table holds six, so the two oldest unlisted go: 1 and 2.
    small = ok(home, env, "snapshot", "--limit", "2")
    assert [(e["ref"], e["name"]) for e in small["elements"]] == [(5, "N0"), (6, "N1")]
    for ref in (1, 2):
        assert_stale(home, env, ref, "expired")
    assert ok(home, env, "click", "3")["evidence"]["action"] == "click"  # still held
    assert [e["ref"] for e in ok(home, env, "snapshot")["elements"]] == [5, 6, 7, 8, 3, 4]


def test_grep_lists_the_matching_elements_with_their_refs_and_the_count(home, connected, pages):
    rows = "".join(f"<tr><td>Row {i}</td><td><button>Delete</button><button>Edit row {i}</button></td></tr>"
                   for i in range(30))
    full = ok(home, connected, "open", pages.page(f"<input aria-label=Search value='find DELETE me'><table>{rows}"
                                                  "</table>"), "--limit", "200")
    deletes = [e["ref"] for e in full["elements"] if e["name"] == "Delete"]
    found = ok(home, connected, "snapshot", "--grep", "delete")
    assert found["matches"] == 31 and found["truncated"] is False
    assert [e["ref"] for e in found["elements"]] == [ref_of(full, "textbox", "Search")] + deletes  # value matches too
    buttons = ok(home, connected, "snapshot", "--grep", "DELETE", "--role", "button", "--limit", "3")
    assert [e["ref"] for e in buttons["elements"]] == deletes[:3]
    assert (buttons["matches"], buttons["truncated"], buttons["truncationReasons"]) == (30, True, ["element_limit"])
    one = ok(home, connected, "snapshot", "--grep", "edit row 7")
    assert [(e["ref"], e["name"]) for e in one["elements"]] == [(ref_of(full, "button", "Edit row 7"), "Edit row 7")]
    text = bp(home, "--human", "snapshot", "--grep", "edit row 7", env=connected).stdout.splitlines()
    assert "[matches] 1" in text and any(line.endswith('button "Edit row 7"') for line in text), text
    none = ok(home, connected, "snapshot", "--grep", "nothing like this")
    assert (none["elements"], none["matches"]) == ([], 0)
    assert ok(home, connected, "snapshot", "--role", "textbox")["matches"] == 1
    assert bp(home, "snapshot", "--grep", "x", "--diff", env=connected).rc != 0
    assert bp(home, "snapshot", "--role", "heading", env=connected).rc != 0


def test_find_gives_the_ref_a_snapshot_shows_or_would_show(home, connected, pages):
    page = pages.page("<p class=x>text</p>" + "".join(f"<button class=x>Item {i}</button>" for i in range(6)))
    opened = ok(home, connected, "open", page, "--limit", "2")
    listed = {e["name"]: e["ref"] for e in opened["elements"]}
    found = ok(home, connected, "find", ".x")["elements"]
    assert "ref" not in found[0]  # a paragraph is nothing to act on
    by_name = {e["name"]: e.get("ref") for e in found[1:]}
    assert by_name["Item 0"] == listed["Item 0"] and by_name["Item 1"] == listed["Item 1"]
    assert all(by_name[f"Item {i}"] for i in range(2, 6))
    later = ok(home, connected, "snapshot")
    assert {e["name"]: e["ref"] for e in later["elements"]} == by_name
    ok(home, connected, "click", str(by_name["Item 5"]))
