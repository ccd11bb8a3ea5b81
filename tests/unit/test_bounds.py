"""Every bounded collection filled past its bound, without a browser (fakes stand in where real
Chromium cannot reach the bound quickly): what is dropped is counted or refused, never silent.
Also the lazily parsed network journal (raw Network events, parsed when the journal is read)."""

import json
import threading
from types import SimpleNamespace

import pytest

from bp.errors import BPError
from bp.policy import Policy
from broker.files import artifacts
from broker.tabs import dialogs
from broker.files import downloads
from broker.network import journal as network
from broker.network import console as console_journal
from broker.network import entries
from broker.network import interception
from broker.browser import targets
from broker.commands import tabs as tab_handlers
from broker.tabs.session import FrameSessions, Workers, dialog_record


def fake_broker(sessions=None, owner="agent-a"):
    agent = SimpleNamespace(key=owner, opaque_id=lambda raw: f"tab-{raw}")
    agents = SimpleNamespace(owner=lambda raw, popups: (owner, "managed"), get=lambda key: agent if key == owner else None)
    workers = SimpleNamespace(sessions=lambda: list((sessions or {}).items()))
    browser = SimpleNamespace(popups=lambda: {}, targets=SimpleNamespace(info=lambda raw: {"url": "https://a.test/"}))
    return SimpleNamespace(agents=agents, browser=browser, workers=workers, policy=Policy.none()), agent


class FakeSession(FrameSessions):
    """A tab session as the journal sees it: its ids, its sends, the per-feature state it declares."""

    alive = True

    def __init__(self, session_id="S1", raw_id="raw-1"):
        self.session_id, self.raw_id = session_id, raw_id
        self.sent = []
        self.dialog = None

    def send_nowait(self, method, params=None):
        self.sent.append(method)


def event(method, session_id="S1", **params):
    """A CDP event as Chrome writes it: method, params (requestId first), then sessionId."""
    return json.dumps({"method": method, "params": params, "sessionId": session_id}, separators=(",", ":")).encode()


# --- network journal: parsed lazily, total, data: URLs, 500 entries, 64 rules ---------------------

def test_raw_network_events_are_journaled_unparsed_until_read():
    broker, agent = fake_broker()
    hub = network.Hub(broker.policy, broker.agents, broker.browser, broker.workers)
    session = FakeSession()
    url = "data:image/png;base64," + "A" * 5000
    for method, params in (("Network.requestWillBeSent", {"requestId": "1.1", "request": {"method": "GET", "url": url},
                                                          "type": "Image"}),
                           ("Network.responseReceived", {"requestId": "1.1", "type": "Image",
                                                         "response": {"status": 200, "mimeType": "image/png"}}),
                           ("Network.loadingFinished", {"requestId": "1.1", "encodedDataLength": 3750}),
                           ("Network.dataReceived", {"requestId": "1.1", "dataLength": 10})):
        assert hub.raw_event(session, method, event(method, **params)) is True
    state = hub.state(agent)
    entry = next(iter(state.entries.values()))
    assert len(entry.pending) == 3 and entry.url == "" and state.pending_bytes > 5000  # not parsed yet
    listed = network.list_requests(hub, agent, {"limit": 20})
    assert listed["total"] == 1 and state.pending_bytes == 0 and entry.pending == []
    row = listed["requests"][0]
    assert row["url"] == url[:entries.DATA_URL_PREFIX] and row["urlLength"] == len(url)
    assert (row["type"], row["status"], row["size"], row["mimeType"]) == ("image", 200, 3750, "image/png")
    # An event the head regex cannot route is left to the usual (parsed) path.
    assert hub.raw_event(session, "Network.requestWillBeSent", b'{"method":"Network.requestWillBeSent","params":{}}') \
        is False


def test_a_redirect_ends_the_first_entry_and_starts_the_next():
    broker, agent = fake_broker()
    hub = network.Hub(broker.policy, broker.agents, broker.browser, broker.workers)
    session = FakeSession()
    hub.raw_event(session, "Network.requestWillBeSent", event("Network.requestWillBeSent", requestId="7",
                                                               request={"url": "https://a.test/old"}, type="Document"))
    hub.raw_event(session, "Network.requestWillBeSent", event(
        "Network.requestWillBeSent", requestId="7", request={"url": "https://a.test/new"}, type="Document",
        redirectResponse={"status": 302}))
    rows = network.list_requests(hub, agent, {"limit": 20})["requests"]
    assert [(r["url"], r.get("status")) for r in rows] == [("https://a.test/old", 302), ("https://a.test/new", None)]


