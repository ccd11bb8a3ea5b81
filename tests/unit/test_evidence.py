"""The settle without a browser (broker/actions/settle.py): when an action's answer is taken.
The session is a stand-in that plays back what the page's tracker reports at each poll, and the
journal hook is fed request events as Chrome would send them; the rule under test is the
broker's own. (These replace the tests of the old 120 ms DOM-quiet clock, which issue 25 removed.)"""

import time
from types import SimpleNamespace

import pytest

from bp.errors import BPError
from broker.actions import settle as settling
from broker.network.journal import Hub


class PageStandIn:
    """What Settle uses of a TabSession: Runtime calls, events, the dialog and the loader."""

    def __init__(self, states, arm_fails=False):
        self.states = list(states)  # the tracker's answer at each poll, the last one repeated
        self.arm_fails = arm_fails
        self.raw_id = "tab-1"
        self.tab_raw_id = None
        self.loader = "loader-1"
        self.frame_id = "frame-1"
        self.dialog = False
        self.polls = 0
        self.stopped = False
        self.on_poll = None  # (poll number) -> None, to change the page mid-wait
        self.settling = None

    def dialog_open(self):
        return self.dialog

    def mark(self):
        return 0

    def wait_for(self, predicate, since, timeout_s):
        return None

    def next_event(self, predicate, since, timeout_s):
        return None

    def send_nowait(self, method, params=None):
        if method == "Runtime.callFunctionOn" and "stop()" in params["functionDeclaration"]:
            self.stopped = True  # the tracker is told to stop without waiting for its answer

    def call_later(self, method, params=None):
        """As TabSession.call_later: sent now, its answer (or error) read with result()."""
        return SimpleNamespace(result=lambda timeout_s=None, abort=None: self.call(method, params), drop=lambda: None)

    def call(self, method, params=None, timeout_s=None, abort=None):
        if method == "Runtime.evaluate" and "timerMax" in params["expression"]:
            if self.arm_fails:
                raise BPError("internal_error", "the tracker could not start")
            return {"result": {"objectId": "tracker-1"}}
        if method == "Runtime.evaluate":
            return {"result": {"value": 0}}  # the round trip of the navigation check
        assert method == "Runtime.callFunctionOn" and params["objectId"] == "tracker-1"
        if "stop()" in params["functionDeclaration"]:
            self.stopped = True
            return {"result": {}}
        self.polls += 1
        if self.on_poll is not None:
            self.on_poll(self.polls)
        return {"result": {"value": dict(self.states[min(self.polls - 1, len(self.states) - 1)])}}


def state(mutations=0, quiet_ms=0, timers=0, frames=0, debounced=False):
    return {"mutations": mutations, "quietMs": quiet_ms, "timers": timers, "frames": frames, "debounced": debounced}


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(settling, "POLL_S", 0.005)
    monkeypatch.setattr(settling, "SETTLE_MAX_S", 0.5)
    monkeypatch.setattr(settling, "DEBOUNCE_GRACE_S", 0.1)


def armed(page, hub=None):
    page.network_hub = hub
    return settling.Settle(page, "tab-1")


def far():
    return time.monotonic() + 60.0


def test_an_action_that_caused_nothing_answers_at_the_first_look():
    page = PageStandIn([state()])
    record = armed(page).wait(far())
    assert record["status"] == "quiet"
    assert page.polls == 1  # one look, no waiting
    assert page.stopped  # the tracker is disarmed in the page, not left running


def test_the_dom_must_be_quiet_for_the_window_after_its_last_change():
    page = PageStandIn([state(2, 0), state(5, 10), state(5, 30), state(5, 60)])
    record = armed(page).wait(far())
    assert record["status"] == "settled"
    assert page.polls == 4  # taken when quietMs passed QUIET_S (50 ms), not before


def test_pending_timers_hold_the_answer_until_they_fire():
    page = PageStandIn([state(0, 0, timers=1), state(0, 0, timers=1), state(3, 60)])
    assert armed(page).wait(far())["status"] == "settled"
    assert page.polls == 3


