"""broker.routing without a browser: a real target table and real Agents, fed Target events the
way the connection feeds them. Indexes and opaque ids, selection and control between Agents,
the fallbacks of the selected tab, and the generation fence."""

from types import SimpleNamespace

import pytest

from bp.errors import BPError
from bp.policy import Policy
from broker.tabs import routing
from broker.agents import Agents
from broker.browser.targets import Targets


def page(raw, url="https://a.test/", context="ctx-1", **extra):
    return {"targetId": raw, "type": "page", "url": url, "title": raw, "browserContextId": context, **extra}


class World:
    """The broker as routing sees it: browser.targets/generation/popups, agents."""

    def __init__(self):
        self.targets = Targets()
        self.connection = SimpleNamespace(alive=True)
        self.browser = SimpleNamespace(targets=self.targets, popups=lambda: {}, require=lambda: self.connection,
                                       connection=self.connection, generation=1)
        self.agents = Agents()
        self.policy = Policy.none()  # no navigation bounds: user tabs may be taken
        # The broker's services routing talks to (broker/server.py start_services).
        self.resynced = []  # tabs whose interception was told to follow a change of holder
        self.network_hub = SimpleNamespace(resync=self.resynced.append)
        self.emulations = SimpleNamespace(shown=lambda raw: None)

    def open(self, *infos):
        for info in infos:
            self.targets.apply("Target.targetCreated", {"targetInfo": info})

    def agent(self, key):
        return routing.agent_for(self, SimpleNamespace(client=key))


@pytest.fixture
def world():
    found = World()
    found.open(page("raw-1"), page("raw-2", url="https://b.test/"), page("raw-dev", url="devtools://devtools/x"),
               {"targetId": "raw-sw", "type": "service_worker", "url": "https://a.test/sw.js"})
    return found


def test_inventory_lists_eligible_pages_in_order_with_opaque_ids_only(world):
    agent = world.agent("agent-one")
    rows = routing.inventory(world, agent)
    assert [raw for raw, _ in rows] == ["raw-1", "raw-2"]  # no DevTools page, no service worker
    first = rows[0][1]
    assert (first["index"], first["origin"], first["controlState"], first["selected"]) == (1, "user_tab", "available", False)
    assert first["targetId"].startswith("tab-") and "raw" not in first["targetId"]
    assert first["profileContextId"].startswith("profile-context:")
    assert routing.find_tab(world, agent, 2) == "raw-2"
    assert routing.find_tab(world, agent, first["targetId"]) == "raw-1"


@pytest.mark.parametrize("selector", [0, 3, "tab-000000000000"])
def test_a_tab_outside_the_inventory_is_refused_with_a_stable_code(world, selector):
    agent = world.agent("agent-one")
    with pytest.raises(BPError) as caught:
        routing.find_tab(world, agent, selector)
    assert caught.value.code == ("target_not_owned" if isinstance(selector, str) else "invalid_argument")


def test_one_agents_user_tab_is_busy_for_another_and_selecting_moves_control(world):
    one, two = world.agent("agent-one"), world.agent("agent-two")
    routing.select(world, one, "raw-1", world.network_hub)
    assert one.selected == "raw-1" and one.selected_profile == "ctx-1"
    with pytest.raises(BPError) as caught:
        routing.select(world, two, "raw-1", world.network_hub)
    assert caught.value.code == "target_busy"
    assert dict(routing.inventory(world, two))["raw-1"]["controlState"] == "busy"
    assert world.resynced == []
    routing.select(world, one, "raw-2", world.network_hub)  # an Agent holds one user tab at a time: raw-1 is free again
    assert dict(routing.inventory(world, one))["raw-1"]["controlState"] == "available"
    assert world.resynced == ["raw-1"]  # nothing of Agent one's (journal, rules) stays on it
    routing.select(world, two, "raw-1", world.network_hub)
    assert two.selected == "raw-1"


