"""Stored observations without a browser: the broker-wide bound, the lifetime, and what a diff
reports with stable ref numbers."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from bp import settings
from bp.errors import BPError
from broker import agents as agents_module
from broker.observe import snapshot
from broker.agents import Agents

SESSION = SimpleNamespace(alive=True, loader="loader-1")


def broker_stub():
    return SimpleNamespace(browser=SimpleNamespace(generation=1))


def stored(agents, agent, raw, count=3):
    table = snapshot.ref_table(broker_stub(), agent, raw, SESSION, "loader-1", 7)
    table.next = max(table.next, count + 1)
    obs = snapshot.Observation(1, raw, SESSION, "loader-1", 7, count, table)
    obs.listed = list(range(1, count + 1))
    agents.store_observation(agent, raw, obs)
    return obs


def reason(agent, raw, ref=1):
    with pytest.raises(BPError) as info:
        snapshot.check_ref(broker_stub(), agent, raw, SESSION, ref)
    assert info.value.code == "stale_ref"
    return info.value.context["reason"]


def test_the_store_keeps_2048_observations_across_agents_and_the_oldest_expire():
    assert agents_module.MAX_OBSERVATIONS == 2048
    agents = Agents()
    a, b = agents.touch("agent-a", 1), agents.touch("agent-b", 1)
    first = stored(agents, a, "tab-0")
    for i in range(1, 2048):
        stored(agents, b if i % 2 else a, f"tab-{i}")
    # At the limit nothing is evicted yet: the first observation's refs still resolve.
    assert snapshot.check_ref(broker_stub(), a, "tab-0", SESSION, 1)[0] is first.table
    stored(agents, b, "tab-2048")  # one past the limit
    assert first.evicted and first.listed == []
    assert reason(a, "tab-0") == "expired"
    assert not a.observation("tab-2").evicted
    assert snapshot.check_ref(broker_stub(), b, "tab-2048", SESSION, 3)[0] is b.observation("tab-2048").table


def test_superseded_or_dropped_observations_do_not_count_toward_the_bound():
    agents = Agents(max_observations=4)
    a = agents.touch("agent-a", 1)
    kept = stored(agents, a, "tab-kept")
    for _ in range(10):  # the same tab observed again and again: one stored observation
        stored(agents, a, "tab-busy")
    b = agents.touch("agent-b", 1)
    stored(agents, b, "tab-b")
    agents.remove("agent-b")  # its observations go with it
    stored(agents, a, "tab-x")
    stored(agents, a, "tab-y")
    assert not kept.evicted
    stored(agents, a, "tab-z")  # now five live ones: the oldest goes
    assert kept.evicted
    assert reason(a, "tab-kept") == "expired"


def test_an_observation_older_than_its_lifetime_fails_as_expired(monkeypatch):
    agents = Agents()
    a = agents.touch("agent-a", 1)
    obs = stored(agents, a, "tab-1")
    assert snapshot.check_ref(broker_stub(), a, "tab-1", SESSION, 2)[0] is obs.table
    monkeypatch.setattr(obs, "created_at", obs.created_at - settings.current().observation_ttl_s - 1)
    assert reason(a, "tab-1") == "expired"
    # Storing another observation also lets the expired one go from the store.
    stored(agents, a, "tab-2")
    assert obs.evicted


def test_the_observation_lifetime_has_a_private_override():
    code = "from bp import settings; print(settings.load().observation_ttl_s)"
    env = dict(os.environ, BROWSER_PILOT_OBSERVATION_TTL_MS="1500")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1.5"


def _rows(refs, world):
    return [({"ref": ref, "role": "button", "name": f"n{ref}"}, world) for ref in refs]


def test_a_diff_reports_elements_by_their_stable_numbers():
    world = snapshot.World(SESSION, 7)
    prev = snapshot.Observation(1, "tab", SESSION, "loader-1", 7, 6)
    prev.listed = [1, 2, 3, 4, 5, 6]
    # Now: 2 is gone, 7 is new (inserted first), 4 has a new name; the others are as they were.
    body = snapshot._diff_body(prev, _rows([7, 1, 3, 4, 5, 6], world), 6, {4: ["name"]})
    assert body == {"base": "previous", "count": 6, "added": [{"ref": 7, "role": "button", "name": "n7"}],
                    "changed": [{"ref": 4, "was": 4, "role": "button", "name": "n4", "fields": ["name"]}],
                    "removed": [2], "unchanged": 4}


def test_an_element_the_previous_observation_did_not_list_is_added_under_its_number():
    world = snapshot.World(SESSION, 7)
    prev = snapshot.Observation(1, "tab", SESSION, "loader-1", 7, 1)
    prev.listed = [1]  # --limit 1; 2 and 3 were numbered by an earlier, longer observation
    body = snapshot._diff_body(prev, _rows([1, 2, 3], world), 3, {})
    assert [e["ref"] for e in body["added"]] == [2, 3] and body["removed"] == [] and body["unchanged"] == 1


def test_a_diff_past_the_byte_budget_is_cut_to_fewer_refs_with_byte_limit():
    world = snapshot.World(SESSION, 7)
    rows = [({"ref": i + 1, "role": "button", "name": f"{i:04d}" + "x" * 4000}, world) for i in range(600)]
    prev = snapshot.Observation(1, "tab", SESSION, "loader-1", 7, 0)
    reasons = set()
    out = {"title": "t", "url": "u", "page": {}, "hints": [], "elements": []}
    count, body = snapshot._diff(out, prev, rows, 600, reasons, {})
    assert reasons == {"byte_limit"}
    assert 400 < count < 600 and body["count"] == count and len(body["added"]) == count
    reply = dict(out, diff=body, truncationReasons=["byte_limit"], truncated=True)
    del reply["elements"]
    assert snapshot._size(reply) <= snapshot.MAX_BYTES
    one_more = dict(reply, diff=snapshot._diff_body(prev, rows, count + 1, {}))
    assert snapshot._size(one_more) > snapshot.MAX_BYTES - 100  # as many refs as fit, no fewer
