"""Containment (issue 27 items 1, 2, 9): every way around the person's navigation bounds and
capability denials that an adversarial probe found, or that we thought of, tried on real
Chromium. Each test is judged from a SECOND server's request log (the forbidden origin: another
port of 127.0.0.1, so another origin) — was it reached after the Agent held the tab? — and from
what bp returned (no forbidden page's title, text or element in any answer).

Ways around tried (the report lists each result):
- history traversal into a forbidden page restored from the back/forward cache (bp eval, the
  page's own timer), and a bp wait polling through it;
- bp wait --text/--selector (alone and as a batch step) on a tab that left the bounds;
- a WebSocket handshake (every host spelling, from a dedicated worker), and fetch/img/WebSocket from an allowed cross-site (out-of-process)
  iframe, with subresources;
- host spellings of a blocked origin (trailing dot, IPv4-mapped IPv6, decimal/hex/octal IPv4,
  case), by bp open and by links, and Chrome's own reading of them;
- a forbidden frame inside an allowed page;
- net mock serving script while eval or input is denied;
- window.opener navigation from a popup, a download from the forbidden origin, a service worker's
  own fetch, a dedicated worker's fetch, a beacon and an EventSource, speculation rules
  prerender and prefetch, and a bp batch mixing allowed and forbidden steps.
"""

import contextlib
import json
import os
import time

import pytest

from tests import helpers
from tests.helpers import bp, ok, ref_of  # noqa

pytestmark = [pytest.mark.containment, pytest.mark.chromium]


@pytest.fixture(scope="module")
def forbidden():
    """The forbidden origin: a second server on its own port of 127.0.0.1."""
    from tests.pages import PageServer

    server = PageServer()
    yield server
    server.stop()


def start(home, env_for, policy):
    os.chmod(home, 0o700)
    path = os.path.join(home, "policy.json")
    with open(path, "w") as fh:
        json.dump(policy, fh)
    os.chmod(path, 0o600)
    env = env_for(home)
    result = bp(home, "connect", env=env)
    assert result.rc == 0, result
    return env


def allow_only(pages, subresources=False):
    """Bounds: the test pages' origin (and its named sites, for cross-site iframes) only."""
    return {"version": 1, "origins": {"allow": [f"http://127.0.0.1:{pages.port}", f"http://*.test:{pages.port}"],
                                      "subresources": subresources}}


def reached(server, marker, since=0.0):
    """Requests for `marker` that reached `server` after `since` (a monotonic time)."""
    with server.lock:
        return [path for path, _, at in server.log if marker in path and at >= since]


def batch(home, env, steps, *options):
    path = os.path.join(home, "steps.json")
    with open(path, "w") as fh:
        json.dump(steps, fh)
    return bp(home, *options, "batch", "--file", path, env=env)


def leaked(result, *markers):
    text = (result.stdout or "") + (result.stderr or "")
    return [m for m in markers if m in text]


def user_tab_index(home, env, marker):
    assert helpers.wait_until(lambda: any(marker in t["title"] for t in ok(home, env, "tabs")["tabs"]), 15)
    return next(t["index"] for t in ok(home, env, "tabs")["tabs"] if marker in t["title"])


def tab_url(chromium, raw):
    return chromium.pages().get(raw, {}).get("url", "")


def navigate_user_tab(chromium, raw, url):
    """The person navigates their own tab (through the test's own DevTools connection)."""
    chromium.evaluate(raw, f"location.href = {json.dumps(url)}")


# --- (a) back/forward cache -----------------------------------------------------------------------

class HeldTab:
    """A person's tab that visited the forbidden page, then an allowed one, held by the Agent."""

    def __init__(self, env, raw, marker):
        self.env, self.raw, self.marker = env, raw, marker

    def leaked(self, result):
        return leaked(result, f"secret-{self.marker}", f"forbidden-{self.marker}")

    def sent_away(self, chromium):
        """The forbidden page does not stay live in the tab (within 5 s)."""
        return helpers.wait_until(lambda: f"forbidden-{self.marker}" not in chromium.pages()[self.raw]["title"], 5)


