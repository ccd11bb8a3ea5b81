"""JavaScript dialogs on real Chromium: pending records of the Agent, answered only explicitly,
never behind a blocked command, invisible to other keys, and a hint when left pending."""

import json
import os
import subprocess

from tests import helpers
from tests.helpers import bp, ok, ref_of, logs_of

BUTTONS = """
<button onclick="window.alerted = 'yes'; alert('Heads up'); document.title = 'after-alert'">Alert</button>
<button onclick="window.confirmed = confirm('Delete it?')">Confirm</button>
<button onclick="window.answer = prompt('Your name?', 'Ada')">Prompt</button>
"""


def selected_tab(home, env):
    return [t for t in ok(home, env, "tabs")["tabs"] if t["selected"]][0]


def open_dialog(home, env, observation, button):
    """Click a button that opens a dialog: the click answers at once with dialog_opened."""
    result = ok(home, env, "--timeout", "20000", "click", str(ref_of(observation, "button", button)))
    assert result["evidence"]["effects"] == ["dialog_opened"], result
    assert result["dialog"]["dialogId"].startswith("dialog-")
    return result["dialog"]


def evaluate(home, env, expression):
    return ok(home, env, "eval", expression)["value"]


def test_alert_is_pending_until_accepted(home, connected, pages):
    page = ok(home, connected, "open", pages.page(BUTTONS, title="dialogs"))
    opened = open_dialog(home, connected, page, "Alert")
    assert opened["type"] == "alert"
    listed = ok(home, connected, "dialogs")["dialogs"]
    assert len(listed) == 1
    row = listed[0]
    assert set(row) == {"dialogId", "tabId", "type", "message", "url", "openedAt"}
    assert (row["dialogId"], row["type"], row["message"]) == (opened["dialogId"], "alert", "Heads up")
    assert row["tabId"] == selected_tab(home, connected)["targetId"]
    assert row["url"].startswith(pages.url("/html"))
    assert isinstance(row["openedAt"], int)
    # Page commands meanwhile say why they cannot run, and which dialog to answer.
    blocked = bp(home, "snapshot", env=connected)
    assert blocked.code == "action_not_verified", blocked
    assert blocked.json["context"]["dialogId"] == opened["dialogId"]
    answered = ok(home, connected, "dialog", opened["dialogId"], "--accept")
    assert answered == {"ok": True, "dialogId": opened["dialogId"], "action": "accept",
                        "settle": {"status": "quiet", "waitedMs": answered["settle"]["waitedMs"],
                                   "endedBy": "nothing_caused"}}
    assert ok(home, connected, "dialogs")["dialogs"] == []
    assert evaluate(home, connected, "document.title") == "after-alert"
    # Answered once: the id is gone.
    again = bp(home, "dialog", opened["dialogId"], "--accept", env=connected)
    assert again.code == "invalid_argument", again
    assert again.json["context"] == {"field": "dialogId", "dialogId": opened["dialogId"]}


def test_confirm_accept_and_dismiss_reach_the_page(home, connected, pages):
    page = ok(home, connected, "open", pages.page(BUTTONS, title="dialogs"))
    first = open_dialog(home, connected, page, "Confirm")
    assert ok(home, connected, "dialogs")["dialogs"][0]["message"] == "Delete it?"
    assert ok(home, connected, "dialog", first["dialogId"], "--accept")["action"] == "accept"
    assert evaluate(home, connected, "window.confirmed") is True
    page = ok(home, connected, "snapshot")
    second = open_dialog(home, connected, page, "Confirm")
    assert second["dialogId"] != first["dialogId"]
    assert ok(home, connected, "dialog", second["dialogId"], "--dismiss")["action"] == "dismiss"
    assert evaluate(home, connected, "window.confirmed") is False


