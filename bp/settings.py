"""Private settings for tests (not public flags), read once from the environment when a
process starts: the broker (broker/server.py main) and the janitor (janitor/relay.py main).
One object, instead of knobs each module read at import time. Every default is the product's;
a value that is not a positive number keeps it. Code reads `settings.current()` when it needs a
value, so a module imported before the process read its settings sees them anyway."""

import dataclasses
import os

MIB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Settings:
    handshake_timeout_s: float = 8.0  # the browser WebSocket's handshake
    lease_ttl_s: float = 300.0  # an Agent's control lease
    observation_ttl_s: float = 300.0  # how long an observation's refs stay usable
    max_refs: int = 10_000  # live refs of one ref table per document world
    dialog_hint_after_s: float = 10.0  # a dialog pending this long is hinted in the next observation
    artifact_item_max_bytes: int = 64 * MIB  # one private artifact (broker/files/artifacts.py)
    artifact_key_max_bytes: int = 256 * MIB  # all of one Agent key's artifacts
    artifact_total_max_bytes: int = 1024 * MIB  # all of the broker's artifacts
    artifact_ttl_s: float = 30 * 60.0  # an artifact's lifetime
    janitor_max_owned: int = 4096  # targets the janitor owns at most


# field: (environment variable, divisor from its unit to the field's)
_FROM_ENV = {
    "handshake_timeout_s": ("BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS", 1000.0),
    "lease_ttl_s": ("BROWSER_PILOT_LEASE_TTL_MS", 1000.0),
    "observation_ttl_s": ("BROWSER_PILOT_OBSERVATION_TTL_MS", 1000.0),
    "max_refs": ("BROWSER_PILOT_MAX_REFS", None),
    "dialog_hint_after_s": ("BROWSER_PILOT_DIALOG_HINT_MS", 1000.0),
    "artifact_item_max_bytes": ("BROWSER_PILOT_ARTIFACT_ITEM_MAX_BYTES", None),
    "artifact_key_max_bytes": ("BROWSER_PILOT_ARTIFACT_KEY_MAX_BYTES", None),
    "artifact_total_max_bytes": ("BROWSER_PILOT_ARTIFACT_TOTAL_MAX_BYTES", None),
    "artifact_ttl_s": ("BROWSER_PILOT_ARTIFACT_TTL_MS", 1000.0),
    "janitor_max_owned": ("BROWSER_PILOT_JANITOR_MAX_OWNED", None),
}


def from_env(environ):
    """Settings from an environment mapping (unset, malformed or non-positive: the default)."""
    changes = {}
    for field, (name, divisor) in _FROM_ENV.items():
        text = environ.get(name)
        if text is None:
            continue
        try:
            number = float(text) if divisor else int(text)
        except ValueError:
            continue
        if number > 0:
            changes[field] = number / divisor if divisor else number
    return Settings(**changes)


_current = Settings()


def current():
    return _current


def load(environ=None):
    """Read the settings of this process from its environment, once, at its start."""
    global _current
    _current = from_env(os.environ if environ is None else environ)
    return _current
