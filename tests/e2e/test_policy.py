"""The person's launch-time policy on real Chromium: denied operations never reach the browser,
per-key patterns add to the global list, navigation bounds hold for links, forms, redirects,
location changes and popups (no request leaves: the fixture server's log shows none), a user
tab outside the bounds cannot be taken, and an unusable policy file stops the service."""

import json
import os

from tests import helpers
from tests.helpers import bp, ok, ref_of

ALLOW_LOCAL = {"version": 1, "origins": {"allow": ["http://127.0.0.1:*"]}}


def write_policy(home, policy, name="policy.json", mode=0o600):
    path = os.path.join(home, name)
    with open(path, "w") as fh:
        fh.write(policy if isinstance(policy, str) else json.dumps(policy))
    os.chmod(path, mode)
    return path


def start(home, env_for, policy, **extra):
    os.chmod(home, 0o700)
    write_policy(home, policy)
    env = env_for(home, **extra)
    result = bp(home, "connect", env=env)
    assert result.rc == 0, result
    return env


def requested(pages, marker):
    """Requests that reached the fixture server for a page whose path holds `marker` (the first,
    allowed hop of a redirect names its target in its query: not counted)."""
    with pages.lock:
        return [path for path, event, _ in pages.log if marker in path and not path.startswith("/see-other")]


def denied(result, capability, operation):
    assert result.rc != 0 and result.code == "capability_denied", result
    assert result.json["context"]["capability"] == capability
    assert result.json["context"]["operation"] == operation
    assert "policy forbids" in result.json["remediation"]["message"]
    return result


# One key per capability: `deny-<capability>` may not use that one (and nothing else is denied).
PER_KEY = {"version": 1, "deny": ["close"],
           "keys": {f"deny-{cap}": {"deny": [cap]} for cap in
                    ("developer.eval", "action.input", "browser.control", "network.modify", "auth.manage",
                     "cookies.read", "observation.read", "artifact.read", "network.observe", "event.read",
                     "workspace.manage", "browser.discovery")}}


def test_each_capability_denied_never_reaches_the_browser(home, env_for, pages, chromium, tmp_path):
    env = start(home, env_for, PER_KEY)
    marker = os.urandom(4).hex()
    page = pages.page(f"<button onclick=\"fetch('/html?id=clicked-{marker}')\">go</button><input id=f>",
                      title=f"caps-{marker}")

    def as_key(cap):
        key_env = dict(env, BROWSER_PILOT_CLIENT_KEY=f"deny-{cap}")
        if cap not in ("browser.control", "observation.read"):
            ok(home, key_env, "open", page)  # its own managed tab, on the page
        return key_env

    # developer.eval: the script would have fetched a marker URL.
    e = as_key("developer.eval")
    denied(bp(home, "eval", f"fetch('/html?id=eval-{marker}')", env=e), "developer.eval", "eval")
    # action.input: the button's click would have fetched.
    e = as_key("action.input")
    ref = ref_of(ok(home, e, "snapshot"), "button", "go")
    denied(bp(home, "click", ref, env=e), "action.input", "click")
    denied(bp(home, "type", "2", "x", env=e), "action.input", "type")
    # browser.control: bp open never asks for the page.
    e = as_key("browser.control")
    denied(bp(home, "open", pages.url(f"/html?id=open-{marker}"), env=e), "browser.control", "open")
    # network.modify: no rule is in force afterwards (the blocked URL still loads).
    e = as_key("network.modify")
    denied(bp(home, "net", "block", f"*netrule-{marker}*", env=e), "network.modify", "net.rules.add")
    assert ok(home, e, "eval", f"fetch('/html?id=netrule-{marker}').then(r => r.status)")["value"] == 200
    # auth.manage: the cookie never reaches the page.
    e = as_key("auth.manage")
    denied(bp(home, "cookies", "set", f"pc{marker}=1", env=e), "auth.manage", "cookies.set")
    assert f"pc{marker}" not in ok(home, e, "eval", "document.cookie")["value"]
    denied(bp(home, "auth", "ada", "pw", env=e), "auth.manage", "auth.set")
    e = as_key("cookies.read")
    denied(bp(home, "cookies", env=e), "cookies.read", "cookies.list")
    e = as_key("observation.read")
    denied(bp(home, "snapshot", env=e), "observation.read", "snapshot")
    # artifact.read: no file written.
    e = as_key("artifact.read")
    shot = tmp_path / "shot.png"
    denied(bp(home, "screenshot", str(shot), env=e), "artifact.read", "screenshot")
    assert not shot.exists()
    e = as_key("network.observe")
    denied(bp(home, "net", env=e), "network.observe", "net.requests")
    e = as_key("event.read")
    denied(bp(home, "console", env=e), "event.read", "console")
    e = as_key("workspace.manage")
    denied(bp(home, "tabs", env=e), "workspace.manage", "tabs")
    e = as_key("browser.discovery")
    denied(bp(home, "status", env=e), "browser.discovery", "status")
    # The global deny applies to every key: close is denied by name, and the tab stays open.
    before = {t["url"] for t in chromium.pages().values()}
    denied(bp(home, "close", env=dict(env, BROWSER_PILOT_CLIENT_KEY="deny-event.read")), "workspace.manage", "close")
    assert {t["url"] for t in chromium.pages().values()} >= before
    assert requested(pages, f"eval-{marker}") == [] and requested(pages, f"clicked-{marker}") == []
    assert requested(pages, f"open-{marker}") == []
    # A key no pattern matches may do what is not denied globally.
    assert ok(home, env, "eval", "1 + 1")["value"] == 2
    shown = ok(home, dict(env, BROWSER_PILOT_CLIENT_KEY="deny-developer.eval"), "policy")["policy"]
    assert shown["inForce"] and shown["digest"].startswith("sha256:")
    assert shown["deniedForThisKey"] == ["close", "eval"]


