"""Which targets Browser Pilot owns: the ones the janitor created and popups whose whole opener
chain is owned. Memory only; never written to disk. User tabs never enter this table, so the
EOF cleanup can never close one."""

from bp import settings


class Ownership:
    def __init__(self):
        self._opener = {}  # owned targetId -> owned opener targetId (None for created tabs)

    def __len__(self):
        return len(self._opener)

    def __contains__(self, target_id):
        return target_id in self._opener

    def add_created(self, target_id):
        if len(self._opener) >= settings.current().janitor_max_owned:
            return False
        self._opener[target_id] = None
        return True

    def adopt_popup(self, target_id, opener_id):
        """Own a new target only when its opener is owned (so the whole chain is)."""
        if not opener_id or opener_id not in self._opener or target_id in self._opener:
            return False
        if len(self._opener) >= settings.current().janitor_max_owned:
            return False
        self._opener[target_id] = opener_id
        return True

    def forget(self, target_id):
        self._opener.pop(target_id, None)

    def depth(self, target_id):
        depth, seen = 0, set()
        current = self._opener.get(target_id)
        while current is not None and current not in seen:
            seen.add(current)
            depth += 1
            current = self._opener.get(current)
        return depth

    def close_order(self):
        """Batches of targets to close, deepest descendants first."""
        by_depth = {}
        for target_id in self._opener:
            by_depth.setdefault(self.depth(target_id), []).append(target_id)
        return [by_depth[d] for d in sorted(by_depth, reverse=True)]
