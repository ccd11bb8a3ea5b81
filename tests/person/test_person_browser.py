"""The person's own browser (issue 39): a headful Chromium on an X display (Xvfb), with the
person's profile (a site they are signed in to), their tabs in two windows (one pinned, one in a
tab group, one running a timer) and an unpacked extension of theirs (a content script, a
background service worker, an options page). What the Agent does must leave all of it alone,
read from the extension's own view (chrome.tabs / chrome.windows) and from X (the focused
window), never from Browser Pilot's replies.

Marked `person`; needs Debian's xvfb (scripts/test.sh installs it). Without Xvfb the tier is
skipped outside CI and fails in CI (CI=true): it is never skipped to green there.
"""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from bp.pytest_plugin import DevTools
from tests import helpers
from tests.helpers import ok, ref_of

pytestmark = [pytest.mark.person, pytest.mark.chromium]

MANIFEST = {"manifest_version": 3, "name": "Person's extension", "version": "1.0",
            "background": {"service_worker": "sw.js"}, "permissions": ["tabs", "tabGroups"],
            "options_page": "options.html",
            "content_scripts": [{"matches": ["http://127.0.0.1/*"], "js": ["content.js"]}]}
# The person's view of their browser, asked of the extension's service worker.
WORKER = """
self.personView = async () => {
  const windows = await chrome.windows.getAll({populate: true});
  return windows.map((w) => ({id: w.id, focused: w.focused, state: w.state, tabs: w.tabs.map((t) =>
    ({id: t.id, url: t.url, active: t.active, pinned: t.pinned, groupId: t.groupId, index: t.index}))}));
};
self.arrange = async (pin, group) => {
  for (const t of await chrome.tabs.query({})) {
    if (t.url.includes(pin)) await chrome.tabs.update(t.id, {pinned: true});
    if (t.url.includes(group)) await chrome.tabs.group({tabIds: [t.id]});
  }
  return true;
};
"""
SIGNED_IN = ("<h1>Shop</h1><p id=who></p><script>document.getElementById('who').textContent ="
             " document.cookie.includes('session=person') ? 'Signed in as the person' : 'Signed out';</script>")
ARTICLE = "<h1>Article</h1>" + "".join(f"<p>Paragraph {i}</p>" for i in range(200))
TIMER = "<h1>Timer</h1><p id=t>0</p><script>let n = 0; setInterval(() => { t.textContent = ++n; }, 100)</script>"
AGENT_PAGE = ("<h1>Agent's page</h1><button onclick=\"this.textContent='Pressed'\">Press</button>"
              "<label>Note <input name=note></label>")