def test_a_page_that_never_stops_changing_is_capped_and_says_so():
    page = PageStandIn([state(n, 0) for n in range(1, 100_000)])
    record = armed(page).wait(far())
    assert record["status"] == "capped"
    assert record["pending"] == {"domChanging": True}
    assert page.polls < 1000  # bounded by SETTLE_MAX_S, not by the page


def test_the_commands_deadline_bounds_the_wait():
    page = PageStandIn([state(n, 0) for n in range(1, 100_000)])
    deadline = time.monotonic() + settling.OBSERVE_RESERVE_S  # nothing left for waiting
    assert armed(page).wait(deadline)["status"] == "capped"
    assert page.polls == 1


def test_a_dialog_ends_the_wait_at_once():
    page = PageStandIn([state(1, 0)])
    page.on_poll = lambda n: setattr(page, "dialog", True)
    assert armed(page).wait(far())["status"] == "settled"


def test_a_tracker_that_could_not_start_leaves_the_requests_to_decide():
    page = PageStandIn([state()], arm_fails=True)
    assert armed(page).wait(far())["status"] == "quiet"
    assert page.polls == 0


def _hub():
    hub = Hub.__new__(Hub)  # only the settle hook of the journal: no broker needed
    import threading

    hub.lock, hub.settles = threading.RLock(), ()
    return hub


def test_a_caused_request_is_awaited_and_an_ignored_one_is_not():
    hub = _hub()
    page = PageStandIn([state()])
    settle = armed(page, hub)
    session = SimpleNamespace(tab_raw_id=None, raw_id="tab-1")
    hub._tell(session, "Network.requestWillBeSent", "ws-1", {"type": "WebSocket", "request": {"url": "ws://x/"}}, 0)
    hub._tell(session, "Network.requestWillBeSent", "r-1",
              {"type": "Fetch", "request": {"url": "http://127.0.0.1/api?q=secret"}}, time.monotonic())
    page.on_poll = lambda n: n == 3 and hub._tell(session, "Network.loadingFinished", "r-1", b"{}", time.monotonic())
    record = settle.wait(far())
    assert record["status"] == "settled"
    assert page.polls >= 3  # held until the request finished
    assert hub.settles == ()  # the hook is gone with the settle


def test_a_request_past_its_bound_is_reported_with_a_redacted_url(monkeypatch):
    monkeypatch.setattr(settling, "REQUEST_BOUND_S", 0.02)
    hub = _hub()
    page = PageStandIn([state()])
    settle = armed(page, hub)
    session = SimpleNamespace(tab_raw_id=None, raw_id="tab-1")
    hub._tell(session, "Network.requestWillBeSent", "r-1",
              {"type": "XHR", "request": {"url": "http://user@127.0.0.1:8080/poll/x?token=secret#f"}}, time.monotonic())
    record = settle.wait(far())
    assert record["status"] == "capped"
    assert record["pending"] == {"requests": 1, "urls": ["http://127.0.0.1:8080/poll/x?…"]}


def test_a_debounced_field_gets_its_grace_for_a_request_to_start():
    page = PageStandIn([state(debounced=True)])
    started = time.monotonic()
    assert armed(page).wait(far(), debounce=True)["status"] == "quiet"
    assert time.monotonic() - started >= settling.DEBOUNCE_GRACE_S
    page = PageStandIn([state(debounced=False)])
    started = time.monotonic()
    armed(page).wait(far(), debounce=True)
    assert time.monotonic() - started < settling.DEBOUNCE_GRACE_S  # not a search box: no grace


def test_a_capped_settle_never_claims_no_change():
    page = PageStandIn([state(n, 0) for n in range(1, 100_000)])
    settling.begin(page, "tab-1")
    settling.end(page, time.monotonic() + 1.2)
    evidence = settling.finish(page, {"action": "click", "status": "unavailable", "reason": "no_observable_effect"})
    assert evidence["settle"]["status"] == "capped"
    assert evidence["reason"] == "answer_pending"
    assert page.settling is None


