"""bp emulate on real Chromium: what the page's own JavaScript reads changes on Browser Pilot's
own tab (and its popups), never on a user's tab; `bp tabs` shows it; reset and release clear it."""

import os

from tests import helpers
from tests.helpers import bp, ok

PROBE = ("JSON.stringify({w: innerWidth, h: innerHeight, dpr: devicePixelRatio, ua: navigator.userAgent,"
         " tz: Intl.DateTimeFormat().resolvedOptions().timeZone, dark: matchMedia('(prefers-color-scheme: dark)').matches,"
         " locale: Intl.NumberFormat().resolvedOptions().locale, online: navigator.onLine})")


def probe(home, env):
    import json

    return json.loads(ok(home, env, "eval", PROBE)["value"])


def selected_row(home, env):
    return next(row for row in ok(home, env, "tabs")["tabs"] if row["selected"])


def test_emulation_is_what_the_page_sees_and_reset_clears_it(home, connected, pages):
    ok(home, connected, "open", "--new", pages.page("<p>emulated</p>"))
    before = probe(home, connected)
    reply = ok(home, connected, "emulate", "--viewport", "412x600", "--user-agent", "PilotPhone/1.0",
               "--timezone", "Asia/Tokyo", "--color-scheme", "dark", "--locale", "de-DE")
    assert reply["emulation"] == {"width": 412, "height": 600, "userAgent": "PilotPhone/1.0", "timezone": "Asia/Tokyo",
                                  "locale": "de-DE", "colorScheme": "dark"}
    seen = probe(home, connected)
    assert (seen["w"], seen["h"], seen["ua"], seen["tz"], seen["dark"], seen["locale"]) == \
        (412, 600, "PilotPhone/1.0", "Asia/Tokyo", True, "de-DE")
    # Requests carry the user agent too.
    assert "PilotPhone/1.0" in ok(home, connected, "eval", "fetch('/echo-headers').then(r => r.text())")["value"]
    assert selected_row(home, connected)["emulation"]["timezone"] == "Asia/Tokyo"
    # Settings add up: a second call changes only what it names.
    ok(home, connected, "emulate", "--color-scheme", "light", "--offline")
    seen = probe(home, connected)
    assert (seen["w"], seen["tz"], seen["dark"], seen["online"]) == (412, "Asia/Tokyo", False, False)
    assert ok(home, connected, "emulate", "--reset")["emulation"] == {}
    after = probe(home, connected)
    assert after == before
    assert "emulation" not in selected_row(home, connected)


def test_a_device_sets_its_metrics_and_user_agent(home, connected, pages):
    ok(home, connected, "open", "--new", pages.page("<meta name=viewport content='width=device-width'><p>device</p>"))
    reply = ok(home, connected, "emulate", "--device", "iPhone-14")
    assert reply["emulation"]["device"] == "iphone-14" and reply["emulation"]["mobile"] is True
    seen = probe(home, connected)
    assert (seen["w"], seen["dpr"]) == (390, 3) and "iPhone" in seen["ua"]
    assert ok(home, connected, "eval", "navigator.maxTouchPoints")["value"] == 5


def test_a_popup_of_an_emulated_tab_is_emulated_alike(home, connected, pages):
    name = os.path.basename(home)
    opener = ok(home, connected, "open", "--new", pages.page(
        f"<button onclick=\"window.open('/page?title=popup-{name}')\">Pop</button>"))
    ok(home, connected, "emulate", "--timezone", "America/Lima")
    ok(home, connected, "click", str(helpers.ref_of(opener, "button", "Pop")))
    ok(home, connected, "wait", "--popup")
    popup = next(r for r in ok(home, connected, "tabs")["tabs"] if f"popup-{name}" in r["url"])
    assert popup["origin"] == "managed_popup"
    ok(home, connected, "tab", str(popup["index"]))
    assert probe(home, connected)["tz"] == "America/Lima"
    assert selected_row(home, connected)["emulation"] == {"timezone": "America/Lima"}


def test_refused_on_a_users_tab(home, env_for, chromium, pages):
    env = env_for(home)
    user = chromium.new_user_tab(pages.url(f"/page?title=person-{os.path.basename(home)}"))
    try:
        assert bp(home, "connect", env=env).rc == 0
        row = next(r for r in ok(home, env, "tabs")["tabs"] if f"person-{os.path.basename(home)}" in r["url"])
        ok(home, env, "tab", str(row["index"]))
        result = bp(home, "emulate", "--viewport", "300x300", env=env)
        assert result.code == "target_not_owned", result
        assert result.json["context"]["reason"] == "user_tab"
        width = chromium.evaluate(user, "innerWidth")["result"]["result"]["value"]
        assert width != 300  # the person's tab is as it was
    finally:
        chromium.close_tab(user)


def test_release_clears_the_emulation(home, connected, pages):
    ok(home, connected, "open", "--new", pages.page("<p>released</p>"))
    default_width = probe(home, connected)["w"]
    ok(home, connected, "emulate", "--viewport", "333x444", "--timezone", "Africa/Cairo")
    index = selected_row(home, connected)["index"]
    ok(home, connected, "tab", "release")
    ok(home, connected, "tab", str(index))
    seen = probe(home, connected)
    assert seen["w"] == default_width and seen["tz"] != "Africa/Cairo"
    assert "emulation" not in selected_row(home, connected)


def test_bad_emulation_arguments(home, connected, pages):
    ok(home, connected, "open", "--new", pages.page("<p>bad</p>"))
    for args, field in ((["--viewport", "wide"], "viewport"), (["--device", "nokia-3310"], "device"),
                        (["--timezone", "Mars/Olympus_Mons"], "timezone"), (["--reset", "--offline"], "args.reset"),
                        ([], "args.emulate"), (["--geolocation", "91,0"], "args.latitude")):
        result = bp(home, "emulate", *args, env=connected)
        assert result.code == "invalid_argument", (args, result)
        assert result.json["context"]["field"] == field, (args, result)
    assert "emulation" not in selected_row(home, connected)
