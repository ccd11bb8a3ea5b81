import pytest

from tests.helpers import bp


@pytest.fixture
def connected_baseline(home, chromium, env_for):
    """The default Agent connected; returns (env, baseline), baseline being the browser's tabs
    from before the connect (so `leftover` counts that Agent's managed tab and what follows)."""
    env = env_for(home)
    baseline = set(chromium.pages())
    assert bp(home, "connect", env=env).rc == 0
    return env, baseline