@contextlib.contextmanager
def tab_with_forbidden_history(home, env_for, chromium, pages, forbidden, allowed_body=""):
    env = start(home, env_for, allow_only(pages))
    marker = os.urandom(4).hex()
    raw = chromium.new_user_tab()
    try:
        navigate_user_tab(chromium, raw, forbidden.page(f"<p>secret-{marker}</p>", title=f"forbidden-{marker}"))
        assert helpers.wait_until(lambda: reached(forbidden, "/html"), 10)
        assert helpers.wait_until(lambda: f"forbidden-{marker}" in chromium.pages()[raw]["title"], 10)
        navigate_user_tab(chromium, raw, pages.page(f"<p>allowed-{marker}</p>{allowed_body}",
                                                    title=f"allowed-{marker}"))
        assert helpers.wait_until(lambda: f"allowed-{marker}" in chromium.pages()[raw]["title"], 10)
        ok(home, env, "tab", user_tab_index(home, env, f"allowed-{marker}"))
        yield HeldTab(env, raw, marker)
    finally:
        chromium.close_tab(raw)


# The page goes back on its own 3 s after it loaded: after the held tab is taken (bp tabs, bp tab:
# over 1.5 s on a loaded 2-core machine, the CI flake of 2026-12-07), within the wait below.
GOING_BACK = "<script>setTimeout(() => history.back(), 3000)</script>"


def test_history_back_into_a_forbidden_page_from_the_back_forward_cache(home, env_for, pages, forbidden, chromium):
    with tab_with_forbidden_history(home, env_for, chromium, pages, forbidden) as tab:
        held_at = time.monotonic()
        bp(home, "eval", "history.back(); 1", env=tab.env)
        # Whatever the browser does, the forbidden page does not stay live in the held tab and no
        # answer carries its content.
        time.sleep(1.5)
        assert tab.sent_away(chromium), chromium.pages()[tab.raw]
        for args in (("eval", "document.title + document.body.innerText"), ("snapshot",), ("read",)):
            result = bp(home, *args, env=tab.env)
            assert tab.leaked(result) == [], (args, result)
        assert reached(forbidden, "/html", held_at) == []


def test_the_pages_own_timer_going_back_into_a_forbidden_page(home, env_for, pages, forbidden, chromium):
    with tab_with_forbidden_history(home, env_for, chromium, pages, forbidden, GOING_BACK) as tab:
        held_at = time.monotonic()
        # A wait polling through the restore: it never answers with the forbidden page.
        result = bp(home, "wait", "--text", f"secret-{tab.marker}", "--timeout", "5000", env=tab.env)
        assert result.rc != 0 and tab.leaked(result) == [], result
        assert result.code in ("capability_denied", "wait_timeout"), result
        # Sent away (as the commit is seen, or at the first probe that finds it outside).
        assert tab.sent_away(chromium), chromium.pages()[tab.raw]
        assert reached(forbidden, "/html", held_at) == []


# --- (b) waits check the bounds at every probe ----------------------------------------------------

def test_wait_text_and_selector_in_a_batch_never_return_a_forbidden_page(home, env_for, pages, forbidden, chromium):
    with tab_with_forbidden_history(home, env_for, chromium, pages, forbidden, GOING_BACK) as tab:
        steps = [{"cmd": "wait", "args": ["--selector", "p"]},
                 {"cmd": "wait", "args": ["--text", f"secret-{tab.marker}"]}]
        result = batch(home, tab.env, steps, "--timeout", "6000")
        assert result.rc != 0, result
        assert tab.leaked(result) == [], result
        assert tab.sent_away(chromium), chromium.pages()[tab.raw]


# --- (c) WebSockets and out-of-process iframes with subresources ------------------------------------

SOCKET = ("new Promise(r => { const s = new WebSocket(%s); s.onerror = s.onclose = s.onopen = () => r(1);"
          " setTimeout(() => r(0), 3000); })")