def test_the_answer_to_a_confirm_settles_on_what_it_caused(home, connected, pages):
    """A confirm() guarding a form POST (the server takes 0.4 s) or a fetch: the answer comes after
    the new document or the fetch's render, so the Agent's next step sees the page's answer."""
    after = "/html?title=order-deleted"
    body = (f'<form method=post action="/see-other?wait=0.4&to={after}" onsubmit="return confirm(\'Delete?\')">'
            '<button>Delete</button></form>'
            '<button onclick="if (confirm(\'Load?\')) fetch(\'/slow?wait=0.4\').then(r => r.text())'
            '.then(() => { document.getElementById(\'out\').textContent = \'loaded\'; })">Load</button>'
            '<p id=out>waiting</p>')
    page = ok(home, connected, "open", pages.page(body, title="confirm-post"))
    dialog = open_dialog(home, connected, page, "Load")
    answered = ok(home, connected, "dialog", dialog["dialogId"], "--accept")
    assert answered["settle"]["status"] == "settled" and answered["settle"]["waitedMs"] >= 300, answered
    assert evaluate(home, connected, "document.getElementById('out').textContent") == "loaded"

    dismissed = ok(home, connected, "dialog", open_dialog(home, connected, page, "Load")["dialogId"], "--dismiss")
    assert dismissed["settle"]["status"] == "quiet", dismissed

    dialog = open_dialog(home, connected, page, "Delete")
    answered = ok(home, connected, "dialog", dialog["dialogId"], "--accept")
    assert answered["settle"]["status"] == "navigated", answered
    assert [e for p, e, _ in pages.log if p.startswith("/see-other") and isinstance(e, tuple)]  # posted
    assert selected_tab(home, connected)["title"] == "order-deleted"


def test_prompt_text_reaches_the_page_but_never_a_log_or_a_result(home, connected, pages):
    page = ok(home, connected, "open", pages.page(BUTTONS, title="dialogs"))
    opened = open_dialog(home, connected, page, "Prompt")
    row = ok(home, connected, "dialogs")["dialogs"][0]
    assert (row["type"], row["message"], row["defaultPrompt"]) == ("prompt", "Your name?", "Ada")
    secret = "prompt-secret-" + os.urandom(6).hex()
    answered = subprocess.run([helpers.BP, "dialog", opened["dialogId"], "--accept", "--prompt", "-"], env=connected,
                              input=secret, capture_output=True, text=True, timeout=60)
    assert answered.returncode == 0, answered
    reply = json.loads(answered.stdout)
    assert reply == {"ok": True, "dialogId": opened["dialogId"], "action": "accept", "settle": reply["settle"]}
    assert secret not in answered.stdout + answered.stderr
    assert evaluate(home, connected, "window.answer") == secret
    # Dismissing a prompt gives null; --prompt without --accept is refused before anything is sent.
    page = ok(home, connected, "snapshot")
    opened = open_dialog(home, connected, page, "Prompt")
    refused = bp(home, "dialog", opened["dialogId"], "--dismiss", "--prompt", "x", env=connected)
    assert refused.code == "invalid_argument", refused
    ok(home, connected, "dialog", opened["dialogId"], "--dismiss")
    assert evaluate(home, connected, "window.answer") is None
    assert secret not in logs_of(home)


def test_dialog_argument_rules(home, connected, pages):
    for args in (["dialog", "dialog-000000000000"], ["dialog", "dialog-000000000000", "--accept", "--dismiss"]):
        result = bp(home, *args, env=connected)
        assert result.code == "invalid_argument", (args, result)
    unknown = bp(home, "dialog", "dialog-000000000000", "--dismiss", env=connected)
    assert unknown.code == "invalid_argument"
    assert unknown.json["context"] == {"field": "dialogId", "dialogId": "dialog-000000000000"}
    # --prompt answers a prompt() only.
    page = ok(home, connected, "open", pages.page(BUTTONS, title="dialogs"))
    opened = open_dialog(home, connected, page, "Alert")
    wrong = bp(home, "dialog", opened["dialogId"], "--accept", "--prompt", "x", env=connected)
    assert wrong.code == "invalid_argument" and wrong.json["context"]["field"] == "prompt", wrong
    ok(home, connected, "dialog", opened["dialogId"], "--accept")


def test_beforeunload_of_a_navigation_is_pending_and_the_open_returns(home, connected, pages):
    name = os.path.basename(home)
    page = ok(home, connected, "open", pages.page(
        """<button onclick="window.touched = true">Touch</button>
        <script>window.onbeforeunload = (e) => { e.preventDefault(); e.returnValue = 'unsaved'; }</script>""",
        title="leaving"))
    ok(home, connected, "click", str(ref_of(page, "button", "Touch")))  # beforeunload needs a user gesture first
    elsewhere = pages.url(f"/page?title=elsewhere-{name}")
    # Stay: the navigation stops at the dialog, the open answers at once, dismissing keeps the page.
    stopped = ok(home, connected, "--timeout", "20000", "open", elsewhere)
    assert stopped["evidence"] == {"action": "navigate", "status": "unavailable", "reason": "dialog_opened",
                                   "effects": ["dialog_opened"]}
    assert stopped["dialog"]["type"] == "beforeunload"
    row = ok(home, connected, "dialogs")["dialogs"][0]
    assert (row["dialogId"], row["type"]) == (stopped["dialog"]["dialogId"], "beforeunload")
    ok(home, connected, "dialog", row["dialogId"], "--dismiss")
    assert evaluate(home, connected, "window.touched") is True  # still the same document
    # Leave: accepting lets the navigation proceed.
    again = ok(home, connected, "--timeout", "20000", "open", elsewhere)
    ok(home, connected, "dialog", again["dialog"]["dialogId"], "--accept")
    assert ok(home, connected, "--timeout", "20000", "wait", "--url", elsewhere)["matched"]["url"] == elsewhere
    assert ok(home, connected, "dialogs")["dialogs"] == []


