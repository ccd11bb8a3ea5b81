"""bp wait on real Chromium: each condition, the timeout, argument rules, and no implicit tab."""

import os

import pytest

from tests import helpers
from tests.helpers import bp, ok, ref_of


def waited(home, env, *args):
    """`bp wait` with a generous deadline: the conditions below come true after short timers."""
    result = ok(home, env, "--timeout", "30000", "wait", *args)
    assert isinstance(result["elapsedMs"], int) and result["elapsedMs"] >= 0
    return result


def assert_one_element_matched(result, condition, key, tag_name, text):
    """The wait ended on `condition`, with one matching element, described under matched[key]."""
    assert result["condition"] == condition
    assert result["matched"]["totalMatches"] == 1
    assert result["matched"][key]["text"] == text
    assert result["matched"][key]["tagName"] == tag_name


def test_wait_url_after_a_delayed_navigation_is_a_case_insensitive_full_match(home, connected, pages):
    name = os.path.basename(home)
    target = pages.url(f"/page?title=Arrived-{name}")
    ok(home, connected, "open", pages.page(f"<script>setTimeout(() => location.href = {target!r}, 300)</script>"))
    result = waited(home, connected, "--url", f"*TITLE=arrived-{name.upper()}")
    assert result["condition"] == "url"
    assert result["matched"]["url"] == target
    tab = [t for t in ok(home, connected, "tabs")["tabs"] if t["selected"]][0]
    # The tab as the contract shows it: {title, url, origin, profileContextId}.
    assert set(result["matched"]) == {"title", "url", "origin", "profileContextId"}
    assert (result["matched"]["origin"], result["matched"]["profileContextId"]) == ("managed", tab["profileContextId"])
    # Full match: without '*' the pattern must be the whole URL; a part of it never matches.
    # Already loaded now: the title is the page's own, not a URL-like placeholder.
    again = ok(home, connected, "wait", "--url", target.upper())["matched"]
    assert (again["url"], again["title"]) == (target, f"Arrived-{name}")
    partial = bp(home, "--timeout", "600", "wait", "--url", f"title=arrived-{name}", env=connected)
    assert partial.code == "wait_timeout", partial


def test_wait_text_appearing_after_a_timer_also_in_an_open_shadow_root(home, connected, pages):
    ok(home, connected, "open", pages.page("""<div id=host></div><script>
      setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Order   confirmed'; document.body.append(p); }, 300);
      setTimeout(() => { const r = document.getElementById('host').attachShadow({mode: 'open'});
                         r.innerHTML = '<span>Shadow greeting</span>'; }, 600);
    </script>"""))
    result = waited(home, connected, "--text", "order confirmed")
    assert_one_element_matched(result, "text", "match", "p", "Order confirmed")
    shadow = waited(home, connected, "--text", "shadow GREETING", "--interval", "100")
    assert shadow["matched"]["match"]["tagName"] == "span"


def test_wait_selector_appearing_after_a_timer(home, connected, pages):
    ok(home, connected, "open", pages.page("""<script>
      setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.className = 'result';
                         d.textContent = 'Results'; document.body.append(d); }, 300);
    </script>"""))
    result = waited(home, connected, "--selector", "#late.result")
    assert_one_element_matched(result, "selector", "element", "div", "Results")
    bad = bp(home, "wait", "--selector", "div[", env=connected)
    assert bad.code == "invalid_argument" and bad.json["context"]["field"] == "selector", bad


def test_wait_dialog_reports_the_pending_dialog(home, connected, pages):
    ok(home, connected, "open", pages.page("<script>setTimeout(() => alert('timer says hi'), 300)</script>"))
    result = waited(home, connected, "--dialog")
    matched = result["matched"]
    assert result["condition"] == "dialog"
    assert matched["type"] == "alert" and matched["dialogId"].startswith("dialog-")
    assert matched["message"] == "timer says hi"
    tab = [t for t in ok(home, connected, "tabs")["tabs"] if t["selected"]][0]
    assert matched["tabId"] == tab["targetId"]
    # Still pending (never answered by waiting), and reported in full, as 'bp dialogs' lists it.
    assert ok(home, connected, "dialogs")["dialogs"] == [matched]
    ok(home, connected, "dialog", matched["dialogId"], "--accept")


def test_wait_popup_opened_by_the_page_after_a_timer(home, connected, pages):
    name = os.path.basename(home)
    popup_url = pages.url(f"/page?title=late-popup-{name}")
    page = ok(home, connected, "open", pages.page(
        f"""<button onclick="setTimeout(() => window.open({popup_url!r}), 300)">Later</button>"""))
    ok(home, connected, "click", str(ref_of(page, "button", "Later")))
    result = waited(home, connected, "--popup")
    matched = result["matched"]
    assert result["condition"] == "popup"
    assert matched["targetId"].startswith("tab-")
    assert set(matched) == {"title", "url", "origin", "profileContextId", "index", "targetId"}
    assert (matched["url"], matched["origin"]) == (popup_url, "managed_popup")
    rows = {t["targetId"]: t for t in ok(home, connected, "tabs")["tabs"]}
    assert matched["targetId"] in rows
    assert rows[matched["targetId"]]["origin"] == "managed_popup"
    assert rows[matched["targetId"]]["index"] == matched["index"]
    assert helpers.wait_until(lambda: "late-popup" in bp(home, "tabs", env=connected).stdout)
    # Shown now (the result and 'bp tabs'): a second wait does not report the same popup.
    again = bp(home, "--timeout", "600", "wait", "--popup", env=connected)
    assert again.code == "wait_timeout", again


