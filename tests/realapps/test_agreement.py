"""Every real-app screen (tests/realapps/screens.py) agrees with Chromium's accessibility tree
(issue 26 item 7's goals): >= 99 % role/name agreement over the elements bp offers, and no
operable control Chromium exposes that bp neither offers nor gives a reason for. The measure is
tests/agreement/measure.py; tests/bench/bench_agreement.py prints the same table."""

import pytest

from tests.agreement.measure import measure, table
from tests.realapps.screens import SCREENS, open_screen
from tests import helpers

pytestmark = [pytest.mark.agreement, pytest.mark.realapps, pytest.mark.chromium]


@pytest.mark.parametrize("label,server,path,ready", SCREENS, ids=[s[0] for s in SCREENS])
def test_screen_agrees_with_chromium(label, server, path, ready, agent, request):
    app = request.getfixturevalue(server)
    observation = open_screen(helpers.BP, agent.env, app.url(agent.host, path), ready)
    assert observation.get("ok"), observation
    page = measure(agent.chromium, agent.env, observation["url"], label, observation=observation)
    report = table([page], detail=True)
    assert page.agreement >= 0.99, report
    assert not page.unexplained, report
    assert not page.duplicates, report
