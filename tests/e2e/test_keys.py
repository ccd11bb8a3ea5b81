"""`bp keyboard`, `bp press`, `bp hover` and the no-progress watchdog on real Chromium, in a
background managed tab (the user's own tab stays in front)."""

import os
import subprocess

from tests import helpers
from tests.helpers import bp, ref_of


def value_of(observation, name):
    return [e for e in observation["elements"] if e["name"] == name][0].get("value")


FORM = """<form action="/page" onsubmit="document.title='submitted'"><input name=q aria-label=Query autofocus>
<input aria-label=Second><button>Go</button></form><label for=pw>Password</label><input id=pw type=password>
<div contenteditable=true aria-label=Notes></div>"""


def test_keyboard_types_into_the_focused_field_and_reads_back(home, connected, pages):
    bp(home, "open", pages.page(FORM), env=connected)
    result = bp(home, "keyboard", "hello world", "--click", "input[name=q]", env=connected)
    assert result.rc == 0, result
    assert helpers.without_settle(result.json["evidence"]) == {"action": "keyboard", "kind": "input", "sensitive": False, "beforeLength": 0,
                                       "expectedLength": 11, "afterLength": 11, "status": "verified",
                                       "method": "keys"}
    assert value_of(result.json, "Query") == "hello world"
    slow = bp(home, "keyboard", " Again", "--delay", "5", env=connected)
    assert slow.json["evidence"]["status"] == "verified", slow
    assert value_of(slow.json, "Query") == "hello world Again"
    cleared = bp(home, "keyboard", "fresh", "--clear", env=connected)
    assert value_of(cleared.json, "Query") == "fresh", cleared


def test_keyboard_clears_rich_editors_and_submits(home, connected, pages):
    bp(home, "open", pages.page(FORM), env=connected)
    bp(home, "keyboard", "first draft", "--click", "[aria-label=Notes]", env=connected)
    result = bp(home, "keyboard", "second", "--clear", env=connected)
    assert result.json["evidence"]["kind"] == "contenteditable"
    assert result.json["evidence"]["status"] == "verified", result
    assert value_of(result.json, "Notes") == "second"
    submitted = bp(home, "keyboard", "query", "--click", "input[name=q]", "--submit", env=connected)
    assert submitted.rc == 0, submitted
    assert submitted.json["evidence"]["status"] == "unavailable"
    assert submitted.json["evidence"]["reason"] == "navigation"
    assert "q=query" in submitted.json["url"]


def test_keyboard_password_is_lengths_only(home, connected, pages):
    secret = "s3cret-" + os.urandom(4).hex()
    bp(home, "open", pages.page(FORM), env=connected)
    proc = subprocess.run([helpers.BP, "keyboard", "-", "--click", "#pw"], input=secret, env=connected,
                          capture_output=True, text=True, timeout=60)
    result = helpers.Result(proc)
    assert result.rc == 0, result
    assert result.json["evidence"]["sensitive"] is True
    assert result.json["evidence"]["afterLength"] == len(secret)
    logs = "".join(open(os.path.join(root, name), errors="replace").read()
                   for root, _, names in os.walk(home) for name in names if name.endswith(".log"))
    assert secret not in proc.stdout + proc.stderr + logs


def test_keyboard_stops_when_the_page_changes_between_keys(home, connected, pages):
    # The first key replaces the document: no further key may reach the new page.
    url = pages.page("<input aria-label=Trap autofocus oninput=\"location.href='/page?title=elsewhere'\">")
    bp(home, "open", url, env=connected)
    result = bp(home, "keyboard", "abc", "--click", "input", "--delay", "50", env=connected)
    assert result.rc != 0, result
    assert result.code == "unknown_outcome", result
    context = result.json["context"]
    assert context["action"] == "keyboard" and context["remainingStepsStopped"] is True
    assert context["step"] == "type" and context["dispatchedSteps"] >= 1
    assert context["reason"] in ("document_changed", "loader_changed", "focus_changed")
    title = bp(home, "snapshot", env=connected).json["title"]
    assert title == "elsewhere"


def test_keyboard_click_selector_that_matches_nothing(home, connected, pages):
    bp(home, "open", pages.page(FORM), env=connected)
    result = bp(home, "keyboard", "x", "--click", "#nope", env=connected)
    assert result.code == "invalid_argument" and result.json["context"]["field"] == "click", result


def test_press_keys_and_combos_report_their_effects(home, connected, pages):
    bp(home, "open", pages.page(FORM), env=connected)
    bp(home, "keyboard", "abc", "--click", "input[name=q]", env=connected)
    tab = bp(home, "press", "Tab", env=connected)
    assert tab.json["evidence"]["status"] == "verified", tab
    assert "focus_changed" in tab.json["evidence"]["effects"]
    back = bp(home, "press", "Shift+Tab", env=connected)
    assert "focus_changed" in back.json["evidence"]["effects"], back
    select_all = bp(home, "press", "Control+a", env=connected)
    assert select_all.rc == 0, select_all
    delete = bp(home, "press", "Backspace", env=connected)
    assert "value_changed" in delete.json["evidence"]["effects"], delete
    assert not value_of(delete.json, "Query")
    enter = bp(home, "press", "Enter", env=connected)
    assert "navigation" in enter.json["evidence"]["effects"], enter
    assert enter.json["title"] == "/page"


