"""Keyboard family: keyboard (text to the focused element), press (one key or combo).

Broker side: broker/commands/actions.py, logic in broker/actions/keyboard.py.
"""

import click

from bp import keys, protocol
from cli import render
from cli.commands import given, send
from cli.commands.actions import text_argument


@click.command()
@click.argument("text")
@click.option("-c", "--clear", is_flag=True, help="Select all and delete in the focused field first.")
@click.option("-s", "--submit", is_flag=True, help="Press Enter afterwards (not sent if the page changed meanwhile).")
@click.option("-d", "--delay", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Milliseconds between keys; with a delay every character is its own key event.")
@click.option("--click", "click_css", metavar="CSS", help="Click this element first to focus it.")
@click.option("-l", "--limit", type=click.IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def keyboard(text, clear, submit, delay, click_css, limit):
    """Type TEXT into whatever has focus (TEXT '-' reads it from stdin).

    For fields without a ref (canvas apps, code editors, focus set by the page). Stops before
    any further key when focus or the page changes; evidence reports lengths only.

    \b
    Example:  bp keyboard "hello" --click "#editor" --delay 20
    """
    args = given({"text": text_argument(text), "limit": limit},
                 clear=clear, submit=submit, delay=delay, click=click_css)
    send(protocol.OP_KEYBOARD, args, render.observation)


def _combo(ctx, param, value):
    try:
        keys.parse(value)
    except keys.KeyError_ as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.command()
@click.argument("key", callback=_combo)
@click.option("-l", "--limit", type=click.IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def press(key, limit):
    """Press one KEY or combo on the focused element: Enter, Tab, Escape, ArrowDown, PageDown,
    Backspace, F5, a, Shift+Tab, Control+a, Meta+c (modifiers Control/Ctrl, Shift, Alt, Meta/Cmd).

    Evidence lists what changed (focus, value, content, navigation, dialog, popup).

    \b
    Example:  bp press Enter
    Example:  bp press Control+a
    """
    send(protocol.OP_PRESS, {"key": key, "limit": limit}, render.observation)
