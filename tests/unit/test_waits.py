"""bp wait / dialogs without a browser: URL globs, argument schemas, dialog records and hints."""

import time
from types import SimpleNamespace

import pytest
from marshmallow import ValidationError

from bp import protocol, schemas, settings
from broker.tabs import dialogs
from broker.waits import dialog_answer
from broker.waits import conditions as waits
from broker.tabs.session import dialog_record


@pytest.mark.parametrize("pattern, url, expected", [
    ("https://example.com/a", "https://example.com/a", True),
    ("https://example.com/a", "https://example.com/a/b", False),  # full match, not a prefix
    ("example.com", "https://example.com/", False),  # no '*': not a substring either
    ("*example.com*", "https://EXAMPLE.com/path", True),  # case-insensitive
    ("*/checkout/*", "https://shop.test/checkout/step-2", True),
    ("*/checkout/*", "https://shop.test/checkout", False),
    ("https://a.test/?q=1", "https://a.test/?q=1", True),  # '?' and '.' are literal
    ("https://a.test/?q=1", "https://a.test/xq=1", False),
    ("https://a.test/[x]+(y)", "https://a.test/[x]+(y)", True),
    ("*", "", True),
    ("a*b*c", "aXXbYYc", True),
    ("a*b*c", "aXXbYYcd", False),
])
def test_url_glob_is_a_case_insensitive_full_match(pattern, url, expected):
    assert bool(waits.url_matcher(pattern)(url)) is expected


def load(op, args):
    return schemas.ARGS_SCHEMAS[op].load(args)


@pytest.mark.parametrize("args", [{"url": "*"}, {"text": "x"}, {"selector": "p"}, {"dialog": True},
                                  {"download": True}, {"popup": True, "interval": 100}, {"url": "*", "interval": 5000}])
def test_wait_args_accept_exactly_one_condition(args):
    assert load(protocol.OP_WAIT, args) == args


@pytest.mark.parametrize("args", [{}, {"url": "*", "text": "x"}, {"dialog": True, "popup": True},
                                  {"dialog": False}, {"url": "*", "dialog": False}, {"url": "*", "interval": 99},
                                  {"url": "*", "interval": 5001}, {"url": ""}, {"url": "*", "other": 1}])
def test_wait_args_refuse_the_rest(args):
    with pytest.raises(ValidationError):
        load(protocol.OP_WAIT, args)


def test_dialog_args():
    assert load(protocol.OP_DIALOG, {"dialogId": "dialog-1", "action": "accept", "promptText": ""})["promptText"] == ""
    for bad in ({"dialogId": "d", "action": "ok"}, {"action": "accept"},
                {"dialogId": "d", "action": "dismiss", "promptText": "x"}):
        with pytest.raises(ValidationError):
            load(protocol.OP_DIALOG, bad)
    assert protocol.OP_DIALOG in protocol.MUTATING and protocol.OP_WAIT not in protocol.MUTATING
    assert {protocol.OP_WAIT, protocol.OP_DIALOGS, protocol.OP_DIALOG} <= set(protocol.OPERATIONS)


def test_dialog_record_is_bounded_and_opaque():
    record = dialog_record({"type": "prompt", "message": "m" * 10_000, "defaultPrompt": "d" * 10_000,
                            "url": "https://a.test/", "hasBrowserHandler": True})
    assert record["id"].startswith("dialog-") and len(record["id"]) == len("dialog-") + 12
    assert len(record["message"]) == len(record["defaultPrompt"]) == 4096
    assert "defaultPrompt" not in dialog_record({"type": "alert", "message": "hi"})


class FakeSession:
    alive = True

    def __init__(self, dialog):
        self.dialog = dialog
        self.calls = []

    def call(self, method, params, timeout_s):
        self.calls.append((method, params))
        return {}


def fake_broker(sessions, owners):
    agents = SimpleNamespace(owner=lambda raw, popups: (owners.get(raw), "managed"))
    workers = SimpleNamespace(sessions=lambda: list(sessions.items()))
    browser = SimpleNamespace(popups=lambda: {})
    return SimpleNamespace(agents=agents, browser=browser, workers=workers)


def fake_agent(key):
    return SimpleNamespace(key=key, opaque_id=lambda raw: f"tab-{raw}")


def test_dialogs_are_scoped_to_the_agent_that_holds_the_tab():
    mine = FakeSession(dialog_record({"type": "confirm", "message": "Sure?", "url": "https://a.test/"}))
    theirs = FakeSession(dialog_record({"type": "alert", "message": "x"}))
    broker = fake_broker({"raw-1": mine, "raw-2": theirs}, {"raw-1": "agent-a", "raw-2": "agent-b"})
    rows = dialogs.listing(broker, fake_agent("agent-a"))
    assert [(r["dialogId"], r["tabId"], r["type"], r["message"]) for r in rows] == \
        [(mine.dialog["id"], "tab-raw-1", "confirm", "Sure?")]
    with pytest.raises(Exception) as caught:
        dialog_answer.answer(broker, fake_agent("agent-a"), theirs.dialog["id"], True)
    assert caught.value.code == "invalid_argument"
    assert caught.value.context == {"field": "dialogId", "dialogId": theirs.dialog["id"]}
    assert theirs.calls == []
    dialog_id = mine.dialog["id"]
    assert dialog_answer.answer(broker, fake_agent("agent-a"), dialog_id, False) == {"dialogId": dialog_id,
                                                                                 "action": "dismiss"}
    assert mine.calls == [("Page.handleJavaScriptDialog", {"accept": False})]
    assert dialogs.listing(broker, fake_agent("agent-a")) == []


def test_dialog_pending_hint_once_after_the_threshold():
    session = FakeSession(dialog_record({"type": "alert", "message": "x"}))
    broker = fake_broker({"raw-1": session}, {"raw-1": "agent-a"})
    agent = fake_agent("agent-a")
    opened = session.dialog["opened"]
    assert dialogs.hints(broker, agent, now=opened + settings.current().dialog_hint_after_s / 2) == []
    first = dialogs.hints(broker, agent, now=opened + settings.current().dialog_hint_after_s + 1)
    assert [(h["code"], h["dialogId"], h["recommendedAction"]) for h in first] == \
        [("dialog_pending", session.dialog["id"], "answer_dialog")]
    assert dialogs.hints(broker, agent, now=time.monotonic() + settings.current().dialog_hint_after_s + 2) == []
