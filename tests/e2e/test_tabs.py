"""Agents, tabs and control on real Chromium: isolation, target_busy, close, popups, profiles,
reconnect, lease expiry, per-tab serialization and focus safety."""

import json
import os
import signal

import pytest

from tests import helpers
from tests.helpers import bp, ok


def tabs(home, env, key):
    result = bp(home, "--client-key", key, "tabs", env=env)
    assert result.rc == 0, result
    return result.json["tabs"]


def by_url(rows, fragment):
    found = [r for r in rows if fragment in r["url"]]
    assert len(found) == 1, (fragment, rows)
    return found[0]


def raw_id(chromium, fragment):
    found = [t for t, info in chromium.pages().items() if fragment in info["url"]]
    assert len(found) == 1, (fragment, chromium.pages())
    return found[0]


@pytest.fixture
def two_agents(home, env_for, chromium, pages):
    env = env_for(home)
    shared = chromium.new_user_tab(pages.url(f"/page?title=shared-{os.path.basename(home)}"))
    for key in ("agent-a", "agent-b"):
        assert bp(home, "--client-key", key, "connect", env=env).rc == 0
        result = bp(home, "--client-key", key, "open", pages.url(f"/page?title={key}-{os.path.basename(home)}"), env=env)
        assert result.rc == 0, result
    yield env, f"shared-{os.path.basename(home)}", shared
    chromium.close_tab(shared)


def test_agents_see_the_same_tab_under_different_ids_and_their_own_selection(home, two_agents):
    env, shared_title, _ = two_agents
    a, b = tabs(home, env, "agent-a"), tabs(home, env, "agent-b")
    shared_a, shared_b = by_url(a, shared_title), by_url(b, shared_title)
    assert shared_a["targetId"] != shared_b["targetId"]
    assert shared_a["origin"] == shared_b["origin"] == "user_tab"
    assert not set(r["targetId"] for r in a) & set(r["targetId"] for r in b)
    own_a = by_url(a, "agent-a-")
    assert (own_a["origin"], own_a["controlState"], own_a["selected"]) == ("managed", "controlled", True)
    # Agent b's managed tab is listed to a, but not where it is nor what it shows (issue 27 item 7).
    assert not any("agent-b-" in r["url"] or "agent-b-" in r["title"] for r in a)
    [other_in_a] = [r for r in a if r["controlState"] == "busy"]
    assert (other_in_a["origin"], other_in_a["selected"], other_in_a["url"], other_in_a["title"]) == (
        "user_tab", False, "", "")
    assert [r["index"] for r in a] == list(range(1, len(a) + 1))
    for row in a:
        assert set(row) == {"index", "targetId", "profileContextId", "title", "url", "origin", "selected",
                            "controlState"}
        assert row["profileContextId"].startswith("profile-context:")
    # An opaque id of one Agent means nothing to another.
    foreign = bp(home, "--client-key", "agent-b", "tab", shared_a["targetId"], env=env)
    assert foreign.code == "target_not_owned"


def test_target_busy_until_released_then_handed_over(home, two_agents):
    env, shared_title, _ = two_agents
    index_a = by_url(tabs(home, env, "agent-a"), shared_title)["index"]
    assert bp(home, "--client-key", "agent-a", "tab", str(index_a), env=env).rc == 0
    index_b = by_url(tabs(home, env, "agent-b"), shared_title)["index"]
    busy = bp(home, "--client-key", "agent-b", "tab", str(index_b), env=env)
    assert busy.rc == 1 and busy.code == "target_busy", busy
    assert busy.json["retryable"] is True
    assert by_url(tabs(home, env, "agent-b"), shared_title)["controlState"] == "busy"
    # Another Agent's managed tab can never be taken either.
    managed_of_a = next(r["index"] for r in tabs(home, env, "agent-b") if r["url"] == "" and r["controlState"] == "busy")
    assert bp(home, "--client-key", "agent-b", "tab", str(managed_of_a), env=env).code == "target_busy"

    released = bp(home, "--client-key", "agent-a", "tab", "release", env=env)
    assert released.json["released"] is True, released
    took = bp(home, "--client-key", "agent-b", "tab", str(index_b), env=env)
    assert took.rc == 0, took
    assert by_url(tabs(home, env, "agent-a"), shared_title)["controlState"] == "busy"
    assert by_url(tabs(home, env, "agent-b"), shared_title)["controlState"] == "controlled"