def test_navigation_bounds_stop_every_way_out(home, env_for, pages):
    env = start(home, env_for, ALLOW_LOCAL)
    marker = os.urandom(4).hex()
    away = pages.url(f"/html?id=away-{marker}", site="a")  # http://a.test:<port>: outside the bounds
    inside = pages.url(f"/html?id=inside-{marker}")
    body = (f"<a href='{away}&via=link'>link</a>"
            f"<form action='{away}&via=form' method=post><button>send</button></form>"
            f"<a href='/see-other?to={away.replace('&', '%26')}%26via=redirect'>redirect</a>"
            f"<button onclick=\"location.href='{away}&via=location'\">location</button>"
            f"<button onclick=\"window.open('{away}&via=popup')\">popup</button>"
            f"<a href='{inside}'>inside</a>")
    start_page = pages.page(body, title=f"bounds-{marker}")
    for role, name in (("link", "link"), ("button", "send"), ("link", "redirect"), ("button", "location"),
                       ("button", "popup")):
        observation = ok(home, env, "open", start_page)
        reply = ok(home, env, "click", ref_of(observation, role, name))
        evidence = reply["evidence"]
        assert evidence["navigationBlocked"] == {"code": "navigation_blocked",
                                                 "origin": f"http://a.test:{pages.port}"}, (name, reply)
        assert "navigation_blocked" in evidence["effects"]
    assert requested(pages, f"away-{marker}") == []  # not one request left the browser
    with pages.lock:  # the redirect's first, allowed hop did reach the server
        assert any(path.startswith("/see-other") and marker in path for path, _, _ in pages.log)
    # bp open answers capability_denied, and an allowed navigation still works.
    result = bp(home, "open", away, env=env)
    assert result.code == "capability_denied", result
    assert result.json["context"] == {"capability": "browser.control", "operation": "open",
                                      "origin": f"http://a.test:{pages.port}", "reason": "navigation_blocked"}
    observation = ok(home, env, "open", start_page)
    after = ok(home, env, "click", ref_of(observation, "link", "inside"))
    assert "navigationBlocked" not in after["evidence"] and after["url"] == inside
    assert requested(pages, f"away-{marker}") == []