def test_journal_is_bounded_filtered_and_total_counts_every_match():
    state = network.KeyState(agent=None)
    session = SimpleNamespace(session_id="s1")
    for i in range(entries.MAX_ENTRIES + 5):
        state.seq += 1
        entry = entries.Entry(state.seq, session, f"r{i}")
        entry.request({"method": "GET", "url": f"https://x.test/{i}"}, "Fetch")
        entry.status = 404 if i % 2 else 200
        state.add(entry)
    assert len(state.entries) == entries.MAX_ENTRIES and state.dropped == 5
    assert len(state.by_request) == entries.MAX_ENTRIES
    hub = network.Hub(Policy.none(), None, None, None)
    hub.state = lambda agent: state
    result = network.list_requests(hub, None, {"limit": 3, "status": "4xx"})
    assert [r["status"] for r in result["requests"]] == [404, 404, 404] and result["truncated"] is True
    assert result["total"] == entries.MAX_ENTRIES // 2 and result["dropped"] == 5
    assert result["requests"][-1]["id"] == f"req-{entries.MAX_ENTRIES + 4}"  # the latest
    paged = network.list_requests(hub, None, {"limit": 2, "after": "req-6"})
    assert [r["id"] for r in paged["requests"]] == ["req-7", "req-8"] and paged["nextCursor"] == "req-8"
    assert paged["total"] == entries.MAX_ENTRIES + 5 - 6
    long = entries.Entry(1, session, "r")
    long.request({"url": "u" * 20000}, None)
    assert long.row()["url"] == "u" * entries.MAX_URL and long.row()["urlLength"] == 20000


def test_the_65th_rule_is_refused():
    broker, agent = fake_broker()
    hub = network.Hub(broker.policy, broker.agents, broker.browser, broker.workers)
    for i in range(interception.MAX_RULES):
        interception.add_rule(hub, agent, {"type": "block", "pattern": f"*/{i}"})
    with pytest.raises(BPError) as refused:
        interception.add_rule(hub, agent, {"type": "block", "pattern": "*/one-more"})
    assert refused.value.code == "result_too_large" and refused.value.context == {"limit": "rules", "max": 64}
    assert len(interception.list_rules(hub, agent)["rules"]) == interception.MAX_RULES


def test_console_past_500_and_errors_past_200_are_counted_as_dropped():
    broker, agent = fake_broker()
    hub = network.Hub(broker.policy, broker.agents, broker.browser, broker.workers)
    session = FakeSession()
    for i in range(console_journal.MAX_CONSOLE + 7):
        hub.listener(session, "Runtime.consoleAPICalled", {"type": "log", "args": [{"type": "string", "value": f"m{i}"}]})
    for i in range(console_journal.MAX_ERRORS + 3):
        hub.listener(session, "Runtime.exceptionThrown", {"exceptionDetails": {"text": f"e{i}"}})
    console = console_journal.console_rows(hub, agent, {"limit": 2})
    assert console["total"] == console_journal.MAX_CONSOLE and console["dropped"] == 7 and console["truncated"] is True
    assert [m["text"] for m in console["messages"]] == [f"m{console_journal.MAX_CONSOLE + 5}", f"m{console_journal.MAX_CONSOLE + 6}"]
    errors = console_journal.error_rows(hub, agent, {"limit": 50})
    assert errors["total"] == console_journal.MAX_ERRORS and errors["dropped"] == 3 and len(errors["errors"]) == 50
    # The logged values' handles are let go now and then (Chrome keeps them for the frontend).
    assert session.sent.count("Runtime.releaseObjectGroup") == (console_journal.MAX_CONSOLE + 7) // console_journal.CONSOLE_RELEASE_EVERY


# --- targets, profile contexts, tab workers, dialogs ------------------------------------------------