def test_close_all_closes_only_this_agents_managed_tabs_and_popups(home, two_agents, chromium):
    env, shared_title, shared = two_agents
    managed_a = raw_id(chromium, "agent-a-")
    chromium.evaluate(managed_a, f"window.open('/page?title=popup-of-a-{os.path.basename(home)}'); 1")
    assert helpers.wait_until(lambda: any("popup-of-a" in r["url"] for r in tabs(home, env, "agent-a")))
    result = bp(home, "--client-key", "agent-a", "close", "--all", env=env)
    assert result.rc == 0, result
    assert result.json["closed"] == 2  # its managed tab (navigated by 'open') and that tab's popup
    left = {info["url"] for info in chromium.pages().values()}
    assert not any("agent-a-" in u or "popup-of-a" in u for u in left)
    assert any("agent-b-" in u for u in left)
    assert shared in chromium.pages()
    assert result.json["remaining"] == len(tabs(home, env, "agent-a"))


def test_popups_of_managed_tabs_are_managed_popups_and_of_user_tabs_user_tabs(home, two_agents, chromium):
    env, shared_title, shared = two_agents
    name = os.path.basename(home)
    chromium.evaluate(raw_id(chromium, "agent-a-"), f"window.open('/page?title=mp-{name}'); 1")
    chromium.evaluate(shared, f"window.open('/page?title=up-{name}'); 1")
    assert helpers.wait_until(lambda: sum(f"p-{name}" in r["url"] for r in tabs(home, env, "agent-a")) == 2)
    rows_a, rows_b = tabs(home, env, "agent-a"), tabs(home, env, "agent-b")
    assert by_url(rows_a, f"mp-{name}")["origin"] == "managed_popup"
    assert by_url(rows_a, f"mp-{name}")["controlState"] == "controlled"
    assert by_url(rows_a, f"up-{name}")["origin"] == "user_tab"
    # Another Agent's popup: busy, and neither its URL nor its title shown.
    assert not any(f"mp-{name}" in r["url"] or f"mp-{name}" in r["title"] for r in rows_b)
    hidden = [r for r in rows_b if r["url"] == ""]
    assert len(hidden) == 2 and {(r["origin"], r["controlState"], r["title"]) for r in hidden} == {("user_tab", "busy", "")}
    assert by_url(rows_b, f"up-{name}")["origin"] == "user_tab"  # the person's popup stays visible
    for fragment in (f"mp-{name}", f"up-{name}"):
        chromium.close_tab(raw_id(chromium, fragment))


def test_close_without_all_closes_the_selected_user_tab_only(home, env_for, chromium, pages):
    env = env_for(home)
    assert bp(home, "connect", env=env).rc == 0
    victim = chromium.new_user_tab(pages.url(f"/page?title=victim-{os.path.basename(home)}"))
    keep = chromium.new_user_tab(pages.url(f"/page?title=keep-{os.path.basename(home)}"))
    index = by_url(tabs(home, env, "browser-pilot-cli"), "victim-")["index"]
    assert bp(home, "tab", str(index), env=env).rc == 0
    result = bp(home, "close", env=env)
    assert result.rc == 0, result
    assert helpers.wait_until(lambda: victim not in chromium.pages())
    assert keep in chromium.pages()
    assert [r for r in tabs(home, env, "browser-pilot-cli") if r["selected"]][0]["origin"] == "managed"
    chromium.close_tab(keep)


def test_user_tab_opened_after_connect_appears_and_closed_tab_disappears(home, connected, chromium, pages):
    marker = f"late-{os.path.basename(home)}"
    raw = chromium.new_user_tab(pages.url(f"/page?title={marker}"))
    assert helpers.wait_until(lambda: any(marker in r["url"] for r in tabs(home, connected, "browser-pilot-cli")))
    chromium.close_tab(raw)
    assert helpers.wait_until(lambda: not any(marker in r["url"] for r in tabs(home, connected, "browser-pilot-cli")))


def test_open_navigates_the_selected_tab_and_new_opens_a_managed_one(home, connected, pages):
    first = bp(home, "open", pages.url("/page?title=First"), env=connected)
    assert first.rc == 0, first
    assert (first.json["title"], first.json["url"]) == ("First", pages.url("/page?title=First"))
    assert first.json["profileContextId"].startswith("profile-context:")
    before = tabs(home, connected, "browser-pilot-cli")
    second = bp(home, "open", "--new", pages.url("/page?title=Second"), env=connected)
    assert second.json["title"] == "Second"
    after = tabs(home, connected, "browser-pilot-cli")
    assert len(after) == len(before) + 1
    assert by_url(after, "Second")["selected"] and by_url(after, "Second")["origin"] == "managed"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "chrome://settings", "http://", "http://exa mple.com/",
                                 "http://host:99999/"])