def test_user_tab_outside_bounds_cannot_be_taken_and_subresources(home, env_for, pages, chromium):
    env = start(home, env_for, {"version": 1, "origins": {"block": ["http://a.test:*"], "subresources": True}})
    marker = os.urandom(4).hex()
    # A tab nobody holds is never touched: the person's own tab loads the blocked site.
    raw = chromium.new_user_tab(pages.url(f"/page?title=user-{marker}", site="a"))
    assert helpers.wait_until(lambda: requested(pages, f"user-{marker}"), 10)
    try:
        assert helpers.wait_until(lambda: any(f"user-{marker}" in t["title"] for t in ok(home, env, "tabs")["tabs"]), 10)
        index = next(t["index"] for t in ok(home, env, "tabs")["tabs"] if f"user-{marker}" in t["title"])
        result = bp(home, "tab", index, env=env)
        assert result.code == "capability_denied", result
        assert result.json["context"]["reason"] == "tab_outside_bounds"
        assert result.json["context"]["origin"] == f"http://a.test:{pages.port}"
        # A user tab inside the bounds can be taken.
        fine = chromium.new_user_tab(pages.url(f"/page?title=fine-{marker}"))
        assert helpers.wait_until(lambda: any(f"fine-{marker}" in t["title"] for t in ok(home, env, "tabs")["tabs"]), 10)
        index = next(t["index"] for t in ok(home, env, "tabs")["tabs"] if f"fine-{marker}" in t["title"])
        ok(home, env, "tab", index)
        # subresources: true: the page's own requests to the blocked site fail in the browser.
        value = ok(home, env, "eval", f"fetch('{pages.url(f'/json?sub-{marker}', site='a')}')"
                                      ".then(r => 'loaded', e => 'failed')")["value"]
        assert value == "failed"
        assert requested(pages, f"sub-{marker}") == []
        chromium.close_tab(fine)
    finally:
        chromium.close_tab(raw)


def test_unusable_policy_stops_the_service(home, env_for, tmp_path):
    os.chmod(home, 0o700)
    cases = [
        ("{not json", {}, "invalid_argument", "policy"),
        ({"version": 1, "deny": ["developer.evil"]}, {}, "invalid_argument", "deny[0]"),
        ({"version": 2}, {}, "invalid_argument", "version"),
        ({"version": 1, "origins": {"allow": ["https://exa*mple.com"]}}, {}, "invalid_argument", "origins.allow[0]"),
        ({"version": 1}, {"mode": 0o644}, "unsafe_state", None),
        ({"version": 1}, {"symlink": True}, "unsafe_state", None),
        (None, {"env": "relative/policy.json"}, "invalid_argument", "BROWSER_PILOT_POLICY"),
        (None, {"env": str(tmp_path / "missing.json")}, "invalid_argument", "BROWSER_PILOT_POLICY"),
    ]
    for policy, how, code, field in cases:
        target = os.path.join(home, "policy.json")
        if os.path.lexists(target):
            os.unlink(target)
        extra = {}
        if how.get("symlink"):
            real = write_policy(str(tmp_path), policy, "real.json")
            os.symlink(real, target)
        elif policy is not None:
            write_policy(home, policy, mode=how.get("mode", 0o600))
        if how.get("env"):
            extra["BROWSER_PILOT_POLICY"] = how["env"]
        env = env_for(home, **extra)
        result = bp(home, "connect", env=env)
        assert result.rc != 0 and result.code == code, (policy, how, result)
        if field:
            assert result.json["context"]["field"] == field, result
        assert helpers.brokers_of(home) == [], "the service must not run on an unusable policy"
        assert bp(home, "status", env=env).json["service"]["state"] != "running"
        doctor = bp(home, "doctor", env=env).json
        assert doctor["policy"]["state"] == "unusable" and any(p["area"] == "policy" for p in doctor["problems"])


def test_policy_named_by_status_and_doctor(home, env_for, tmp_path):
    os.chmod(home, 0o700)
    path = write_policy(str(tmp_path), {"version": 1, "deny": ["eval"]}, "named.json")
    env = env_for(home, BROWSER_PILOT_POLICY=path)
    assert bp(home, "connect", env=env).rc == 0
    status = ok(home, env, "status")["policy"]
    assert status["inForce"] and status["path"] == path and status["source"] == "env"
    assert ok(home, env, "policy")["policy"]["digest"] == status["digest"]
    doctor = bp(home, "doctor", env=env).json["policy"]
    assert doctor["state"] == "in_force" and doctor["digest"] == status["digest"]
    # Without a policy: everything allowed, and said so.
    other = helpers.short_tmpdir("bph-")
    try:
        plain = env_for(other)
        assert bp(other, "connect", env=plain).rc == 0
        assert ok(other, plain, "policy")["policy"]["inForce"] is False
        assert ok(other, plain, "eval", "1 + 2")["value"] == 3
    finally:
        helpers.stop_brokers(other)