def test_websocket_handshake_to_a_forbidden_origin(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages, subresources=True))
    marker = os.urandom(4).hex()
    ok(home, env, "open", pages.page("<p>ws</p>", title=f"ws-{marker}"))
    ws = f"ws://127.0.0.1:{forbidden.port}/ws-{marker}"
    ok(home, env, "eval", SOCKET % json.dumps(ws))
    # An allowed WebSocket still connects as far as the handshake (the test server answers it as a page).
    allowed = f"ws://127.0.0.1:{pages.port}/ws-ok-{marker}"
    ok(home, env, "eval", SOCKET % json.dumps(allowed))
    assert reached(pages, f"ws-ok-{marker}")
    assert reached(forbidden, f"ws-{marker}") == []


def test_websocket_from_a_worker_and_a_cross_site_frame(home, env_for, pages, forbidden):
    """The held tab's dedicated worker and its out-of-process iframe open sockets of their own."""
    env = start(home, env_for, allow_only(pages, subresources=True))
    marker = os.urandom(4).hex()
    ws = f"ws://127.0.0.1:{forbidden.port}"
    worker = f"new Worker(URL.createObjectURL(new Blob([\"new WebSocket('{ws}/worker-{marker}')\"])))"
    frame = pages.page(f"<p>inner</p><script>new WebSocket('{ws}/frame-{marker}');"
                       f" setTimeout(() => new WebSocket('{ws}/frame-late-{marker}'), 800)</script>",
                       title="inner", site="a")
    ok(home, env, "open", pages.page(f"<script>{worker}</script><iframe src='{frame}'></iframe>",
                                     title=f"outer-{marker}"))
    assert helpers.wait_until(lambda: reached(pages, "title=inner"), 10)
    time.sleep(2.0)
    got = reached(forbidden, marker)
    assert got == [], "\n".join(got)


def test_websocket_to_every_spelling_of_a_blocked_host(home, env_for, pages, forbidden):
    port = forbidden.port
    env = start(home, env_for, {"version": 1, "origins": {"block": [f"http://127.0.0.1:{port}",
                                                                    f"http://localhost:{port}"],
                                                          "subresources": True}})
    marker = os.urandom(4).hex()
    ok(home, env, "open", pages.page("<p>ws</p>", title=f"wss-{marker}"))
    for i, origin in enumerate(spellings(port)):
        ok(home, env, "eval", SOCKET % json.dumps(origin.replace("http:", "ws:") + f"/ws-{marker}-{i}"))
    allowed = f"ws://127.0.0.1:{pages.port}/ws-ok-{marker}"
    ok(home, env, "eval", SOCKET % json.dumps(allowed))
    assert reached(pages, f"ws-ok-{marker}")
    got = reached(forbidden, marker)
    assert got == [], "\n".join(got)


def test_an_allowed_cross_site_iframe_reaching_a_forbidden_origin(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages, subresources=True))
    marker = os.urandom(4).hex()
    base = f"http://127.0.0.1:{forbidden.port}"
    # The frame reaches out at once and again a little later (after its first commit).
    script = (f"function go(n) {{ fetch('{base}/json?frame-fetch-{marker}-' + n).catch(() => 0);"
              f" const x = new XMLHttpRequest(); x.open('GET', '{base}/json?frame-xhr-{marker}-' + n); x.send();"
              f" new Image().src = '{base}/json?frame-img-{marker}-' + n; }}"
              "go(0); setTimeout(() => go(1), 800);")
    frame = pages.page(f"<p>inner</p><script>{script}</script>", title="inner", site="a")
    ok(home, env, "open", pages.page(f"<iframe src='{frame}'></iframe>", title=f"outer-{marker}"))
    assert helpers.wait_until(lambda: reached(pages, "title=inner"), 10)
    time.sleep(2.0)
    got = reached(forbidden, marker)
    assert got == [], "\n".join(got)