def test_another_agents_managed_tab_looks_like_a_user_tab_it_cannot_take(world):
    one, two = world.agent("agent-one"), world.agent("agent-two")
    world.agents.add_managed(one, "raw-2")
    assert dict(routing.inventory(world, one))["raw-2"]["origin"] == "managed"
    row = dict(routing.inventory(world, two))["raw-2"]
    assert (row["origin"], row["controlState"]) == ("user_tab", "busy")
    with pytest.raises(BPError) as caught:
        routing.select(world, two, "raw-2", world.network_hub)
    assert caught.value.code == "target_busy"


def test_selected_tab_falls_back_to_the_first_managed_tab_and_never_invents_one(world):
    agent = world.agent("agent-one")
    with pytest.raises(BPError) as caught:
        routing.selected_tab(world, agent, SimpleNamespace(client="agent-one"), create=False)
    assert (caught.value.code, caught.value.context["reason"]) == ("target_not_owned", "no_selected_tab")
    world.agents.add_managed(agent, "raw-2")
    assert routing.selected_tab(world, agent, None, create=False) == "raw-2"
    assert agent.selected == "raw-2"


def test_a_selected_tab_that_became_ineligible_is_forgotten_not_closed(world):
    agent = world.agent("agent-one")
    routing.select(world, agent, "raw-1", world.network_hub)
    opaque = agent.opaque_id("raw-1")
    world.targets.apply("Target.targetInfoChanged", {"targetInfo": page("raw-1", url="chrome://settings/")})
    with pytest.raises(BPError):
        routing.selected_tab(world, agent, None, create=False)
    assert agent.selected is None and opaque not in agent.raw_by_opaque
    assert world.targets.info("raw-1") is not None  # the tab itself is still open


def test_a_new_connection_generation_voids_every_mapping_of_an_agent(world):
    agent = world.agent("agent-one")
    routing.select(world, agent, "raw-1", world.network_hub)
    opaque = agent.opaque_id("raw-1")
    world.browser.generation = 2
    agent = world.agent("agent-one")
    assert agent.selected is None and agent.tabs == {} and opaque not in agent.raw_by_opaque
    with pytest.raises(BPError) as caught:
        routing.find_tab(world, agent, opaque)
    assert caught.value.code == "target_not_owned"


def test_agent_for_refuses_without_a_browser_unless_told_not_to(world):
    def no_browser():
        raise BPError("browser_disconnected", "not connected")

    world.browser.require = no_browser
    world.browser.connection = None
    with pytest.raises(BPError):
        routing.agent_for(world, SimpleNamespace(client="agent-one"))
    assert routing.agent_for(world, SimpleNamespace(client="agent-one"), require_browser=False).key == "agent-one"


class CreatingConnection:
    """The janitor creates the tab; Chrome reports it in `landed` (a fault: not where asked)."""

    def __init__(self, landed):
        self.landed = landed
        self.closed = []
        self.alive = True

    def janitor_call(self, method, params, timeout_s):
        assert method == "create"
        return {"targetId": "raw-new"}

    def cdp(self, method, params=None, timeout_s=None, **_):
        if method == "Target.getTargetInfo":
            return {"targetInfo": {"targetId": params["targetId"], "type": "page", "url": "about:blank", "title": "",
                                   "browserContextId": self.landed}}
        if method == "Target.closeTarget":
            self.closed.append(params["targetId"])
            return {"success": True}
        raise AssertionError(method)


def test_a_new_managed_tab_is_registered_with_the_context_read_back_and_refused_elsewhere(world):
    request = SimpleNamespace(client="agent-one", remaining=lambda: 10.0)
    agent = world.agent("agent-one")
    world.targets.wait_gone = lambda ids, timeout_s: []
    world.connection = world.browser.connection = CreatingConnection(landed="ctx-2")
    world.browser.require = lambda: world.connection
    with pytest.raises(BPError) as caught:
        routing.create_managed(world, agent, request, "about:blank", None)  # routed to ctx-1
    assert caught.value.code == "profile_context_unavailable"
    assert world.connection.closed == ["raw-new"] and "raw-new" not in dict(agent.managed_tabs())
    assert agent.selected is None
    world.connection.landed = "ctx-1"
    assert routing.create_managed(world, agent, request, "about:blank", None) == "raw-new"
    assert world.targets.info("raw-new")["browserContextId"] == "ctx-1"
    assert dict(agent.managed_tabs())["raw-new"] == agent.generation
