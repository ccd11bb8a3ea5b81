"""Agent namespaces: the state the broker keeps per client key, in memory only.

An Agent is selected by BROWSER_PILOT_CLIENT_KEY / --client-key. Every call renews its control
lease; a lease that runs out releases what the Agent held. Different keys never see each other:
each gets its own opaque ids for the same physical tab, and raw CDP ids never leave the broker.
"""

import collections
import dataclasses
import os
import threading
import time

from bp import settings
from bp.errors import BPError

MAX_AGENTS = 256
MAX_LAPSED = 1024  # keys remembered as lapsed (an Agent told once why it holds no tab)
MAX_TARGETS_PER_AGENT = 1024
MAX_POPUP_DEPTH = 32
MAX_OBSERVATIONS = 2048  # stored observations (refs) across all Agents; the oldest go first


def _too_many(what, limit):
    return BPError("result_too_large", f"Too many {what} (limit {limit}).", retryable=True,
                   context={"limit": what, "max": limit})


@dataclasses.dataclass(eq=False)
class AgentTab:
    """What one Agent holds of one tab (by raw target id), in one object: its opaque id, whether
    it was created for the Agent or is a user tab it controls, and what the Agent last saw there."""

    opaque: str | None = None  # "tab-…", this generation's
    managed: int | None = None  # the generation it was created in for this Agent
    controlled: bool = False  # a user tab this Agent controls
    observation: object = None  # the latest Observation (refs), memory only
    ref_table: object = None  # the RefTable of its current document (broker/observe/snapshot.py)
    streak: int = 0  # consecutive actions without progress (the watchdog, broker/actions/pipeline.py)
    frame: dict | None = None  # the selected frame {"frameId", "loader"} (broker/observe/frames.py)

    def forget_page(self):
        """What the Agent saw of the tab's page: void once it lets the tab go (its refs fail)."""
        self.observation = self.ref_table = self.frame = None
        self.streak = 0

    @property
    def empty(self):
        return (self.opaque is None and self.managed is None and not self.controlled and self.observation is None
                and self.ref_table is None and self.frame is None and not self.streak)


class Agent:
    def __init__(self, key, now, generation):
        self.key = key
        self.created_at = now
        self.lapsed_at = None  # when this key's previous lease ran out, until it is told (routing)
        self.lease_expires_at = now + settings.current().lease_ttl_s
        self.generation = generation
        self.connect_lock = threading.Lock()  # one `bp connect` at a time creates the first tab
        self._reset()

    def _reset(self):
        self.tabs = {}  # raw target id -> AgentTab
        self.raw_by_opaque = {}  # opaque id -> raw target id
        self.selected = None  # raw target id
        self.selected_profile = None  # browserContextId

    def tab(self, raw):
        """The AgentTab of raw, made when the Agent first holds or sees it."""
        held = self.tabs.get(raw)
        if held is None:
            held = self.tabs[raw] = AgentTab()
        return held

    def known(self, raw):
        """The AgentTab of raw, or None (never made by a read)."""
        return self.tabs.get(raw)

    def observation(self, raw):
        held = self.tabs.get(raw)
        return held.observation if held is not None else None

    def opaque_of(self, raw):
        """raw's opaque id if this Agent was given one, else None (never made by a read)."""
        held = self.tabs.get(raw)
        return held.opaque if held is not None else None

    def controls(self, raw):
        held = self.tabs.get(raw)
        return held is not None and held.controlled

    def managed_tabs(self):
        """[(raw, generation)] of the tabs created for this Agent."""
        return [(raw, held.managed) for raw, held in self.tabs.items() if held.managed is not None]

    def renew(self, now):
        self.lease_expires_at = now + settings.current().lease_ttl_s

    def lease_active(self, now):
        return now < self.lease_expires_at

    def enter_generation(self, generation):
        """A newer browser connection: every old mapping, selection and control is void."""
        if generation != self.generation:
            self.generation = generation
            self._reset()

    def opaque_id(self, raw):
        opaque = self.opaque_of(raw)
        if opaque is None:
            if len(self.raw_by_opaque) >= MAX_TARGETS_PER_AGENT:
                self._forget_oldest_unused()
            opaque = "tab-" + os.urandom(6).hex()
            self.tab(raw).opaque = opaque
            self.raw_by_opaque[opaque] = raw
        return opaque

    def _forget_oldest_unused(self):
        for opaque, raw in list(self.raw_by_opaque.items()):
            held = self.tabs.get(raw)
            if raw != self.selected and (held is None or (held.managed is None and not held.controlled)):
                del self.raw_by_opaque[opaque]
                if held is not None:
                    held.opaque = None
                    if held.empty:
                        del self.tabs[raw]
                return
        raise _too_many("targets per agent", MAX_TARGETS_PER_AGENT)

    def forget_target(self, raw):
        held = self.tabs.pop(raw, None)
        if held is not None and held.opaque:
            self.raw_by_opaque.pop(held.opaque, None)
        if self.selected == raw:
            self.selected = None

    def summary(self):
        return {"state": "active", "expiresAt": int(self.lease_expires_at * 1000),
                "managedTabs": sum(1 for _, g in self.managed_tabs() if g == self.generation)}