# --- (d) host spellings ------------------------------------------------------------------------------

def spellings(port):
    return [f"http://localhost.:{port}", f"http://LOCALHOST:{port}", f"http://[::ffff:127.0.0.1]:{port}",
            f"http://[::ffff:7f00:1]:{port}", f"http://2130706433:{port}", f"http://0x7f000001:{port}",
            f"http://0177.0.0.1:{port}", f"http://127.1:{port}", f"http://127.0.0.1.:{port}",
            f"http://%31%32%37.0.0.1:{port}"]


def test_block_list_holds_under_every_host_spelling(home, env_for, pages, forbidden):
    port = forbidden.port
    env = start(home, env_for, {"version": 1, "origins": {"block": [f"http://127.0.0.1:{port}",
                                                                    f"http://localhost:{port}"]}})
    marker = os.urandom(4).hex()
    for i, origin in enumerate(spellings(port)):
        url = f"{origin}/html?id=open-{marker}-{i}"
        result = bp(home, "open", url, env=env)
        assert result.code == "capability_denied", (url, result)
    links = "".join(f"<a href='{o}/html?id=link-{marker}-{i}'>l{i}</a>" for i, o in enumerate(spellings(port)))
    start_page = pages.page(links, title=f"spell-{marker}")
    for i, _ in enumerate(spellings(port)):
        observation = ok(home, env, "open", start_page)
        reply = ok(home, env, "click", ref_of(observation, "link", f"l{i}"))
        assert reply["evidence"].get("navigationBlocked"), (i, reply)
    assert reached(forbidden, marker) == []


def test_our_host_reading_agrees_with_chromes(home, env_for, pages):
    """bp/urls.py reads every spelling the way Chrome's URL parser does (Chrome keeps a trailing
    dot and writes a mapped IPv4 address in IPv6 form; both are the same address to the network)."""
    from bp import urls

    env = start(home, env_for, {"version": 1})
    ok(home, env, "open", pages.page("<p>x</p>", title="agree"))
    cases = spellings(8080) + ["http://bÜcher.example/", "http://xn--bcher-kva.example./", "http://0x7f.1/",
                               "http://[0:0:0:0:0:0:0:1]/", "http://a.b.c.1.2/", "http://09/", "http://1.2.3.4.5/",
                               "http://\uff11\uff12\uff17.0.0.1/", "http://EXAMPLE.com\u3002/"]
    script = ("JSON.stringify(%s.map(u => { try { const x = new URL(u); return [x.protocol, x.hostname, x.port]; }"
              " catch (e) { return null; } }))" % json.dumps(cases))
    chrome = json.loads(ok(home, env, "eval", script)["value"])
    for url, answer in zip(cases, chrome):
        ours = urls.split_origin(url)
        if answer is None:
            assert ours[0] == "invalid", (url, ours)
            continue
        host = answer[1]
        if host.startswith("[::ffff:"):
            import ipaddress

            host = str(ipaddress.IPv6Address(host[1:-1]).ipv4_mapped)
        host = host[:-1] if host.endswith(".") else host
        assert ours[1] == host, (url, ours, answer)


# --- (e) forbidden frames inside allowed pages ----------------------------------------------------------

def test_a_forbidden_frame_inside_an_allowed_page_is_blocked(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages))
    marker = os.urandom(4).hex()
    since = time.monotonic()
    inner = forbidden.page(f"<p>secret-{marker}</p><button>inner-{marker}</button>", title=f"forbidden-{marker}")
    # An iframe, an <object> and an <embed>: each makes a frame of its own.
    observation = ok(home, env, "open", pages.page(f"<p>outer</p><iframe src='{inner}'></iframe>"
                                                   f"<object data='{inner}&via=object' type='text/html'></object>"
                                                   f"<embed src='{inner}&via=embed' type='text/html'>", title="outer"))
    time.sleep(1.0)
    for args in (("snapshot",), ("read",), ("frames",), ("search", f"secret-{marker}"), ("find", "button")):
        result = bp(home, *args, env=env)
        assert leaked(result, f"secret-{marker}", f"inner-{marker}") == [], (args, result)
    assert reached(forbidden, "/html", since) == [], observation