def test_targets_past_the_table_and_contexts_past_128_make_tabs_and_profiles_truncated():
    table = targets.Targets()
    for i in range(targets.MAX_TARGETS + 3):
        table.apply("Target.targetCreated", {"targetInfo": {"targetId": f"t{i}", "type": "page", "url": "https://a.test/",
                                                            "browserContextId": f"ctx{i % 200}"}})
    assert len(table.infos) == targets.MAX_TARGETS and table.untracked == 3
    assert len(table.profile_ids) == targets.MAX_PROFILE_CONTEXTS
    assert table.unlisted_contexts() == 200 - targets.MAX_PROFILE_CONTEXTS
    broker = SimpleNamespace(browser=SimpleNamespace(targets=table))
    assert tab_handlers._bounded(broker) == {"truncated": True, "untrackedTargets": 3,
                                             "unlistedProfiles": 200 - targets.MAX_PROFILE_CONTEXTS}
    # The untracked ones close (the table never knew them), then the listed contexts' pages.
    for i in range(targets.MAX_TARGETS, targets.MAX_TARGETS + 3):
        table.apply("Target.targetDestroyed", {"targetId": f"t{i}"})
    for i in range(targets.MAX_TARGETS):
        if i % 200 >= targets.MAX_PROFILE_CONTEXTS:
            table.apply("Target.targetDestroyed", {"targetId": f"t{i}"})
    assert table.untracked == 0 and tab_handlers._bounded(broker) == {"truncated": False}


def test_the_tab_worker_past_the_bound_is_refused(monkeypatch):
    from broker.tabs import session as tabs

    monkeypatch.setattr(tabs, "MAX_WORKERS", 3)
    workers = Workers()
    try:
        for raw in ("a", "b", "c"):
            assert workers.run(raw, lambda worker: worker.raw_id, timeout_s=10.0) == raw
        with pytest.raises(BPError) as refused:
            workers.run("d", lambda worker: None, timeout_s=10.0)
        assert refused.value.code == "result_too_large" and refused.value.context == {"limit": "tabs", "max": 3}
    finally:
        workers.stop_all()


def test_dialogs_past_the_listing_bound_say_truncated():
    sessions = {}
    for i in range(dialogs.MAX_LISTED + 2):
        session = FakeSession(f"S{i}", f"raw-{i}")
        session.dialog = dialog_record({"type": "alert", "message": f"d{i}"})
        sessions[f"raw-{i}"] = session
    broker, agent = fake_broker(sessions)
    listed = dialogs.result(broker, agent)
    assert len(listed["dialogs"]) == dialogs.MAX_LISTED and listed["truncated"] is True
    assert listed["total"] == dialogs.MAX_LISTED + 2
    assert dialogs.result(fake_broker({})[0], agent) == {"dialogs": [], "truncated": False, "total": 0}


# --- downloads per key, artifacts per key -----------------------------------------------------------

def test_downloads_past_64_are_counted_and_an_evicted_copy_is_expired(tmp_path, monkeypatch):
    import time

    agent = SimpleNamespace(key="agent-a", generation=1, lease_active=lambda now: True)
    agents = SimpleNamespace(owner=lambda raw, popups: ("agent-a", "managed"), get=lambda key: agent)
    broker = SimpleNamespace(agents=agents, browser=SimpleNamespace(generation=1, popups=lambda: {},
                                                                    targets=SimpleNamespace(info=lambda raw: {})))
    tracker = downloads.Tracker(broker.browser, broker.agents, None)
    for i in range(downloads.MAX_PER_KEY + 4):
        tracker._begin({"guid": f"g{i}", "suggestedFilename": f"f{i}.txt"}, "raw-1")
    assert len(tracker.rows(agent)) == downloads.MAX_PER_KEY and tracker.dropped_of(agent) == 4
    assert tracker.dropped_of(SimpleNamespace(key="agent-a")) == 0  # a later Agent of the key starts at 0

    monkeypatch.setattr(artifacts, "MAX_ITEMS_PER_KEY", 2)
    store = artifacts.Store(str(tmp_path), SimpleNamespace(get=lambda key: agent))
    first = store.put_bytes(agent, "download", b"one", "text/plain")
    record = tracker.rows(agent)[0][0]
    record.state, record.artifact = "completed", first
    assert record.row(1)["state"] == "completed"
    time.sleep(0.01)  # distinct creation times: the oldest goes first
    store.put_bytes(agent, "download", b"two", "text/plain")
    store.put_bytes(agent, "download", b"three", "text/plain")
    assert first.evicted and record.row(1)["state"] == "expired" and record.row(1)["reason"] == "evicted"


def test_bounds_are_the_documented_ones():
    assert (interception.MAX_RULES, console_journal.MAX_CONSOLE, console_journal.MAX_ERRORS, entries.MAX_ENTRIES) == (64, 500, 200, 500)
    assert (targets.MAX_TARGETS, targets.MAX_PROFILE_CONTEXTS, downloads.MAX_PER_KEY) == (4096, 128, 64)
    assert threading  # (imported for the fakes' locks)