def test_open_refuses_bad_urls(home, url):
    result = bp(home, "open", url)
    assert result.code == "invalid_argument", result
    assert result.json["context"]["field"] == "url"


def test_tab_commands_without_a_browser_are_browser_disconnected(home):
    for args in (["tabs"], ["tab", "1"], ["open", "example.com"], ["close"], ["profiles"]):
        result = bp(home, *args)
        assert result.code == "browser_disconnected", (args, result)
        assert result.json["remediation"]["code"] == "connect_browser"
    assert helpers.brokers_of(home) == []


def test_tab_index_out_of_range_and_bad_selectors(home, connected):
    assert bp(home, "tab", "99", env=connected).json["context"]["field"] == "index"
    assert bp(home, "tab", "0", env=connected).code == "invalid_argument"
    assert bp(home, "tab", "abc", env=connected).code == "invalid_argument"
    assert bp(home, "profile", "no-such-profile", env=connected).json["context"]["field"] == "profile"


def test_second_profile_requires_selection_then_routes_explicitly(home, env_for, chromium, pages):
    env = env_for(home)
    socket = helpers.BrowserSocket(chromium)
    context = socket.call("Target.createBrowserContext", {"disposeOnDetach": False})["browserContextId"]
    other = socket.call("Target.createTarget", {"url": pages.url("/page?title=second-profile"),
                                                "browserContextId": context})["targetId"]
    try:
        assert bp(home, "--client-key", "agent-a", "connect", env=env).rc == 0
        fresh = bp(home, "--client-key", "agent-fresh", "connect", env=env)
        assert fresh.json["profileSelectionRequired"] is True, fresh
        assert len(fresh.json["profiles"]) == 2
        refused = bp(home, "--client-key", "agent-c", "open", "--new", pages.url("/page?title=c"), env=env)
        assert refused.code == "profile_selection_required", refused
        profiles = bp(home, "--client-key", "agent-c", "profiles", env=env).json["profiles"]
        assert sorted(p["label"] for p in profiles) == ["Profile 1", "Profile 2"]
        second = [p for p in profiles if any("second-profile" in t["url"] for t in p["representativeTabs"])][0]
        routed = bp(home, "--client-key", "agent-c", "open", "--new", "--profile", str(second["index"]),
                    pages.url("/page?title=routed"), env=env)
        assert routed.rc == 0, routed
        assert routed.json["profileContextId"] == second["profileContextId"]
        # The Agent's next new tab follows its selected tab's profile without asking again.
        follow = bp(home, "--client-key", "agent-c", "open", "--new", pages.url("/page?title=follow"), env=env)
        assert follow.json["profileContextId"] == second["profileContextId"]
        selected = bp(home, "--client-key", "agent-d", "profile", second["profileContextId"], env=env)
        assert (selected.json["profileContextId"], selected.json["label"]) == (second["profileContextId"], second["label"])
        assert bp(home, "--client-key", "agent-d", "open", "--new", pages.url("/page?title=d"),
                  env=env).json["profileContextId"] == second["profileContextId"]
        assert bp(home, "--client-key", "agent-c", "open", "--profile", "1", pages.url("/x"), env=env).code \
            == "invalid_argument"
    finally:
        socket.call("Target.closeTarget", {"targetId": other})
        socket.call("Target.disposeBrowserContext", {"browserContextId": context})
        socket.close()


def test_profile_identification_is_explicit_and_verified(home, connected, chromium):
    passive = bp(home, "profiles", env=connected).json["profiles"]
    assert all(p["identityStatus"] == "unidentified" for p in passive)
    before = set(chromium.pages())
    identified = bp(home, "profiles", "--identify", env=connected)
    assert identified.rc == 0, identified
    first = identified.json["profiles"][0]
    assert first["identityStatus"] in ("verified", "unavailable")
    assert first.get("profileDirectory") == "Default"
    assert set(chromium.pages()) <= before | set()  # the chrome://version probe is closed again


