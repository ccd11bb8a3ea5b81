"""Keyboard family: keyboard (text to the focused element), press (one key or combo).

Broker side: broker/commands/actions.py, logic in broker/actions/keyboard.py.
"""

from bp import keys, protocol
from cli import render
from cli.build import Refused, given
from cli.commands import built, send
from cli.commands.actions import bounded_text, text_argument
from cli.declare import IntRange, argument, command, option


@command()
@argument("text")
@option("-c", "--clear", is_flag=True, help="Select all and delete in the focused field first.")
@option("-s", "--submit", is_flag=True, help="Press Enter afterwards (not sent if the page changed meanwhile).")
@option("-d", "--delay", type=IntRange(0, 1000), default=0, show_default=True,
              help="Milliseconds between keys; with a delay every character is its own key event.")
@option("--click", "click_css", metavar="CSS", help="Click this element first to focus it.")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def keyboard(**values):
    """Type TEXT into whatever has focus (TEXT '-' reads it from stdin).

    For fields without a ref (canvas apps, code editors, focus set by the page). Stops before
    any further key when focus or the page changes; evidence reports lengths only.

    \b
    Example:  bp keyboard "hello" --click "#editor" --delay 20
    """
    values["text"] = text_argument(values["text"])
    send(protocol.OP_KEYBOARD, built(keyboard_request, values), render.observation)


def keyboard_request(v):
    return given({"text": bounded_text(v["text"]), "limit": v["limit"]},
                 clear=v["clear"], submit=v["submit"], delay=v["delay"], click=v["click_css"])


def _combo(ctx, param, value):
    try:
        keys.parse(value)
    except keys.KeyError_ as exc:
        raise Refused(str(exc)) from None
    return value


@command()
@argument("key", callback=_combo)
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def press(**values):
    """Press one KEY or combo on the focused element: Enter, Tab, Escape, ArrowDown, PageDown,
    Backspace, F5, a, Shift+Tab, Control+a, Meta+c (modifiers Control/Ctrl, Shift, Alt, Meta/Cmd).

    Evidence lists what changed (focus, value, content, navigation, dialog, popup).

    \b
    Example:  bp press Enter
    Example:  bp press Control+a
    """
    send(protocol.OP_PRESS, built(press_request, values), render.observation)


def press_request(v):
    return {"key": v["key"], "limit": v["limit"]}
