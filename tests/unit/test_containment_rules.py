"""The containment rules without a browser (issue 27 items 1, 2): host reading in patterns and
URLs, which documents the bounds judge, a commit outside the bounds sent away, the capability
implications of net mock and bp open, and out-of-process frames resumed only after their hooks."""

from types import SimpleNamespace

import pytest

from bp import policy, urls
from bp.errors import BPError
from broker.network import interception
from broker.network import journal as network
from broker.policy import bounds
from broker.tabs import routing
from broker.tabs.session import FrameSessions, Session


def make(data):
    return policy.Policy(policy.validate(data), "/p", "home", "sha256:x")


@pytest.mark.parametrize("url,host", [
    ("http://localhost.:8080/", "localhost"), ("http://[::ffff:127.0.0.1]:9/", "127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "127.0.0.1"), ("http://2130706433/", "127.0.0.1"), ("http://0x7f.1/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"), ("HTTP://LOCALHOST/", "localhost"), ("http://%6c%6fcalhost/", "localhost"),
    ("http://b\u00fccher.example/", "xn--bcher-kva.example"), ("http://[0:0::1]/", "[::1]"),
    ("http://evil.example\\@allowed.example/", "evil.example"), ("blob:http://x.example:9/abc", "x.example"),
])
def test_hosts_are_read_as_the_browser_reads_them(url, host):
    assert urls.split_origin(url)[1] == host


@pytest.mark.parametrize("url", ["http://1.2.3.4.5/", "http://999.1.1.1/", "http://09/", "http://[::1/", "http://a b/"])
def test_hosts_the_browser_refuses_are_outside_any_bounds(url):
    assert urls.split_origin(url)[0] == "invalid"
    assert not make({"version": 1, "origins": {"block": ["http://example.com"]}}).url_allowed(url)


def test_ipv6_literals_and_spellings_in_patterns():
    rules = make({"version": 1, "origins": {"allow": ["http://[::1]:*", "https://B\u00dcCHER.example.", "http://0x7f000001:80"]}})
    assert rules.url_allowed("http://[0::1]:5/") and not rules.url_allowed("http://[::2]:5/")
    assert rules.url_allowed("https://xn--bcher-kva.example/") and rules.url_allowed("https://b\u00fccher.example./")
    assert rules.url_allowed("http://127.0.0.1/") and rules.url_allowed("http://[::ffff:127.0.0.1]/")
    with pytest.raises(BPError) as caught:
        policy.validate({"version": 1, "origins": {"block": ["http://999.1.1.1"]}})
    assert caught.value.context["field"] == "origins.block[0]"


def test_capability_withheld_by_capability_or_by_one_operation():
    rules = make({"version": 1, "deny": ["click"], "keys": {"r-*": {"deny": ["developer.eval"]}}})
    assert rules.capability_withheld("any", "action.input") == "click"
    assert rules.capability_withheld("r-1", "developer.eval") == "developer.eval"
    assert rules.capability_withheld("any", "developer.eval") is None


@pytest.mark.parametrize("kind,capable", [
    (None, False), ("text/plain; charset=utf-8", False), ("application/json", False), ("image/png", False),
    ("font/woff2", False), ("text/html", True), ("TEXT/HTML; charset=utf-8", True), ("image/svg+xml", True),
    ("application/javascript", True), ("application/xml", True), ("application/pdf", True), ("", False),
])
def test_script_capable_types(kind, capable):
    assert policy.script_capable(kind) is capable


def fake_hub(rules, key="agent-a", origin="managed", url="http://127.0.0.1:1/"):
    agent = SimpleNamespace(key=key)
    broker = SimpleNamespace(
        policy=rules,
        agents=SimpleNamespace(owner=lambda raw, popups: (key, origin), get=lambda k: agent if k == key else None),
        browser=SimpleNamespace(popups=lambda: {}, targets=SimpleNamespace(info=lambda raw: {"url": url})),
        workers=SimpleNamespace(sessions=lambda: [], session=lambda raw: None))
    return network.Hub(broker.policy, broker.agents, broker.browser, broker.workers), agent


def test_net_mock_of_script_refused_while_eval_or_input_is_withheld():
    hub, agent = fake_hub(make({"version": 1, "deny": ["type"]}))
    with pytest.raises(BPError) as caught:
        interception.add_rule(hub, agent, {"type": "mock", "pattern": "*", "body": "<script>", "contentType": "text/html"})
    assert caught.value.code == "capability_denied"
    assert caught.value.context["reason"] == "script_mock" and caught.value.context["capability"] == "action.input"
    assert hub.state(agent).rules == []
    interception.add_rule(hub, agent, {"type": "mock", "pattern": "*", "body": "<script>", "contentType": "text/plain"})
    hub, agent = fake_hub(make({"version": 1}))
    interception.add_rule(hub, agent, {"type": "mock", "pattern": "*", "body": "<p>", "contentType": "text/html"})


def test_open_of_a_page_the_agent_wrote_refused_while_eval_is_withheld():
    rules = make({"version": 1, "deny": ["developer.eval"]})
    request = lambda url: SimpleNamespace(op="open", client="k", args={"url": url})  # noqa: E731
    for url in ("data:text/html,<script>1</script>", "DATA:Text/HTML;base64,PHNjcmlwdD4=", "file:///tmp/x.html",
                "data:image/svg+xml,<svg/>"):
        refused = bounds.check_open(rules, request(url))
        assert refused is not None and refused.context["reason"] == "script_page", url
    assert bounds.check_open(rules, request("data:text/plain,hello")) is None
    assert bounds.check_open(rules, request("data:,<b>")) is None  # no type: text/plain
    assert bounds.check_open(rules, request("data:;base64,PHNjcmlwdD4=")) is None
    assert bounds.check_open(rules, request("https://example.com/")) is None
    assert bounds.check_open(make({"version": 1}), request("data:text/html,<script>1</script>")) is None


class Tab(FrameSessions):
    is_tab = True

    def __init__(self):
        self.session_id, self.raw_id, self.sent = "S1", "raw-1", []

    def send_nowait(self, method, params=None):
        self.sent.append((method, params))


def test_a_commit_outside_the_bounds_is_sent_away_and_the_tab_refused():
    hub, _ = fake_hub(make({"version": 1, "origins": {"allow": ["http://127.0.0.1:*"]}}))
    tab = Tab()
    hub.listener(tab, "Page.frameNavigated", {"frame": {"id": "raw-1", "url": "http://10.0.0.1/secret"},
                                              "type": "BackForwardCacheRestore"})
    assert tab.outside_origin == "http://10.0.0.1" and ("Page.navigate", {"url": "about:blank"}) in tab.sent
    hub.workers.session = lambda raw: tab
    with pytest.raises(BPError) as caught:
        routing.check_tab(hub, "raw-1", "read")
    assert caught.value.context["reason"] == "tab_outside_bounds"
    # The browser's own error page for a stopped navigation, a frame, an allowed page: nothing to do.
    tab.sent.clear()
    hub.listener(tab, "Page.frameNavigated", {"frame": {"id": "raw-1", "url": "http://10.0.0.1/x",
                                                        "unreachableUrl": "http://10.0.0.1/x"}})
    hub.listener(tab, "Page.frameNavigated", {"frame": {"id": "f2", "parentId": "raw-1", "url": "http://10.0.0.1/"}})
    assert tab.sent == [] and tab.outside_origin is None
    routing.check_tab(hub, "raw-1", "read")


def test_every_document_is_judged_but_only_the_tabs_own_counts_as_its_navigation():
    hub, _ = fake_hub(make({"version": 1, "origins": {"allow": ["http://127.0.0.1:*"]}}))
    tab = Tab()
    frame_doc = {"requestId": "r1", "resourceType": "Document", "frameId": "child", "request": {"url": "http://10.0.0.1/"}}
    hub.listener(tab, "Fetch.requestPaused", frame_doc)
    assert tab.sent[-1][0] == "Fetch.failRequest" and tab.blocked_navigations == 0
    top = dict(frame_doc, requestId="r2", frameId="raw-1")
    hub.listener(tab, "Fetch.requestPaused", top)
    assert tab.sent[-1][0] == "Fetch.failRequest" and tab.blocked_navigations == 1
    image = dict(frame_doc, requestId="r3", resourceType="Image")
    hub.listener(tab, "Fetch.requestPaused", image)
    assert tab.sent[-1] == ("Fetch.continueRequest", {"requestId": "r3"})  # subresources are not bounded here


def test_check_shown_lets_the_browsers_own_pages_through():
    broker = SimpleNamespace(policy=make({"version": 1, "origins": {"allow": ["http://127.0.0.1:*"]}}))
    for url in ("about:blank", "chrome-error://chromewebdata/", "http://127.0.0.1:5/x", ""):
        bounds.check_shown(broker.policy, "wait", url)
    with pytest.raises(BPError):
        bounds.check_shown(broker.policy, "wait", "http://[::ffff:10.0.0.1]/")


def test_a_waiting_frame_is_resumed_after_its_hooks_even_when_they_fail():
    sent = []
    conn = SimpleNamespace(send_nowait=lambda method, params=None, session_id=None: sent.append((method, session_id)))

    def hook(child):
        sent.append(("hook", child.session_id))
        raise RuntimeError("boom")

    targets = SimpleNamespace(sessions={}, on_frame_session=hook, pause_frames=True)
    parent = Tab()
    parent.conn, parent.targets, parent.listeners = conn, targets, []
    parent._init_children()
    with pytest.raises(RuntimeError):
        parent._child_event("Target.attachedToTarget", {"sessionId": "C1", "waitingForDebugger": True,
                                                        "targetInfo": {"type": "iframe", "targetId": "F1"}})
    assert sent[0] == ("hook", "C1") and ("Runtime.runIfWaitingForDebugger", "C1") in sent


def test_every_session_kind_shares_the_protocol():
    from broker.policy.bounds import PopupGuard
    from broker.tabs.session import FrameSession, TabSession

    for kind in (TabSession, FrameSession, PopupGuard):
        assert issubclass(kind, Session)
    assert TabSession.is_tab and not FrameSession.is_tab and not PopupGuard.is_tab and PopupGuard.guard


def test_taking_another_agents_tab_says_busy_and_nothing_of_its_page():
    """`bp tab N` on a tab another Agent holds, which committed a page outside the bounds (a
    back/forward-cache restore): target_busy, never tab_outside_bounds with the page's origin."""
    from broker.agents import Agents

    agents = Agents()
    a, b = agents.touch("agent-a"), agents.touch("agent-b")
    agents.add_managed(a, "T1")
    session = SimpleNamespace(outside_origin="http://secret.example")
    broker = SimpleNamespace(
        agents=agents, policy=make({"version": 1, "origins": {"allow": ["http://allowed.example"]}}),
        browser=SimpleNamespace(popups=dict, targets=SimpleNamespace(info=lambda raw: {"url": "http://secret.example/"})),
        workers=SimpleNamespace(session=lambda raw: session))
    with pytest.raises(BPError) as caught:
        routing.select(broker, b, "T1", hub=None)
    assert caught.value.code == "target_busy"
    assert "secret" not in repr(caught.value.to_dict() if hasattr(caught.value, "to_dict") else vars(caught.value))
    with pytest.raises(BPError) as own:  # its own Agent is told, as before
        routing.select(broker, a, "T1", hub=None)
    assert own.value.context.get("reason") == "tab_outside_bounds"


def test_socket_conditions_take_every_other_websocket_offline():
    """The WebSocket conditions (broker/policy/bounds.py): blocked spellings first (offline), then
    the allowed origins as they are, then every other socket offline; `*` is one label."""
    rules = make({"version": 1, "origins": {"allow": ["http://127.0.0.1:*", "https://*.example.com"],
                                            "block": ["http://localhost:8080", "http://[::1]:9"],
                                            "subresources": True}})
    got = [(c["urlPattern"], c.get("offline", False)) for c in bounds.socket_conditions(rules)]
    assert got == [("ws://localhost:8080/*", True), ("ws://localhost.:8080/*", True), ("ws://[\\:\\:1]:9/*", True),
                   ("ws://127.0.0.1:*/*", False), ("ws://[\\:\\:ffff\\:7f00\\:1]:*/*", False),
                   ("wss://:h0.example.com:443/*", False), ("wss://:h0.example.com.:443/*", False),
                   ("ws://*:*/*", True), ("wss://*:*/*", True)]
    for condition in bounds.socket_conditions(rules):
        assert condition["latency"] == 0 and condition["downloadThroughput"] == -1  # nothing else emulated
    # A block list alone lets every other socket through.
    only_block = make({"version": 1, "origins": {"block": ["https://bank.example"], "subresources": True}})
    assert [c["urlPattern"] for c in bounds.socket_conditions(only_block)] == ["wss://bank.example:443/*",
                                                                              "wss://bank.example.:443/*"]
