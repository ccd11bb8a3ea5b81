"""Evidence collection without a browser: how an action's Watch decides the page has answered
(broker/actions/input.py). The session is a stand-in that plays back DOM change counts; the
rule under test is the broker's own."""

from types import SimpleNamespace

import pytest

from bp.errors import BPError
from broker.actions import input as actions


class PageStandIn:
    """What Watch uses of a TabSession: its world, Runtime.evaluate, the dialog and loader."""

    def __init__(self, counts, watch_fails=False):
        self.counts = list(counts)  # the DOM change count each poll reads, the last one repeated
        self.watch_fails = watch_fails
        self.loader = "loader-1"
        self.dialog = False
        self.polls = 0
        self.stopped = False
        self.on_poll = None  # (poll number) -> None, to change the page mid-wait

    def world(self, name):
        return 7, None

    def forget_world(self):
        pass

    def dialog_open(self):
        return self.dialog

    def call(self, method, params, timeout_s=None, abort=None):
        assert method == "Runtime.evaluate" and params["contextId"] == 7
        if "w.count += w.observer" not in params["expression"]:  # focus.js starting the watch
            if self.watch_fails:
                raise BPError("internal_error", "the watch could not start")
            return {"result": {"value": {}}}
        self.polls += 1
        if "disconnect()" in params["expression"]:
            self.stopped = True
        if self.on_poll is not None:
            self.on_poll(self.polls)
        value = self.counts[min(self.polls - 1, len(self.counts) - 1)]
        return {"result": {"value": value}}


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    # The same rule with shorter clocks: quiet after 3 polls without change, at most 0.5 s.
    monkeypatch.setattr(actions, "QUIET_POLL_S", 0.005)
    monkeypatch.setattr(actions, "QUIET_S", 0.015)
    monkeypatch.setattr(actions, "QUIET_MAX_S", 0.5)


def watch(page):
    return actions.Watch(SimpleNamespace(), SimpleNamespace(key="agent-one"), page)


def far():
    return actions.time.monotonic() + 60.0


def test_the_page_is_settled_once_its_changes_stop_and_the_watch_is_ended():
    page = PageStandIn([0, 2, 5, 5])
    assert watch(page).quiet(far()) == 5
    assert page.stopped  # the observer is disconnected in the page, not left running


def test_a_page_that_never_stops_changing_is_observed_at_the_bound():
    page = PageStandIn(list(range(100_000)))
    count = watch(page).quiet(far())
    assert count is not None and count > 3
    assert page.polls < 1000  # bounded by QUIET_MAX_S (0.5 s of 5 ms polls), not by the page


def test_typing_that_changed_no_dom_is_settled_at_once():
    page = PageStandIn([0])
    assert watch(page).quiet(far(), only_if_changed=True) == 0
    assert page.polls == 2  # one count, then the stop: no waiting


def test_a_dialog_or_a_new_document_makes_the_count_unknown():
    page = PageStandIn([0, 1, 2, 3])
    page.on_poll = lambda n: setattr(page, "dialog", n >= 2)
    assert watch(page).quiet(far()) is None
    page = PageStandIn([0, 1, 2, 3])
    page.on_poll = lambda n: setattr(page, "loader", "loader-2") if n >= 2 else None
    assert watch(page).quiet(far()) is None


def test_a_watch_that_could_not_start_claims_nothing():
    page = PageStandIn([0, 1], watch_fails=True)
    assert watch(page).quiet(far()) is None
    assert page.polls == 0


def test_the_commands_deadline_bounds_the_wait():
    page = PageStandIn(list(range(100_000)))
    deadline = actions.time.monotonic() + 1.0  # less than a second left: no waiting at all
    assert watch(page).quiet(deadline) is not None
    assert page.polls == 2