# --- (f) one capability does not unlock another -------------------------------------------------------------

def test_net_mock_cannot_serve_script_while_eval_or_input_is_denied(home, env_for, pages):
    env = start(home, env_for, {"version": 1, "keys": {"no-eval": {"deny": ["developer.eval"]},
                                                       "no-input": {"deny": ["action.input"]}}})
    marker = os.urandom(4).hex()
    for key in ("no-eval", "no-input"):
        key_env = dict(env, BROWSER_PILOT_CLIENT_KEY=key)
        ok(home, key_env, "open", pages.page("<p>start</p>", title=f"start-{key}"))
        target = pages.url(f"/html?id=mocked-{key}-{marker}")
        body = f"<script>fetch('/json?ran-{key}-{marker}')</script>"
        for kind in ("text/html", "application/javascript", "image/svg+xml", "application/xhtml+xml"):
            result = bp(home, "net", "mock", target, "--body", body, "--content-type", kind, env=key_env)
            assert result.code == "capability_denied", (key, kind, result)
        # Nor a page of the Agent's own writing.
        result = bp(home, "open", f"data:text/html,<script>fetch('{pages.url(f'/json?ran-{key}-{marker}')}')</script>",
                    env=key_env)
        assert result.code == "capability_denied" and result.json["context"]["reason"] == "script_page", result
        # A mock the browser will not run as script is still fine, and served with nosniff.
        ok(home, key_env, "net", "mock", target, "--body", body, "--content-type", "text/plain")
        ok(home, key_env, "open", pages.page(f"<script src='{target}'></script>", title=f"loader-{key}"))
        time.sleep(0.5)
        assert reached(pages, f"ran-{key}-{marker}") == []
    # A key with both may serve HTML.
    ok(home, env, "open", pages.page("<p>start</p>", title="start-full"))
    ok(home, env, "net", "mock", pages.url(f"/html?id=full-{marker}"), "--body", "<p>x</p>", "--content-type", "text/html")


# --- our own ideas ------------------------------------------------------------------------------------------

def test_a_popup_navigating_its_opener_out_of_bounds(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages))
    marker = os.urandom(4).hex()
    popup = pages.page(f"<script>window.opener.location = 'http://127.0.0.1:{forbidden.port}/html?id=opener-{marker}'"
                       "</script>", title="popup")
    ok(home, env, "open", pages.page(f"<button onclick=\"window.open('{popup}')\">open</button>", title="opener"))
    observation = ok(home, env, "snapshot")
    ok(home, env, "click", ref_of(observation, "button", "open"))
    time.sleep(1.5)
    assert reached(forbidden, f"opener-{marker}") == []


def test_a_download_from_a_forbidden_origin(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages))
    marker = os.urandom(4).hex()
    url = f"http://127.0.0.1:{forbidden.port}/attachment?name=dl-{marker}.txt"
    ok(home, env, "open", pages.page(f"<a href='{url}'>get</a>", title="dl"))
    ok(home, env, "click", ref_of(ok(home, env, "snapshot"), "link", "get"))
    time.sleep(1.0)
    assert reached(forbidden, f"dl-{marker}") == []


def test_batch_mixing_allowed_and_forbidden_steps(home, env_for, pages, forbidden):
    """A block list, a batch: an allowed open, a page script sent to a spelled forbidden host, then
    spelled opens — every step judged like the single command."""
    env = start(home, env_for, {"version": 1, "origins": {"block": [f"http://127.0.0.1:{forbidden.port}"]}})
    marker = os.urandom(4).hex()
    steps = [{"cmd": "open", "args": [pages.page("<p>ok</p>", title=f"ok-{marker}")]},
             {"cmd": "eval", "args": [f"location.href = 'http://[::ffff:127.0.0.1]:{forbidden.port}/html?id=a-{marker}'"]},
             {"cmd": "open", "args": [f"http://[::ffff:127.0.0.1]:{forbidden.port}/html?id=b-{marker}"]},
             {"cmd": "open", "args": [f"http://127.0.0.1.:{forbidden.port}/html?id=c-{marker}"]}]
    result = batch(home, env, steps)
    assert result.rc != 0 and "capability_denied" in result.stdout, result
    assert result.json["stoppedAt"] == 2, result
    assert reached(forbidden, marker) == []