def test_navigation_is_left_to_the_navigation_settle(monkeypatch):
    monkeypatch.setattr(settling, "navigation", lambda session, since, deadline, loader=None, **_: "navigation")
    page = PageStandIn([state()])
    assert armed(page).wait(far())["status"] == "navigated"


def test_an_element_still_animating_into_place_is_waited_for_not_refused(monkeypatch):
    from broker.actions import inputs

    answers = [BPError("action_not_verified", "no layout", context={"reason": "no_layout"}),
               BPError("action_not_verified", "covered", context={"reason": "obscured"}), {"x": 1, "y": 2}]

    def resolve(*args, **kwargs):
        answer = answers.pop(0)
        if isinstance(answer, BPError):
            raise answer
        return answer

    monkeypatch.setattr(inputs.snapshot, "resolve", resolve)
    monkeypatch.setattr(inputs, "SETTLING_POLL_S", 0.001)
    page = PageStandIn([state()])
    # It says it waited: the click arms its settle again (what moved meanwhile is not its doing).
    assert inputs.resolve_steady(None, None, "tab-1", page, 3, far()) == {"x": 1, "y": 2, "steadied": True}
    answers.append({"x": 3, "y": 4})
    assert inputs.resolve_steady(None, None, "tab-1", page, 3, far()) == {"x": 3, "y": 4}


def test_a_refusal_that_lasts_or_is_of_another_kind_is_the_actions_refusal(monkeypatch):
    from broker.actions import inputs

    calls = []

    def resolve(*args, **kwargs):
        calls.append(1)
        raise BPError("action_not_verified", "disabled", context={"reason": "disabled"})

    monkeypatch.setattr(inputs.snapshot, "resolve", resolve)
    with pytest.raises(BPError):
        inputs.resolve_steady(None, None, "tab-1", PageStandIn([state()]), 3, far())
    assert len(calls) == 1  # a disabled control is refused at once
    monkeypatch.setattr(inputs, "SETTLING_WAIT_S", 0.05)
    monkeypatch.setattr(inputs, "SETTLING_POLL_S", 0.005)
    monkeypatch.setattr(inputs.snapshot, "resolve", lambda *a, **k: (_ for _ in ()).throw(
        BPError("action_not_verified", "no layout", context={"reason": "no_layout"})))
    started = time.monotonic()
    with pytest.raises(BPError):
        inputs.resolve_steady(None, None, "tab-1", PageStandIn([state()]), 3, far())
    assert time.monotonic() - started < 1.0  # bounded by SETTLING_WAIT_S


def test_every_actions_evidence_is_read_against_one_effect_vocabulary():
    from broker.actions.evidence import Effect, Evidence, reply_form

    # A dict from an action not built on Evidence keeps its fields, and its effects are checked.
    scrolled = {"action": "scroll", "moved": True, "status": "verified"}
    assert reply_form(scrolled) == scrolled  # no effects list: none is added
    uploaded = {"action": "upload", "expectedFileCount": 1, "effects": ["input_cleared_by_page"], "status": "verified"}
    assert reply_form(uploaded) == uploaded
    with pytest.raises(ValueError):
        reply_form({"action": "click", "effects": ["content_chnaged"], "status": "verified"})
    # Built on Evidence: verified by its effects, or unavailable when it saw none.
    clicked = Evidence("click", "control")
    assert clicked.by_effects().to_json() == {"action": "click", "kind": "control", "effects": [],
                                              "status": "unavailable", "reason": "no_observable_effect"}
    clicked.add("focus_changed")
    clicked.add(Effect.FOCUS_CHANGED)  # once
    assert clicked.by_effects().to_json()["effects"] == ["focus_changed"]
    assert "reason" not in clicked.to_json()
    typed = Evidence("type", "text", facts={"beforeLength": 0}, listed=False).verified()
    assert typed.to_json() == {"action": "type", "kind": "text", "beforeLength": 0, "status": "verified"}
