"""`bp wait --idle`, `bp wait --popup` after the popup's first commit, and `bp open` of an
unreachable URL as a failure (issue 25), on real Chromium with pages on 127.0.0.1."""

import socket

from tests.helpers import bp, names, ok, ref_of



def test_an_open_caps_its_settle_and_wait_idle_waits_for_the_apps_late_answer(home, connected, corpus):
    opened = ok(home, connected, "open", corpus.url("late_fetch"))
    # The app's fetch takes 4 s: the open settles at most 3 s, says so, and shows no answer yet.
    assert opened["settle"]["status"] == "capped", opened["settle"]
    assert opened["settle"]["pending"]["requests"] == 1
    assert "Late answer" not in names(opened)
    idle = bp(home, "wait", "--idle", "--timeout", "15000", env=connected)
    assert idle.rc == 0, idle
    assert idle.json["condition"] == "idle"
    assert idle.json["matched"]["quietMs"] >= 500
    assert idle.json["matched"]["url"] == corpus.url("late_fetch")
    assert "Late answer" in names(ok(home, connected, "snapshot"))


def test_wait_idle_does_not_wait_for_an_event_stream(home, connected, corpus):
    ok(home, connected, "open", corpus.url("stream"))
    idle = bp(home, "wait", "--idle", "--timeout", "10000", env=connected)
    assert idle.rc == 0, idle
    assert idle.json["matched"]["longLived"] >= 1  # the EventSource, counted and not awaited


def test_wait_idle_on_a_page_that_never_stops_changing_times_out(home, connected, corpus):
    ok(home, connected, "open", corpus.url("clock"))
    idle = bp(home, "wait", "--idle", "--timeout", "2000", env=connected)
    assert idle.rc == 1 and idle.code == "wait_timeout", idle
    assert idle.json["context"]["condition"] == "idle"


def test_wait_popup_matches_once_the_popups_own_page_committed(home, connected, corpus):
    page = ok(home, connected, "open", corpus.url("popup_opener"))
    click = bp(home, "click", ref_of(page, "button", "Open popup"), env=connected)
    assert click.rc == 0, click
    popup = bp(home, "wait", "--popup", "--timeout", "15000", env=connected)
    assert popup.rc == 0, popup
    matched = popup.json["matched"]
    # The popup's server answers after 0.7 s: before, its target is an untitled about:blank.
    assert matched["url"] == f"http://127.0.0.1:{corpus.port}/page?case=landed&delay=700", matched
    assert matched["title"] == "landed", matched


def test_open_of_an_unreachable_url_is_a_retryable_failure_with_the_error_page(home, connected):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    result = bp(home, "open", f"http://127.0.0.1:{port}/orders?token=secret", env=connected)
    assert result.rc == 1, result
    assert result.code == "navigation_failed", result
    assert result.json["retryable"] is True
    context = result.json["context"]
    assert "ERR_CONNECTION_REFUSED" in context["navigationError"]
    assert context["url"] == f"http://127.0.0.1:{port}/orders?…"  # never the query
    assert "secret" not in result.stdout
    assert isinstance(context["observation"]["elements"], list)
    assert result.json["remediation"]["code"] == "check_url_or_site"