def test_press_rejects_unknown_keys_before_the_broker(home, connected):
    for combo in ("Hyper+a", "Ctrl+", "NotAKey", "Control+Shift+Nope"):
        result = bp(home, "press", combo, env=connected)
        assert result.code == "invalid_argument", (combo, result)
        assert result.json["context"]["field"] == "key"


def test_hover_opens_a_menu_in_a_background_tab(home, connected, pages):
    menu = """<nav><button id=m aria-expanded=false onmouseenter="
        this.setAttribute('aria-expanded', 'true');
        const item = document.createElement('button'); item.textContent = 'Settings';
        document.getElementById('list').appendChild(item)">Menu</button><div id=list></div></nav>"""
    observation = bp(home, "open", pages.page(menu), env=connected).json
    assert "Settings" not in [e["name"] for e in observation["elements"]]
    result = bp(home, "hover", str(ref_of(observation, "button", "Menu")), env=connected)
    assert result.rc == 0, result
    assert result.json["evidence"]["status"] == "verified", result.json["evidence"]
    assert "expanded_changed" in result.json["evidence"]["effects"]
    assert "Settings" in [e["name"] for e in result.json["elements"]]


def test_three_actions_without_progress_raise_one_watchdog_hint(home, connected, pages):
    observation = bp(home, "open", pages.page("<span role=button>Inert</span>"),
                     env=connected).json
    inert = str(ref_of(observation, "button", "Inert"))
    hints = []
    for _ in range(4):
        result = bp(home, "click", inert, env=connected)
        assert result.json["evidence"]["status"] == "unavailable", result
        hints.append([h for h in result.json["hints"] if h["code"] == "repeated_action"])
    assert [len(h) for h in hints] == [0, 0, 1, 0]
    assert hints[2][0] == {"code": "repeated_action", "source": "watchdog", "confidence": "strong",
                           "recommendedAction": "change_strategy", "streak": 3, "reason": "no_effect"}


def test_actions_never_move_the_users_focus(home, env_for, chromium, pages):
    env = env_for(home)
    user = chromium.new_user_tab(pages.url(f"/page?title=person-{os.path.basename(home)}"))
    socket = helpers.BrowserSocket(chromium)
    socket.call("Target.activateTarget", {"targetId": user})  # the person works in this tab
    socket.close()
    probe = "[document.visibilityState, document.hasFocus()]"
    assert helpers.wait_until(lambda: chromium.evaluate(user, probe)["result"]["result"]["value"] == ["visible", True])
    assert bp(home, "connect", env=env).rc == 0
    observation = bp(home, "open", "--new", pages.page(FORM + "<button aria-expanded=false onclick=\"this.setAttribute('aria-expanded','true')\">More</button>"),
                     env=env).json
    steps = [("click", str(ref_of(observation, "button", "More"))), ("type", str(ref_of(observation, "textbox", "Query")), "abc"),
             ("keyboard", "def"), ("press", "Tab"), ("hover", str(ref_of(observation, "button", "Go"))),
             ("scroll", "down")]
    for step in steps:
        result = bp(home, *step, env=env)
        assert result.rc == 0, (step, result)
        assert chromium.evaluate(user, probe)["result"]["result"]["value"] == ["visible", True], step
    chromium.close_tab(user)


def test_hover_type_and_select_refuse_covered_disabled_and_hidden_targets(home, connected, pages, chromium):
    body = ("<button id=h>Menu</button><input id=t aria-label=Name><select id=s aria-label=Pick>"
            "<option>One</option><option>Two</option></select>")
    observation = bp(home, "open", pages.page(body, title="guarded"), env=connected).json
    raw = [t for t, i in chromium.pages().items() if i["title"] == "guarded"][0]
    refs = {name: str(ref_of(observation, role, name)) for role, name in
            (("button", "Menu"), ("textbox", "Name"), ("combobox", "Pick"))}
    chromium.evaluate(raw, "const d=document.createElement('div');d.style='position:fixed;inset:0;z-index:9';"
                           "document.body.append(d); 1")
    for args in (("hover", refs["Menu"]), ("type", refs["Name"], "x"), ("select", refs["Pick"], "Two")):
        result = bp(home, *args, env=connected)
        assert result.code == "action_not_verified", (args, result)
        assert result.json["context"]["reason"] == "obscured", (args, result.json)
    chromium.evaluate(raw, "document.querySelector('div[style]').remove(); h.disabled = true;"
                           "t.style.visibility = 'hidden'; s.disabled = true; 1")
    for args, reason in ((("hover", refs["Menu"]), "disabled"), (("type", refs["Name"], "x"), "no_layout"),
                         (("select", refs["Pick"], "Two"), "disabled")):
        result = bp(home, *args, env=connected)
        assert result.code == "action_not_verified", (args, result)
        assert result.json["context"]["reason"] == reason, (args, result.json)
    values = chromium.evaluate(raw, "[t.value, s.value]")["result"]["result"]["value"]
    assert values == ["", "One"]  # nothing reached the page