class Agents:
    def __init__(self, clock=time.time, limit=MAX_AGENTS, max_observations=MAX_OBSERVATIONS):
        self._clock = clock
        self._limit = limit
        self._agents = {}
        self._max_observations = max_observations
        self._observations = collections.OrderedDict()  # (key, raw) -> (Agent, Observation), oldest first
        self.lock = threading.RLock()
        self.control = {}  # raw target id -> key controlling it (user tabs)
        self.managed = {}  # raw target id -> key it was created for
        # Keys whose lease ran out, and when: the Agent that comes back is told why it holds no
        # tab (target_not_owned, reason lease_expired) instead of finding an empty inventory.
        self._lapsed = collections.OrderedDict()

    def touch(self, key, generation=0):
        """The Agent for key, created or with its lease renewed."""
        now = self._clock()
        with self.lock:
            agent = self._agents.get(key)
            if agent is None:
                if len(self._agents) >= self._limit:
                    error = _too_many("agents", self._limit)
                    error.remediation = {"code": "close_active_clients", "actionRequired": True,
                                         "message": "Run 'bp disconnect' in Agents that are done."}
                    raise error
                agent = self._agents[key] = Agent(key, now, generation)
                agent.lapsed_at = self._lapsed.pop(key, None)
            else:
                agent.renew(now)
            return agent

    def get(self, key):
        with self.lock:
            return self._agents.get(key)

    def remove(self, key):
        with self.lock:
            agent = self._agents.pop(key, None)
            if agent:
                self._drop_holdings(agent)
            return agent

    def _drop_holdings(self, agent):
        for raw in [r for r, k in self.control.items() if k == agent.key]:
            del self.control[raw]
        for raw in [r for r, k in self.managed.items() if k == agent.key]:
            del self.managed[raw]

    def active_keys(self, exclude=None):
        now = self._clock()
        with self.lock:
            return [k for k, a in self._agents.items() if k != exclude and a.lease_active(now)]

    def expired(self):
        """Remove and return Agents whose lease ran out (their control is released)."""
        now = self._clock()
        with self.lock:
            gone = [a for a in self._agents.values() if not a.lease_active(now)]
            for agent in gone:
                del self._agents[agent.key]
                self._drop_holdings(agent)
                self._lapsed[agent.key] = agent.lease_expires_at
                while len(self._lapsed) > MAX_LAPSED:
                    self._lapsed.popitem(last=False)
            return gone

    def __len__(self):
        return len(self._agents)

    # --- ownership and control -------------------------------------------------------------------

    def add_managed(self, agent, raw):
        with self.lock:
            agent.tab(raw).managed = agent.generation
            self.managed[raw] = agent.key

    def owner(self, raw, popups):
        """(key, origin) of whoever holds raw: the Agent it was created for, the Agent owning the
        root of its opener chain (popups the janitor proved), or the Agent controlling it."""
        with self.lock:
            key = self.managed.get(raw)
            if key:
                return key, "managed"
            current, depth = popups.get(raw), 0
            while current is not None and depth < MAX_POPUP_DEPTH:
                key = self.managed.get(current)
                if key:
                    return key, "managed_popup"
                current, depth = popups.get(current), depth + 1
            return self.control.get(raw), "user_tab"

    def check_free(self, agent, raw, popups):
        """target_busy when another live Agent holds raw. Checked before anything looks at the
        page (the person's bounds included), so another Agent's tab is refused without a word
        about where it is."""
        with self.lock:
            holder, origin = self.owner(raw, popups)
            if holder and holder != agent.key:
                other = self._agents.get(holder)
                if other is not None and other.lease_active(self._clock()):
                    raise BPError("target_busy", "Another Agent controls this tab.", retryable=True,
                                  context={"origin": origin})
            return holder, origin

    def acquire(self, agent, raw, popups):
        """Control raw for agent, or target_busy when another live Agent holds it."""
        with self.lock:
            holder, origin = self.check_free(agent, raw, popups)
            if holder and holder != agent.key:
                self.control.pop(raw, None)
            if origin == "user_tab":
                self.control[raw] = agent.key
                agent.tab(raw).controlled = True
            return origin

    def release(self, agent, raw):
        with self.lock:
            if self.control.get(raw) == agent.key:
                del self.control[raw]
            held = agent.known(raw)
            if held is not None:
                held.controlled = False
                held.forget_page()  # released control invalidates its refs

    def store_observation(self, agent, raw, obs):
        """Make obs the Agent's latest observation of raw (superseding the previous one) within
        the broker-wide bound: observations past their lifetime leave first, then the oldest
        beyond MAX_OBSERVATIONS. An evicted observation stays as a light tombstone, so its refs
        fail with stale_ref reason `expired` rather than looking like no snapshot at all."""
        with self.lock:
            agent.tab(raw).observation = obs
            stored = self._observations
            stored.pop((agent.key, raw), None)
            stored[(agent.key, raw)] = (agent, obs)
            while stored:
                _, (_, oldest) = next(iter(stored.items()))
                if not oldest.expired():
                    break
                stored.popitem(last=False)[1][1].evict()
            if len(stored) <= self._max_observations:
                return
            for slot, (holder, held) in list(stored.items()):  # superseded or dropped: not counted
                if holder.observation(slot[1]) is not held or self._agents.get(holder.key) is not holder:
                    del stored[slot]
            while len(stored) > self._max_observations:
                stored.popitem(last=False)[1][1].evict()

    def forget_target(self, raw):
        with self.lock:
            self.control.pop(raw, None)
            self.managed.pop(raw, None)
            for agent in self._agents.values():
                agent.forget_target(raw)

    def all(self):
        with self.lock:
            return list(self._agents.values())
