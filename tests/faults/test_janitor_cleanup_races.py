"""The janitor against a fake broker (the test plays the broker's side of the pipe): tabs that
become Browser Pilot's during the EOF cleanup or at the ownership cap are never leaked."""

import json
import os

import pytest

from bp import janitor_pipe as jp
from tests import helpers
from tests.process.test_private_protocol import FakeBroker

pytestmark = pytest.mark.faults


def _target_created(broker):
    while True:
        _, payload = broker.expect({jp.CDP})
        if jp.peek_method(payload) == "Target.targetCreated":
            info = json.loads(payload)["params"]["targetInfo"]
            if info["type"] == "page" and not info.get("openerId"):
                return info["targetId"]


def test_create_answered_during_the_eof_cleanup_is_closed(chromium, home):
    broker = FakeBroker(chromium, home)
    try:
        owned = broker.call(1, "create")["result"]["targetId"]
        baseline = set(chromium.pages()) - {owned}
        broker.pipe.send_multipart([jp.CALL, json.dumps({"id": 2, "method": "create", "params": {}}).encode()])
        late = _target_created(broker)  # Chrome made it; its createTarget reply is on the way
        broker.proc.stdin.close()  # the broker dies now: EOF before the janitor reads that reply
        assert broker.proc.wait(10) == 0
        assert helpers.wait_until(lambda: not {owned, late} & set(chromium.pages()), timeout=5), chromium.pages()
        assert baseline <= set(chromium.pages())
    finally:
        broker.close()


def test_popup_refused_at_the_ownership_cap_is_closed(chromium, home):
    broker = FakeBroker(chromium, home, env=dict(os.environ, BROWSER_PILOT_JANITOR_MAX_OWNED="1"))
    try:
        tab = broker.call(1, "create", {"url": "about:blank#opener"})["result"]["targetId"]
        chromium.evaluate(tab, "window.open('about:blank#popup-at-cap'); 1")
        assert helpers.wait_until(lambda: not [t for t in chromium.pages().values() if t["url"].endswith("popup-at-cap")],
                                  timeout=5), "the popup over the cap stayed open, unowned"
        assert tab in chromium.pages() and broker.call(2, "status")["result"]["owned"] == 1
        broker.proc.stdin.close()
        assert broker.proc.wait(10) == 0
        assert helpers.wait_until(lambda: tab not in chromium.pages(), timeout=5)
    finally:
        broker.close()