@pytest.mark.xfail(strict=True, reason="Open gap: speculation-rules prefetch (and the prefetch a prerender "
                                      "starts with) is fetched by the browser's prefetch service, outside tab- and "
                                      "browser-level Fetch, Network.setBlockedURLs, per-URL offline conditions, "
                                      "setCacheDisabled, data saver and Page.setPrerenderingAllowed(false) "
                                      "(measured on Chrome 156). See docs/policy.md.")
def test_speculation_rules_prerender_and_prefetch_stay_inside(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages, subresources=True))
    marker = os.urandom(4).hex()
    target = f"http://127.0.0.1:{forbidden.port}/html?id=pre-{marker}"
    rules = json.dumps({"prerender": [{"source": "list", "urls": [target]}],
                        "prefetch": [{"source": "list", "urls": [target + "-prefetch"]}]})
    ok(home, env, "open", pages.page(f"<script type=speculationrules>{rules}</script><p>spec</p>", title="spec"))
    time.sleep(1.5)
    assert reached(forbidden, f"pre-{marker}") == []


def test_a_service_workers_own_fetch(home, env_for, pages, forbidden, tmp_path):
    env = start(home, env_for, allow_only(pages, subresources=True))
    marker = os.urandom(4).hex()
    script = tmp_path / f"sw-{marker}.js"
    script.write_text(f"self.addEventListener('install', e => e.waitUntil("
                      f"fetch('http://127.0.0.1:{forbidden.port}/json?sw-{marker}').catch(() => 0)));")
    pages.files[script.name] = str(script)
    ok(home, env, "open", pages.page(f"<script>navigator.serviceWorker.register('/static/{script.name}')</script>",
                                     title="sw"))
    time.sleep(2.0)
    assert reached(pages, script.name), "the service worker was not even registered"
    assert reached(forbidden, f"sw-{marker}") == []


def test_a_dedicated_workers_fetch_and_a_beacon(home, env_for, pages, forbidden):
    env = start(home, env_for, allow_only(pages, subresources=True))
    marker = os.urandom(4).hex()
    base = f"http://127.0.0.1:{forbidden.port}"
    worker = f"fetch('{base}/json?worker-{marker}').catch(() => 0)"
    ok(home, env, "open", pages.page(
        f"<script>new Worker(URL.createObjectURL(new Blob([{json.dumps(worker)}], {{type: 'text/javascript'}})));"
        f"navigator.sendBeacon('{base}/json?beacon-{marker}', 'x');"
        f"new EventSource('{base}/json?events-{marker}');</script>", title="worker"))
    time.sleep(2.0)
    got = reached(forbidden, marker)
    assert got == [], got


@pytest.mark.parametrize("subresources", [False, True])
def test_a_dedicated_worker_still_runs_under_the_bounds(home, env_for, pages, subresources):
    """The bounds hold new targets until they are judged; a page's own worker must not stay held
    (it did: Chromium held every dedicated worker under the pause, so search boxes backed by a
    worker never answered)."""
    env = start(home, env_for, allow_only(pages, subresources=subresources))
    ok(home, env, "open", pages.page("<p>worker</p>", title="worker"))
    answer = ok(home, env, "eval", "new Promise(r => { const w = new Worker(URL.createObjectURL(new Blob("
                                   "['postMessage(6 * 7)']))); w.onmessage = e => r(e.data);"
                                   " setTimeout(() => r('no answer'), 3000); })")
    assert answer["value"] == 42, answer