def _free_display():
    for number in range(90, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{number}") and not os.path.exists(f"/tmp/.X{number}-lock"):
            return f":{number}"
    raise RuntimeError("no free X display number")


class Person:
    """The person: an X display, their headful Chromium, their tabs and their extension."""

    def __init__(self, pages):
        if shutil.which("Xvfb") is None:
            if os.environ.get("CI"):
                pytest.fail("Xvfb is missing: scripts/test.sh installs Debian's xvfb for the person tier")
            pytest.skip("Xvfb is not installed (Debian's xvfb; scripts/test.sh installs it)")
        self.display = _free_display()
        self.xvfb = subprocess.Popen(["Xvfb", self.display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        assert helpers.wait_until(lambda: os.path.exists(f"/tmp/.X11-unix/X{self.display[1:]}"), 10), "Xvfb did not start"
        self.extension = helpers.short_tmpdir("bpx-")
        for name, text in (("manifest.json", json.dumps(MANIFEST)), ("sw.js", WORKER),
                           ("content.js", "document.documentElement.dataset.personExtension = '1';"),
                           ("options.html", "<!doctype html><title>Options</title><p>Person's options</p>")):
            with open(os.path.join(self.extension, name), "w") as fh:
                fh.write(text)
        self.chromium = helpers.Chromium(helpers.short_tmpdir("bpp-"), display=self.display,
                                         extra_args=[f"--load-extension={self.extension}", "--window-size=1200,760"])
        browser = self.chromium.http("/json/version")["webSocketDebuggerUrl"]
        self.devtools = DevTools(browser)
        self.pages = pages
        self.urls = {"shop": pages.page(SIGNED_IN, title="shop"), "article": pages.page(ARTICLE, title="article"),
                     "timer": pages.page(TIMER, title="timer"), "pinned": pages.page("<h1>Mail</h1>", title="pinned"),
                     "grouped": pages.page("<h1>Docs</h1>", title="grouped")}
        # Signed in: the site's cookie in the person's profile.
        self.devtools.call("Storage.setCookies", {"cookies": [{"name": "session", "value": "person",
                                                                "domain": "127.0.0.1", "path": "/"}]})
        for name in ("shop", "article", "pinned"):
            self.devtools.call("Target.createTarget", {"url": self.urls[name]})
        self.devtools.call("Target.createTarget", {"url": self.urls["timer"], "newWindow": True})
        # Lands in the last focused window, the second one (CDP cannot name a window).
        self.devtools.call("Target.createTarget", {"url": self.urls["grouped"]})
        self.options = f"chrome-extension://{self._extension_id()}/options.html"
        self.devtools.call("Target.createTarget", {"url": self.options})
        assert helpers.wait_until(lambda: len(self.view_tabs()) >= 7, 15)
        self.worker_call(f"arrange({json.dumps(self.urls['pinned'])}, {json.dumps(self.urls['grouped'])})")
        self.scroll(self.urls["article"], 1500)

    def _extension_id(self):
        assert helpers.wait_until(lambda: self._worker() is not None, 15), "the extension's worker did not start"
        worker = self._worker()
        assert worker is not None
        return worker["url"].split("/")[2]

    def _worker(self):
        workers = [t for t in self.devtools.call("Target.getTargets")["targetInfos"]
                   if t["type"] == "service_worker" and t["url"].endswith("/sw.js")]
        return workers[0] if workers else None

    def worker_call(self, expression):
        """The extension's own answer (its service worker), awaited. A worker Chromium has just
        (re)started may be attached before its script ran (CI: personView undefined): the call
        waits, up to 5 s, for the script's functions first."""
        session = self.devtools.call("Target.attachToTarget", {"targetId": self._worker()["targetId"],
                                                               "flatten": True})["sessionId"]
        ready = ("(async () => { for (let i = 0; i < 100 && typeof self.personView !== 'function'; i++) "
                 f"await new Promise((r) => setTimeout(r, 50)); return await ({expression}); }})()")
        try:
            reply = self.devtools.call("Runtime.evaluate", {"expression": ready, "awaitPromise": True,
                                                            "returnByValue": True}, session_id=session)
        finally:
            self.devtools.call("Target.detachFromTarget", {"sessionId": session})
        assert "exceptionDetails" not in reply, reply
        return reply["result"]["value"]

    def view(self):
        return self.worker_call("personView()")

    def view_tabs(self):
        return {t["id"]: t for w in self.view() for t in w["tabs"]}

    def person_state(self, windows=None):
        """What the person sees: each window of theirs (`windows`: their ids; all by default) with
        its tabs (URL, active, pinned, group), which is focused, the article's scroll, and X's
        focused window."""
        view = [w for w in self.view() if windows is None or w["id"] in windows]
        return {"windows": view, "xFocus": self.x_focus(), "scroll": self.scroll_of(self.urls["article"])}

    def x_focus(self):
        done = subprocess.run(["xdotool", "getwindowfocus"], env=dict(os.environ, DISPLAY=self.display),
                              capture_output=True, text=True) if shutil.which("xdotool") else None
        return done.stdout.strip() if done else None

    def _target(self, url):
        return [t for t in self.chromium.http("/json/list") if t["url"] == url][0]["id"]

    def scroll(self, url, y):
        self.chromium.evaluate(self._target(url), f"window.scrollTo(0, {y}); scrollY")

    def scroll_of(self, url):
        return self.chromium.evaluate(self._target(url), "scrollY")["result"]["result"]["value"]

    def stop(self):
        try:
            self.devtools.close()
        except Exception:
            pass
        self.chromium.stop()
        self.xvfb.kill()
        self.xvfb.wait(10)
        for path in (self.chromium.root, self.extension):
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def person(pages):
    p = Person(pages)
    yield p
    p.stop()


@pytest.fixture(scope="module")
def pages():
    from tests.pages import PageServer

    with PageServer() as server:
        yield server


def agent_env(person, home):
    return helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=person.chromium.root)


def _without_focus(windows):
    return [{k: v for k, v in w.items() if k != "focused"} for w in windows]


def _agent_steps(person, home, env):
    """The Agent's steps in the person's browser: a new tab in their profile, open, click, type,
    screenshot. Returns the Agent's page URL."""
    ok(home, env, "open", "--new", person.urls["shop"])
    assert "Signed in as the person" in ok(home, env, "read")["text"]  # the person's profile: their session cookie
    agent_page = person.pages.page(AGENT_PAGE, title="agent")
    observation = ok(home, env, "open", agent_page)
    ok(home, env, "click", ref_of(observation, "button", "Press"))
    ok(home, env, "type", ref_of(observation, "textbox", "Note"), "from the agent")
    assert ok(home, env, "screenshot", os.path.join(home, "agent.png"))  # not into the checkout
    assert "Pressed" in ok(home, env, "read")["text"]
    return agent_page


def test_the_agent_works_in_the_person_s_profile_and_leaves_their_tabs_and_windows_alone(person, home):
    env = agent_env(person, home)
    before = person.person_state()
    assert ok(home, env, "connect")
    agent_page = _agent_steps(person, home, env)
    theirs = {w["id"] for w in before["windows"]}
    after = person.person_state(windows=theirs)
    # Every window of the person's holds the same tabs, in the same order, the same one active,
    # pinned and grouped as before, and the article scrolled where they left it. Before issue 39 a
    # second managed tab landed in the person's last focused window (CDP cannot name a window).
    assert _without_focus(after["windows"]) == _without_focus(before["windows"])
    assert after["scroll"] == before["scroll"] == 1500
    pilots = [w for w in person.view() if w["id"] not in theirs]
    agent_tabs = {t["url"] for w in pilots for t in w["tabs"]}
    assert agent_page in agent_tabs  # the shop tab the Agent opened, navigated on


@pytest.mark.xfail(strict=True, reason="issue 39, known: Chromium focuses the window of a tab that gets "
                   "Input.dispatchMouseEvent's mousePressed (X's focus moves to the Pilot window on a click)")
def test_a_click_leaves_the_person_s_focused_window_focused(person, home):
    env = agent_env(person, home)
    before = person.person_state()
    assert ok(home, env, "connect")
    _agent_steps(person, home, env)
    after = person.person_state(windows={w["id"] for w in before["windows"]})
    assert [w["focused"] for w in after["windows"]] == [w["focused"] for w in before["windows"]]
    assert after["xFocus"] == before["xFocus"]


def test_the_person_s_tabs_extension_pages_and_worker_are_never_the_agent_s(person, home):
    env = agent_env(person, home)
    ok(home, env, "connect")
    tabs = ok(home, env, "tabs")["tabs"]
    person_urls = set(person.urls.values())
    listed = {t["url"]: t for t in tabs}
    for url in person_urls:
        assert listed[url]["origin"] == "user_tab", listed[url]
    assert not any(t["url"].startswith("chrome-extension://") for t in tabs)  # options page, worker
    assert not any(t["origin"] in ("managed", "managed_popup") for t in tabs if t["url"] in person_urls)
    # A page command with no tab of its own opens one: it never drives a person's tab.
    before = person.view_tabs()
    ok(home, env, "snapshot")
    after = person.view_tabs()
    assert {i: before[i] for i in before} == {i: after[i] for i in before}


def test_a_killed_broker_closes_only_the_agent_s_tabs(person, home):
    env = agent_env(person, home)
    ok(home, env, "connect")
    agent_urls = [person.pages.page(f"<p>agent tab {i}</p>", title=f"agent-{i}") for i in range(3)]
    for url in agent_urls:
        ok(home, env, "open", "--new", url)
    person_before = {t["url"] for t in person.view_tabs().values()} - set(agent_urls)
    assert set(agent_urls) <= {t["url"] for t in person.view_tabs().values()}
    os.kill(helpers.broker_pid(home), signal.SIGKILL)
    started = time.monotonic()
    assert helpers.wait_until(lambda: not set(agent_urls) & {t["url"] for t in person.view_tabs().values()}, 5.0), \
        "the Agent's tabs were not closed within 5 s of the broker's SIGKILL"
    closed_in = time.monotonic() - started
    remaining = {t["url"] for t in person.view_tabs().values()}
    assert person_before <= remaining, person_before - remaining  # every person tab, with its URL
    assert closed_in < 5.0