def test_reconnect_invalidates_old_target_and_profile_ids(home, connected):
    rows = tabs(home, connected, "browser-pilot-cli")
    old_target, old_profile = rows[0]["targetId"], rows[0]["profileContextId"]
    janitor = [p for p in bp(home, "status", env=connected).json["processes"] if p["role"] == "janitor"][0]["pid"]
    os.kill(janitor, signal.SIGKILL)
    assert helpers.wait_until(lambda: bp(home, "tabs", env=connected).code == "browser_disconnected")
    assert bp(home, "connect", env=connected).rc == 0
    stale = bp(home, "tab", old_target, env=connected)
    assert stale.code == "target_not_owned", stale
    assert bp(home, "profile", old_profile, env=connected).code == "profile_context_stale"
    fresh = tabs(home, connected, "browser-pilot-cli")
    assert old_target not in {r["targetId"] for r in fresh}


def test_lease_expiry_releases_control_and_closes_managed_tabs(home, env_for, chromium, pages):
    env = env_for(home, BROWSER_PILOT_LEASE_TTL_MS=1500)
    assert bp(home, "--client-key", "agent-a", "connect", env=env).rc == 0
    marker = f"expiring-{os.path.basename(home)}"
    assert bp(home, "--client-key", "agent-a", "open", pages.url(f"/page?title={marker}"), env=env).rc == 0
    user = chromium.new_user_tab(pages.url(f"/page?title=held-{os.path.basename(home)}"))
    index = by_url(tabs(home, env, "agent-a"), "held-")["index"]
    assert bp(home, "--client-key", "agent-a", "tab", str(index), env=env).rc == 0
    assert helpers.wait_until(lambda: not any(marker in i["url"] for i in chromium.pages().values()), timeout=10)
    # On a loaded machine the first expiry may come before `tab` ran (which then starts a new
    # lease): what must hold is that the lease holding the user tab runs out and frees it.
    assert helpers.wait_until(lambda: by_url(tabs(home, env, "agent-b"), "held-")["controlState"] == "available",
                              timeout=10)
    index_b = by_url(tabs(home, env, "agent-b"), "held-")["index"]
    assert bp(home, "--client-key", "agent-b", "tab", str(index_b), env=env).rc == 0
    assert user in chromium.pages()
    chromium.close_tab(user)


def test_an_agent_back_after_its_lease_expired_is_told_why_it_holds_no_tab(home, env_for, chromium, pages):
    # Issue 38's trial: after the lease ran out the Agent read "no tab selected" and guessed.
    env = env_for(home, BROWSER_PILOT_LEASE_TTL_MS=1500)
    marker = f"lapsing-{os.path.basename(home)}"
    assert bp(home, "--client-key", "agent-l", "connect", env=env).rc == 0
    assert bp(home, "--client-key", "agent-l", "open", pages.url(f"/page?title={marker}"), env=env).rc == 0
    assert helpers.wait_until(lambda: not any(marker in i["url"] for i in chromium.pages().values()), timeout=10)
    back = bp(home, "--client-key", "agent-l", "snapshot", env=env)
    assert back.code == "target_not_owned" and back.json["context"]["reason"] == "lease_expired", back
    assert "bp open URL" in back.json["error"] and back.json["context"]["leaseTtlMs"] == 1500, back.json
    # Told once: then it is an Agent like a new one (a snapshot opens it a blank tab, `bp open` a page).
    assert bp(home, "--client-key", "agent-l", "open", pages.url("/page?title=again"), env=env).rc == 0


