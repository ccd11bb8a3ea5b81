"""The observation of every corpus page (tests/corpus.py) agrees with Chromium's accessibility
tree (issue 26 item 7's goals): >= 99 % role/name agreement over the elements bp offers, and no
operable control Chromium exposes that bp neither offers nor gives a reason for. The measure is
tests/agreement/measure.py; tests/bench/bench_agreement.py prints the same table."""

import shutil

import pytest

from tests import helpers
from tests.agreement.measure import BP_LIMIT, bp_json, measure, table
from tests.corpus import CASES

pytestmark = [pytest.mark.agreement, pytest.mark.chromium]


@pytest.fixture(scope="module")
def agent_env(chromium):
    home = helpers.short_tmpdir("bpag-")
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=chromium.root)
    assert helpers.bp(home, "connect", env=env).rc == 0
    yield env
    helpers.stop_brokers(home)
    shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_corpus_page_agrees_with_chromium(case, agent_env, chromium, pages):
    observation = bp_json(helpers.BP, agent_env, "open", pages.url(f"/corpus/{case}"), "--limit", BP_LIMIT)
    assert observation.get("ok"), observation
    page = measure(chromium, agent_env, observation["url"], case, observation=observation)
    report = table([page], detail=True)
    assert page.agreement >= 0.99, report
    assert not page.unexplained, report
    assert not page.duplicates, report
