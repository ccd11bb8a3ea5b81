"""Agent namespaces: the state the broker keeps per client key, in memory only.

An Agent is selected by BROWSER_PILOT_CLIENT_KEY / --client-key. Every call renews its control
lease; a lease that runs out releases what the Agent held. Different keys never see each other.
"""

import threading
import time

from bp.errors import BPError

LEASE_TTL_S = 300.0
MAX_AGENTS = 256


class Agent:
    def __init__(self, key, now):
        self.key = key
        self.created_at = now
        self.lease_expires_at = now + LEASE_TTL_S
        # Managed tabs this Agent asked for: raw target id -> browser generation. Internal only.
        self.managed_targets = {}

    def renew(self, now):
        self.lease_expires_at = now + LEASE_TTL_S

    def lease_active(self, now):
        return now < self.lease_expires_at

    def summary(self, generation):
        live = [t for t, g in self.managed_targets.items() if g == generation]
        return {"state": "active", "expiresAt": int(self.lease_expires_at * 1000), "managedTabs": len(live)}


class Agents:
    def __init__(self, clock=time.time, limit=MAX_AGENTS):
        self._clock = clock
        self._limit = limit
        self._agents = {}
        self.lock = threading.RLock()

    def touch(self, key):
        """The Agent for key, created or with its lease renewed."""
        now = self._clock()
        with self.lock:
            agent = self._agents.get(key)
            if agent is None:
                if len(self._agents) >= self._limit:
                    raise BPError("result_too_large", f"The service already holds {self._limit} Agent namespaces.",
                                  retryable=True, context={"limit": "agents", "max": self._limit},
                                  remediation={"code": "close_active_clients", "actionRequired": True,
                                               "message": "Run 'bp disconnect' in Agents that are done."})
                agent = self._agents[key] = Agent(key, now)
            else:
                agent.renew(now)
            return agent

    def get(self, key):
        with self.lock:
            return self._agents.get(key)

    def remove(self, key):
        with self.lock:
            return self._agents.pop(key, None)

    def active_keys(self, exclude=None):
        now = self._clock()
        with self.lock:
            return [k for k, a in self._agents.items() if k != exclude and a.lease_active(now)]

    def expired(self):
        """Remove and return Agents whose lease ran out."""
        now = self._clock()
        with self.lock:
            gone = [a for a in self._agents.values() if not a.lease_active(now)]
            for agent in gone:
                del self._agents[agent.key]
            return gone

    def __len__(self):
        return len(self._agents)