def test_one_tab_runs_commands_in_order_and_two_tabs_run_concurrently(home, env_for, pages):
    env = env_for(home)
    name = os.path.basename(home)
    for key in ("agent-a", "agent-b"):
        assert bp(home, "--client-key", key, "connect", env=env).rc == 0
    # Two Agents, two tabs, at once: each page answers only when both requests arrived.
    # (distinct URLs: Chrome's HTTP cache would serialize two loads of the same URL by itself)
    runs = [helpers.bp_popen(home, "--client-key", key, "open", pages.url(f"/barrier?group=pair-{name}&n=2&who={key}"),
                             **{k: v for k, v in env.items() if k.startswith("BROWSER_PILOT_")})
            for key in ("agent-a", "agent-b")]
    outs = [p.communicate(timeout=60)[0] for p in runs]
    assert all('"title":"together"' in out for out in outs), outs
    # One Agent, one tab, interleaved: the second command waits for the first.
    group = f"serial-{name}"
    first = helpers.bp_popen(home, "--client-key", "agent-a", "open", pages.url(f"/slow?group={group}&n=1&wait=0.5"),
                             **{k: v for k, v in env.items() if k.startswith("BROWSER_PILOT_")})
    assert pages.wait_for_log(lambda log: any(f"group={group}&n=1" in p for p, _, _ in log))
    second = helpers.bp_popen(home, "--client-key", "agent-a", "open", pages.url(f"/slow?group={group}&n=2&wait=0.1"),
                              **{k: v for k, v in env.items() if k.startswith("BROWSER_PILOT_")})
    out1, out2 = first.communicate(timeout=60)[0], second.communicate(timeout=60)[0]
    assert '"ok":true' in out1 and '"ok":true' in out2, (out1, out2)
    assert pages.max_in_flight[group] == 1
    events = [(p, e) for p, e, _ in pages.log if f"group={group}" in p and e != "get"]
    assert events == [(f"/slow?group={group}&n=1&wait=0.5", "start"), (f"/slow?group={group}&n=1&wait=0.5", "end"),
                      (f"/slow?group={group}&n=2&wait=0.1", "start"), (f"/slow?group={group}&n=2&wait=0.1", "end")]
    assert "n=2" in by_url(tabs(home, env, "agent-a"), group)["url"]


def test_no_command_moves_the_users_focus(home, env_for, chromium, pages):
    env = env_for(home)
    user = chromium.new_user_tab(pages.url(f"/page?title=focus-{os.path.basename(home)}"))
    probe = "[document.visibilityState, document.hasFocus()]"
    socket = helpers.BrowserSocket(chromium)
    socket.call("Target.activateTarget", {"targetId": user})  # the person works in this tab
    socket.close()
    before = helpers.wait_until(lambda: chromium.evaluate(user, probe)["result"]["result"]["value"] == ["visible", True]
                                and ["visible", True])
    assert before == ["visible", True]
    assert bp(home, "connect", env=env).rc == 0
    assert bp(home, "open", "--new", pages.url("/page?title=bg"), env=env).rc == 0
    assert bp(home, "open", pages.url("/page?title=bg2"), env=env).rc == 0
    assert bp(home, "tabs", env=env).rc == 0
    assert bp(home, "close", env=env).rc == 0
    after = chromium.evaluate(user, probe)["result"]["result"]["value"]
    assert after == before
    chromium.close_tab(user)


def test_a_tab_that_becomes_ineligible_loses_its_mapping_but_stays_open(home, connected, chromium, pages):
    marker = f"soon-internal-{os.path.basename(home)}"
    raw = chromium.new_user_tab(pages.url(f"/page?title={marker}"))
    row = by_url(tabs(home, connected, "browser-pilot-cli"), marker)
    assert bp(home, "tab", row["targetId"], env=connected).rc == 0
    socket = helpers.BrowserSocket(chromium)
    try:
        session = socket.call("Target.attachToTarget", {"targetId": raw, "flatten": True})["sessionId"]
        socket.ws.send(json.dumps({"id": 999, "method": "Page.navigate", "params": {"url": "chrome://version"},
                                   "sessionId": session}))
        assert helpers.wait_until(lambda: chromium.pages().get(raw, {}).get("url", "").startswith("chrome://"))
    finally:
        socket.close()
    assert helpers.wait_until(lambda: all(r["targetId"] != row["targetId"] for r in tabs(home, connected,
                                                                                         "browser-pilot-cli")))
    assert bp(home, "tab", row["targetId"], env=connected).code == "target_not_owned"
    snapshot = bp(home, "snapshot", env=connected)  # falls back to this Agent's managed tab
    assert snapshot.rc == 0, snapshot
    assert raw in chromium.pages()  # never closed
    chromium.close_tab(raw)


def test_tabs_show_the_title_the_page_has_not_a_url_placeholder(home, connected, pages):
    url = pages.page("<p>quarterly</p>", title="Quarterly-report")
    ok(home, connected, "open", url)
    row = [t for t in ok(home, connected, "tabs")["tabs"] if t["selected"]][0]
    assert (row["url"], row["title"]) == (url, "Quarterly-report")
    # Chrome announces no Target.targetInfoChanged for a title set later: it is read back.
    ok(home, connected, "eval", "document.title = 'Renamed by the page'")
    row = [t for t in ok(home, connected, "tabs")["tabs"] if t["selected"]][0]
    assert row["title"] == "Renamed by the page"
    assert ok(home, connected, "tab", str(row["index"]))["title"] == "Renamed by the page"
