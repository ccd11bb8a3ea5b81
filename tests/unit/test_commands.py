"""Command records without a browser: lifecycle, fencing by generation, bounds."""

import pytest

from bp.errors import BPError
from broker.records import store


class FakeBrowser:
    generation = 1


def record(browser, n=0, mutating=True, request_id=None):
    return store.Record(f"cmd-{n:016d}", "click", mutating, 60.0, browser.generation, None, request_id, None, browser)


def failed_after_dispatch(code, retryable, reason=None):
    """A record whose input was dispatched, then finished with this failure: (record, its reply)."""
    failure = {"ok": False, "code": code, "error": "x", "retryable": retryable}
    if reason is not None:
        failure["context"] = {"reason": reason}
    r = record(FakeBrowser())
    r.dispatching()
    return r, r.finish(failure)


def test_lifecycle_and_descriptor():
    browser = FakeBrowser()
    r = record(browser)
    assert r.descriptor()["status"] == "accepted"
    r.dispatching()
    r.dispatching()  # idempotent
    reply = r.finish({"ok": True, "x": 1})
    assert reply == {"ok": True, "x": 1}
    d = r.descriptor()
    assert d["status"] == "completed" and d["method"] == "browser.click" and d["dispatchedAt"] <= d["completedAt"]


def test_cancel_before_dispatch_is_final_and_blocks_dispatch():
    r = record(FakeBrowser())
    assert r.cancel() == "cancelled"
    with pytest.raises(BPError) as exc:
        r.dispatching()
    assert exc.value.code == "command_cancelled"
    r.finish({"ok": False, "code": "command_cancelled", "error": "x", "retryable": False})
    assert r.status == "cancelled"


def test_a_queued_command_of_an_old_generation_never_dispatches():
    browser = FakeBrowser()
    r = record(browser)
    browser.generation = 2
    with pytest.raises(BPError) as exc:
        r.dispatching()
    assert exc.value.code == "browser_disconnected"


def test_generation_change_after_dispatch_fences_the_result():
    browser = FakeBrowser()
    mutation, read = record(browser, 1), record(browser, 2, mutating=False)
    mutation.dispatching()
    browser.generation = 2
    assert mutation.finish({"ok": True})["code"] == "unknown_outcome"
    assert mutation.status == "unknown_outcome"
    assert read.finish({"ok": True})["code"] == "browser_disconnected"


def test_lost_browser_after_dispatch_is_unknown_outcome():
    r, reply = failed_after_dispatch("browser_disconnected", retryable=True)
    assert reply["code"] == "unknown_outcome" and r.status == "unknown_outcome"


def test_records_are_bounded_per_key_oldest_finished_first():
    browser = FakeBrowser()
    book = store.Commands()
    live = record(browser, 0, request_id="keep-me")
    book.add(live)  # stays accepted: never dropped while in flight
    for n in range(1, store.MAX_RECORDS_PER_AGENT + 50):
        r = record(browser, n, request_id=f"r{n}")
        r.finish({"ok": True})
        book.add(r)
    assert len(book) <= store.MAX_RECORDS_PER_AGENT
    assert book.get(live.id) is live and book.by_request("keep-me") is live
    assert book.by_request("r1") is None  # the oldest finished ones went first
    assert book.by_request(f"r{store.MAX_RECORDS_PER_AGENT + 49}") is not None


def test_records_expire_by_age(monkeypatch):
    browser = FakeBrowser()
    book = store.Commands()
    old = record(browser, 1)
    old.finish({"ok": True})
    old.completed_at -= int(store.RECORD_TTL_S * 1000) + 1
    book.add(old)
    assert book.list() == []


def test_a_big_result_is_recorded_as_a_summary():
    r = record(FakeBrowser())
    reply = r.finish({"ok": True, "blob": "x" * (store.MAX_RESULT_BYTES + 10)})
    assert len(reply["blob"]) > store.MAX_RESULT_BYTES  # the live reply is untouched
    assert r.reply["resultOmitted"] is True


def test_book_forgets_a_key_and_bounds_keys():
    book = store.CommandBook()
    book.for_key("a").add(record(FakeBrowser()))
    book.forget("a")
    assert book.for_key("a", create=False) is None


def test_a_timeout_before_any_mutation_is_command_expired_never_unknown_outcome():
    timed_out = {"ok": False, "code": "unknown_outcome", "error": "x", "retryable": True,
                 "context": {"reason": "deadline"}}
    for mutating in (False, True):  # a read, or a mutation that had not sent its first input yet
        r = record(FakeBrowser(), mutating=mutating)
        reply = r.finish(dict(timed_out))
        assert reply["code"] == "command_expired" and reply["retryable"] is True, reply
        assert reply["context"] == {"reason": "deadline", "commandId": r.id}
        assert r.status == "expired"


def test_unknown_outcome_after_dispatch_carries_the_command_id():
    r, reply = failed_after_dispatch("unknown_outcome", retryable=True, reason="navigation_stalled")
    assert reply["code"] == "unknown_outcome" and reply["context"] == {"reason": "navigation_stalled", "commandId": r.id}
    assert r.status == "unknown_outcome"


def test_target_crashed_says_whether_input_was_dispatched():
    r, reply = failed_after_dispatch("target_crashed", retryable=False, reason="renderer_crashed")
    assert reply["context"] == {"reason": "renderer_crashed", "commandId": r.id, "dispatched": True}


def test_an_attempting_command_is_never_cancelled_for_certain_and_keeps_its_own_failure():
    """connect and disconnect act from their first step: a cancel after that only asks, and a
    failed connection is reported as such, not as an unknown outcome."""
    browser = FakeBrowser()
    connect = store.Record("cmd-0000000000000001", "connect", True, 60.0, 1, None, None, None, browser)
    connect.attempting()
    assert connect.cancel() == "dispatched"
    failed = {"ok": False, "code": "browser_disconnected", "message": "refused"}
    assert connect.finish(dict(failed))["code"] == "browser_disconnected"
    click = record(browser, 2)
    click.dispatching()
    assert click.finish(dict(failed))["code"] == "unknown_outcome"  # a mutation that reached the browser
    cancelled = store.Record("cmd-0000000000000003", "connect", True, 60.0, 1, None, None, None, browser)
    cancelled.cancel()
    with pytest.raises(BPError) as caught:
        cancelled.attempting()
    assert caught.value.code == "command_cancelled"
