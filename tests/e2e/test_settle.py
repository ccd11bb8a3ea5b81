"""What an input really started, settled without waiting for a navigation that never comes:
a download, a fragment (same-document) navigation, a POST answered with 303 See Other."""

import os

import pytest

from tests import helpers
from tests.helpers import bp, ok, ref_of

# A command deadline well under the 10 s a navigation may take: an input that started no new
# document must settle long before it (today's stall ran into it).
SHORT = "4000"


def test_a_download_link_settles_at_once_and_reports_the_download(home, download_browser, pages):
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=download_browser.root)
    ok(home, env, "connect")
    name = f"export-{os.path.basename(home)}.csv"
    link = pages.url(f"/attachment?name={name}&content=a,b%0A1,2")
    page = ok(home, env, "open", pages.page(f'<a href="{link}">Export CSV</a><p>rows</p>'))
    result = bp(home, "--timeout", SHORT, "click", ref_of(page, "link", "Export CSV"), env=env)
    assert result.rc == 0, result
    evidence = result.json["evidence"]
    assert "download_started" in evidence["effects"], evidence
    assert "navigation" not in evidence["effects"]
    assert evidence["status"] == "verified"
    assert evidence["download"] == {"index": 1, "fileName": name}
    assert helpers.wait_until(lambda: os.path.exists(os.path.join(download_browser.saved, name)), timeout=20)
    assert ok(home, env, "downloads")["downloads"][0]["fileName"] == name
    # Enter on the focused link: the same settling, the same report; indexes are stable, oldest
    # first (the first download stays 1), so this second one is 2.
    again = f"again-{name}"
    page = ok(home, env, "open", pages.page(f'<a id="dl" href="{pages.url(f"/attachment?name={again}")}">Export</a>'))
    ok(home, env, "eval", "document.getElementById('dl').focus()")
    pressed = bp(home, "--timeout", SHORT, "press", "Enter", env=env)
    assert pressed.rc == 0, pressed
    assert "download_started" in pressed.json["evidence"]["effects"], pressed.json["evidence"]
    assert pressed.json["evidence"]["download"] == {"index": 2, "fileName": again}
    assert [d["fileName"] for d in ok(home, env, "downloads")["downloads"]][:2] == [name, again]


def test_a_fragment_link_settles_at_once_as_url_changed(home, connected, pages):
    body = '<a href="#usage">Usage</a>' + "<p>filler</p>" * 80 + '<h2 id="usage">Usage section</h2>'
    page = ok(home, connected, "open", pages.page(body))
    result = bp(home, "--timeout", SHORT, "click", ref_of(page, "link", "Usage"), env=connected)
    assert result.rc == 0, result
    assert result.json["evidence"]["effects"] == ["url_changed"], result.json["evidence"]
    assert result.json["evidence"]["status"] == "verified"
    assert result.json["url"].endswith("#usage")


@pytest.mark.parametrize("back_to_itself", [False, True])
def test_a_post_form_answered_with_303_is_a_navigation(home, connected, pages, back_to_itself):
    """Like a writable canned query of Datasette: POST, 303 See Other, GET (of the same page)."""
    from urllib.parse import quote

    key = os.urandom(4).hex()
    pages.html[key] = ('<form method="post" action="/see-other?to=%s">'
                       '<input name="q" aria-label="Query" value="select 1"><button>Run</button></form>')
    own = f"/html?id={key}&title=form"
    target = own if back_to_itself else "/html?title=saved"
    pages.html[key] %= quote(target, safe="")
    page = ok(home, connected, "open", pages.url(own))
    result = bp(home, "click", ref_of(page, "button", "Run"), env=connected)
    assert result.rc == 0, result
    assert result.json["title"] == ("form" if back_to_itself else "saved")
    assert "navigation" in result.json["evidence"]["effects"]
    assert any(path.startswith("/see-other") and event == ("posted", "q=select+1") for path, event, _ in pages.log)
