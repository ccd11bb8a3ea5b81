"""broker.tabs.Workers without a browser: one command at a time per tab, tabs side by side,
deadlines (expired in the queue vs unknown once running) and cancellation of a queued command."""

import threading
from types import SimpleNamespace

import pytest

from bp.errors import BPError
from broker.records import store
from broker.tabs.session import Workers

WAIT_S = 10.0  # a bound for the test's own waits on events; never a speed assertion


@pytest.fixture
def workers():
    found = Workers()
    yield found
    found.stop_all()


def record(n=1):
    return store.Record(f"cmd-{n:016d}", "click", True, 60.0, 0, None, None, None, SimpleNamespace(generation=0))


def in_thread(fn):
    box = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_commands_on_one_tab_run_one_at_a_time_in_order(workers):
    release, started, order, running = threading.Event(), threading.Event(), [], []

    def first(worker):
        running.append(1)
        started.set()
        assert release.wait(WAIT_S)
        order.append("first")
        running.remove(1)
        return "a"

    def second(worker):
        assert not running  # the first has finished before the second starts
        order.append("second")
        return "b"

    t1, box1 = in_thread(lambda: workers.run("tab-a", first, timeout_s=WAIT_S))
    assert started.wait(WAIT_S)
    t2, box2 = in_thread(lambda: workers.run("tab-a", second, timeout_s=WAIT_S))
    release.set()
    t1.join(WAIT_S), t2.join(WAIT_S)
    assert (box1, box2, order) == ({"result": "a"}, {"result": "b"}, ["first", "second"])


def test_two_tabs_run_side_by_side(workers):
    b_ran = threading.Event()
    # Tab A's command waits for tab B's: serial workers would never let B run.
    t, box = in_thread(lambda: workers.run("tab-a", lambda w: b_ran.wait(WAIT_S), timeout_s=WAIT_S))
    assert workers.run("tab-b", lambda w: b_ran.set() or w.raw_id, timeout_s=WAIT_S) == "tab-b"
    t.join(WAIT_S)
    assert box == {"result": True}


def test_a_command_still_queued_at_its_deadline_expires_and_never_runs(workers):
    release, started, ran = threading.Event(), threading.Event(), []
    t, _ = in_thread(lambda: workers.run("tab-a", lambda w: started.set() or release.wait(WAIT_S), timeout_s=WAIT_S))
    assert started.wait(WAIT_S)
    with pytest.raises(BPError) as caught:
        workers.run("tab-a", lambda w: ran.append(1), timeout_s=0.2)
    assert caught.value.code == "command_expired" and caught.value.retryable
    release.set()
    t.join(WAIT_S)
    assert workers.run("tab-a", lambda w: "after", timeout_s=WAIT_S) == "after"
    assert ran == []  # the expired command was dropped from the queue


def test_a_command_running_at_its_deadline_is_unknown_outcome(workers):
    release = threading.Event()
    with pytest.raises(BPError) as caught:
        workers.run("tab-a", lambda w: release.wait(WAIT_S), timeout_s=0.2)
    assert caught.value.code == "unknown_outcome" and caught.value.context["reason"] == "deadline"
    release.set()


def test_a_queued_command_cancelled_by_its_agent_never_runs(workers):
    release, started, ran = threading.Event(), threading.Event(), []
    t1, _ = in_thread(lambda: workers.run("tab-a", lambda w: started.set() or release.wait(WAIT_S), timeout_s=WAIT_S))
    assert started.wait(WAIT_S)
    queued = record()

    def send():
        return workers.run("tab-a", lambda w: ran.append(1), timeout_s=WAIT_S, record=queued)

    t2, box = in_thread(send)
    assert queued.cancel() == "cancelled"
    t2.join(WAIT_S)
    assert box["error"].code == "command_cancelled"
    release.set()
    t1.join(WAIT_S)
    assert workers.run("tab-a", lambda w: "after", timeout_s=WAIT_S) == "after" and ran == []


def test_the_worker_works_for_the_command_it_is_handed_and_hands_back_its_errors(workers):
    mine = record(7)
    assert workers.run("tab-a", lambda w: w.record, timeout_s=WAIT_S, record=mine) is mine
    assert workers.run("tab-a", lambda w: w.record, timeout_s=WAIT_S) is None  # nothing lingers

    def fails(worker):
        raise BPError("target_not_owned", "gone")

    with pytest.raises(BPError) as caught:
        workers.run("tab-a", fails, timeout_s=WAIT_S)
    assert caught.value.code == "target_not_owned"


def test_sessions_are_only_the_live_ones_and_a_stopped_tab_gets_a_new_worker(workers):
    workers.run("tab-a", lambda w: setattr(w, "session", SimpleNamespace(alive=True, close=lambda: None)),
                timeout_s=WAIT_S)
    workers.run("tab-b", lambda w: setattr(w, "session", SimpleNamespace(alive=False, close=lambda: None)),
                timeout_s=WAIT_S)
    assert [raw for raw, _ in workers.sessions()] == ["tab-a"]
    assert workers.session("tab-a") is not None and workers.session("tab-b") is None
    workers.stop("tab-a")
    assert workers.session("tab-a") is None
    assert workers.run("tab-a", lambda w: w.session, timeout_s=WAIT_S) is None  # a fresh worker, no session
