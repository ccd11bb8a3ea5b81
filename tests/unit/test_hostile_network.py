"""Issue 14: a network rule's change that Chrome refuses never leaves the request paused.

Chrome accepts every header that passes add-time validation in our trials, so the refusal is
injected: a session whose continueRequest/fulfillRequest answers with a CDP error."""

import threading

import pytest

from bp.errors import BPError
from broker.network import journal as network
from broker.network import entries
from broker.network import interception


class RefusingSession:
    session_id = "S1"

    def __init__(self):
        self.sent = []
        self.done = threading.Event()

    def call(self, method, params, timeout_s=30.0):
        raise BPError("internal_error", f"{method} failed: Invalid header")

    def send_nowait(self, method, params=None):
        self.sent.append((method, params))
        self.done.set()


class Agent:
    key = "agent-key"


def test_a_refused_change_continues_the_request_unmodified_and_says_why():
    hub = network.Hub(None, None, None, None)
    state = network.KeyState(Agent())
    entry = entries.Entry(1, None, "net-1", {"url": "http://a/"}, "fetch")
    state.by_request[("S1", "net-1")] = entry
    session = RefusingSession()
    hub._send_checked(session, state, {"requestId": "fetch-1", "networkId": "net-1"}, "Fetch.continueRequest",
                      {"requestId": "fetch-1", "headers": [{"name": "X-A", "value": "b"}]})
    assert session.done.wait(10)
    assert session.sent == [("Fetch.continueRequest", {"requestId": "fetch-1"})]
    hub._checks.shutdown(wait=True)
    assert "Invalid header" in entry.row()["ruleRefused"]


@pytest.mark.parametrize("name,value", [
    ("X-A", "b\r\nX-Injected: c"), ("X-A", "b\nc"), ("X-A", "\x00"), ("Host", "evil"), ("content-length", "1"),
    ("Transfer-Encoding", "chunked"), ("X A", "b"), ("", "b"), ("X-A", "x" * (entries.MAX_HEADER_VALUE + 1)),
])
def test_bad_headers_are_invalid_argument(name, value):
    with pytest.raises(BPError) as caught:
        interception.check_header(name, value)
    assert caught.value.code == "invalid_argument" and caught.value.context["field"] == "headers"


@pytest.mark.parametrize("url,expected", [
    ("http://ada:pw@host/x", "http://host/x"),
    ("https://ada@host:8443/", "https://host:8443/"),
    ("http://host/a@b", "http://host/a@b"),
    ("data:text/plain,a@b", "data:text/plain,a@b"),
])
def test_url_credentials_are_stripped(url, expected):
    assert entries.without_credentials(url) == expected