def test_close_does_not_hang_on_a_beforeunload_handler(home, connected, pages):
    page = ok(home, connected, "open", "--new", pages.page(
        """<button onclick="1">Touch</button>
        <script>window.onbeforeunload = (e) => { e.preventDefault(); e.returnValue = 'unsaved'; }</script>"""))
    ok(home, connected, "click", str(ref_of(page, "button", "Touch")))
    # Closing a tab through CDP skips beforeunload: the tab closes, nothing is left pending.
    assert ok(home, connected, "--timeout", "20000", "close")["closed"] == 1
    assert ok(home, connected, "dialogs")["dialogs"] == []


def test_a_click_blocked_by_an_alert_is_unblocked_from_another_process(home, connected, pages):
    page = ok(home, connected, "open", pages.page(BUTTONS, title="dialogs"))
    click = subprocess.Popen([helpers.BP, "--timeout", "30000", "click", str(ref_of(page, "button", "Alert"))],
                             env=connected, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL)
    try:
        pending = ok(home, connected, "--timeout", "30000", "wait", "--dialog")["matched"]
        ok(home, connected, "dialog", pending["dialogId"], "--accept")
        out, err = click.communicate(timeout=60)
    finally:
        if click.poll() is None:
            click.kill()
            click.wait()
    assert click.returncode == 0, (out, err)
    result = json.loads(out)
    assert result["evidence"]["effects"] == ["dialog_opened"]
    assert result["dialog"] == {"type": "alert", "dialogId": pending["dialogId"], "message": pending["message"]}
    assert evaluate(home, connected, "document.title") == "after-alert"


def test_another_key_cannot_see_or_answer_a_dialog(home, env_for, pages):
    env = env_for(home)
    for key in ("dialog-owner", "dialog-other"):
        assert bp(home, "--client-key", key, "connect", env=env).rc == 0
    page = ok(home, env, "--client-key", "dialog-owner", "open", pages.page(BUTTONS, title="dialogs"))
    opened = ok(home, env, "--client-key", "dialog-owner", "--timeout", "20000", "click",
                str(ref_of(page, "button", "Alert")))["dialog"]
    assert ok(home, env, "--client-key", "dialog-other", "dialogs")["dialogs"] == []
    foreign = bp(home, "--client-key", "dialog-other", "dialog", opened["dialogId"], "--accept", env=env)
    assert foreign.code == "invalid_argument", foreign
    assert foreign.json["context"] == {"field": "dialogId", "dialogId": opened["dialogId"]}
    assert [d["dialogId"] for d in ok(home, env, "--client-key", "dialog-owner", "dialogs")["dialogs"]] == \
        [opened["dialogId"]]
    ok(home, env, "--client-key", "dialog-owner", "dialog", opened["dialogId"], "--accept")


def test_a_dialog_left_pending_adds_one_hint_to_the_next_observation(home, env_for, pages):
    env = env_for(home, BROWSER_PILOT_DIALOG_HINT_MS="1")
    assert bp(home, "connect", env=env).rc == 0
    page = ok(home, env, "open", pages.page(BUTTONS, title="dialogs"))
    opened = open_dialog(home, env, page, "Alert")
    elsewhere = ok(home, env, "open", "--new", pages.page("<button>Other tab</button>", title="other"))
    hints = [h for h in elsewhere["hints"] if h["code"] == "dialog_pending"]
    assert len(hints) == 1, elsewhere["hints"]
    hint = hints[0]
    assert (hint["source"], hint["confidence"], hint["recommendedAction"], hint["dialogId"]) == \
        ("event", "strong", "answer_dialog", opened["dialogId"])
    # Once per dialog; it stays pending until answered.
    assert not [h for h in ok(home, env, "snapshot")["hints"] if h["code"] == "dialog_pending"]
    assert [d["dialogId"] for d in ok(home, env, "dialogs")["dialogs"]] == [opened["dialogId"]]
    ok(home, env, "dialog", opened["dialogId"], "--accept")