def test_locate_does_not_scroll_when_scrolling_is_denied(home, env_for, pages):
    """Issue 27 item 7: `bp locate` scrolls its match into view, but not for a key the policy
    denies scrolling (by operation or by its capability); the box is measured where it is."""
    env = start(home, env_for, {"version": 1, "keys": {"noscroll-*": {"deny": ["scroll"]},
                                                       "noinput-*": {"deny": ["action.input"]}}})
    url = pages.page("<div style='height:4000px'>tall</div><button id=far>far</button>", title="far")
    for key in ("noscroll-1", "noinput-1"):
        agent = dict(env, BROWSER_PILOT_CLIENT_KEY=key)
        ok(home, agent, "open", url)
        inner = ok(home, agent, "eval", "innerHeight")["value"]
        located = ok(home, agent, "locate", "#far")
        assert located["scrolled"] is False and located["y"] > inner, located
        assert ok(home, agent, "eval", "scrollY")["value"] == 0, key
    allowed = dict(env, BROWSER_PILOT_CLIENT_KEY="free-1")
    ok(home, allowed, "open", url)
    located = ok(home, allowed, "locate", "#far")
    assert "scrolled" not in located and ok(home, allowed, "eval", "scrollY")["value"] > 0


# --- right answers of bp open under the bounds (issue 27 item 3) ------------------------------------


def test_blocked_subresources_are_not_a_failed_open(home, env_for, pages):
    env = start(home, env_for, {"version": 1, "origins": {"block": ["http://a.test:*"], "subresources": True}})
    marker = os.urandom(4).hex()
    img = pages.url(f"/json?img-{marker}", site="a")
    observation = ok(home, env, "open", pages.page(f"<img src='{img}'><button>fine</button>", title=f"sub-{marker}"))
    assert observation["title"] == f"sub-{marker}" and ref_of(observation, "button", "fine")
    assert observation["evidence"]["navigationBlocked"] == {"code": "navigation_blocked",
                                                            "origin": f"http://a.test:{pages.port}"}
    assert requested(pages, f"img-{marker}") == []


def test_a_refused_open_new_closes_its_tab_and_keeps_the_selection(home, env_for, pages, chromium):
    env = start(home, env_for, ALLOW_LOCAL)
    marker = os.urandom(4).hex()
    first = ok(home, env, "open", pages.page("<p>first</p>", title=f"first-{marker}"))
    away = pages.url(f"/html?id=away-{marker}", site="a")
    redirect = pages.url(f"/see-other?to={away.replace('&', '%26')}")
    before = set(chromium.pages())
    refused = bp(home, "open", "--new", redirect, env=env)
    assert refused.code == "capability_denied", refused
    assert refused.json["context"]["reason"] == "redirect_blocked"
    assert refused.json["context"]["origin"] == f"http://a.test:{pages.port}"
    assert helpers.wait_until(lambda: set(chromium.pages()) == before, 10), (before, chromium.pages())
    selected = [t for t in ok(home, env, "tabs")["tabs"] if t["selected"]]
    assert [t["title"] for t in selected] == [f"first-{marker}"] and first["title"] == f"first-{marker}"
    assert ok(home, env, "eval", "document.title")["value"] == f"first-{marker}"
    assert requested(pages, f"away-{marker}") == []


def test_an_ip_spelled_in_decimal_or_hex_is_not_called_a_redirect(home, env_for, pages):
    port = pages.port
    env = start(home, env_for, {"version": 1, "origins": {"block": [f"http://127.0.0.1:{port}"]}})
    marker = os.urandom(4).hex()
    for spelling in ("2130706433", "0x7f000001"):
        refused = bp(home, "open", f"http://{spelling}:{port}/page?title=ip-{marker}", env=env)
        assert refused.code == "capability_denied", refused
        assert refused.json["context"]["reason"] == "navigation_blocked", (spelling, refused)
        assert refused.json["context"]["origin"] == f"http://127.0.0.1:{port}"
    assert requested(pages, f"ip-{marker}") == []