def test_wait_download_ends_with_the_downloads_row_of_a_refused_download(home, connected, pages, chromium):
    link = pages.url("/attachment?name=report-1.txt")
    page = ok(home, connected, "open", pages.page(f'<a href="{link}" download>Get the report</a>'))
    browser = helpers.BrowserSocket(chromium)
    try:
        # Nothing is written to disk: the browser reports the download, then refuses it. Set
        # after the tab is attached, so that it is the last word on the download behaviour.
        browser.call("Browser.setDownloadBehavior", {"behavior": "deny"})
        ok(home, connected, "click", str(ref_of(page, "link", "Get the report")))
        result = waited(home, connected, "--download")
        listed = ok(home, connected, "downloads")["downloads"]
        # Not its begin: its end, as 'bp downloads' lists it (a finished one: test_files.py).
        assert [row["fileName"] for row in listed] == ["report-1.txt"]
        assert result == {"ok": True, "condition": "download", "matched": listed[0], "elapsedMs": result["elapsedMs"],
                          "timeoutMs": 30000}
        assert listed[0]["state"] == "canceled"
        # Reported once: the next wait looks for another download.
        again = bp(home, "--timeout", "600", "wait", "--download", env=connected)
        assert again.code == "wait_timeout", again
    finally:
        browser.close()


def test_wait_timeout_is_retryable_with_its_condition_and_says_nothing_of_mutations(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>nothing happens here</p>"))
    result = bp(home, "--timeout", "700", "wait", "--text", "never-appears", env=connected)
    assert result.rc == 1, result
    assert result.code == "wait_timeout"
    assert result.json["retryable"] is True
    assert result.json["context"] == {"condition": "text", "timeoutMs": 700}
    assert "mutation" not in result.json["error"].lower() and "click" not in result.json["error"].lower()


def test_wait_without_a_timeout_waits_30_s_and_says_so(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>already here</p>"))
    assert ok(home, connected, "wait", "--text", "already here")["timeoutMs"] == 30000
    # The global --timeout still sets it; the command's own --timeout wins over it.
    assert ok(home, connected, "--timeout", "45000", "wait", "--text", "already")["timeoutMs"] == 45000
    assert ok(home, connected, "--timeout", "45000", "wait", "--text", "here", "--timeout", "20000")["timeoutMs"] == 20000


def test_a_timed_out_wait_names_the_timeout_it_used(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>nothing happens here</p>"))
    result = bp(home, "--timeout", "9000", "wait", "--selector", "#never", "--timeout", "600", env=connected)
    assert result.code == "wait_timeout", result
    assert result.json["context"] == {"condition": "selector", "timeoutMs": 600}
    assert "600 ms" in result.json["error"] and "--timeout" in result.json["hint"]


@pytest.mark.parametrize("timeout", ["0", "300001", "x"])
def test_the_wait_timeout_out_of_bounds_is_invalid_argument(home, timeout):
    result = bp(home, "wait", "--dialog", "--timeout", timeout)
    assert result.code == "invalid_argument" and result.json["context"]["field"] == "timeout", result


@pytest.mark.parametrize("interval", ["99", "5001", "0", "x"])
def test_interval_out_of_bounds_is_invalid_argument(home, interval):
    result = bp(home, "wait", "--dialog", "--interval", interval)
    assert result.rc == 1 and result.code == "invalid_argument", result
    assert result.json["context"]["field"] == "interval"


@pytest.mark.parametrize("args", [[], ["--dialog", "--popup"], ["--url", "*", "--text", "x"],
                                  ["--selector", "a", "--download"]])
def test_exactly_one_condition(home, args):
    result = bp(home, "wait", *args)
    assert result.rc == 1 and result.code == "invalid_argument", result
    assert result.json["context"]["field"] == "condition"


def test_empty_conditions_are_invalid_argument(home):
    for option in ("--url", "--text", "--selector"):
        result = bp(home, "wait", option, " ")
        assert result.code == "invalid_argument" and result.json["context"]["field"] == option[2:], result


def test_waiting_without_a_selected_tab_is_an_error_and_opens_nothing(home, connected, chromium):
    before = set(chromium.pages())
    for args in (["--url", "*"], ["--text", "x"], ["--selector", "p"], ["--dialog"], ["--popup"], ["--download"]):
        result = bp(home, "--client-key", "agent-without-tabs", "--timeout", "2000", "wait", *args, env=connected)
        assert result.rc == 1, result
        assert result.code == "target_not_owned", result
        assert result.json["context"]["reason"] == "no_selected_tab"
    assert set(chromium.pages()) == before
