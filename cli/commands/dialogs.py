"""bp dialogs / bp dialog: pending JavaScript dialogs of this Agent's tabs, answered explicitly.

Broker side: broker/commands/waits.py, broker/tabs/dialogs.py and broker/waits/dialog_answer.py (same operation names, from bp.protocol).
"""

import click

from bp import protocol
from cli.commands import send
from cli.output import escape

MAX_PROMPT = 100_000


def _render_list(r):
    rows = r.get("dialogs") or []
    if not rows:
        return "(no pending dialogs)"
    lines = []
    for d in rows:
        line = f"{d['dialogId']} {d['type']} on {d['tabId']}: \"{escape(d.get('message', ''))}\""
        if "defaultPrompt" in d:
            line += f" (default \"{escape(d['defaultPrompt'])}\")"
        lines.append(line)
    return "\n".join(lines)


@click.command()
def dialogs():
    """List the pending JavaScript dialogs (alert, confirm, prompt, beforeunload) of this Agent's
    tabs: its managed tabs, their popups and the user tabs it controls.

    Dialogs are never answered automatically; answer each with 'bp dialog'. Listing does not
    wait for commands that the dialog blocks.

    \b
    Example:  bp dialogs
    """
    send(protocol.OP_DIALOGS, {}, _render_list)


@click.command()
@click.argument("dialog_id", metavar="DIALOG_ID")
@click.option("--accept", is_flag=True, help="Accept (OK / leave the page).")
@click.option("--dismiss", is_flag=True, help="Dismiss (Cancel / stay on the page).")
@click.option("--prompt", "prompt_text", metavar="TEXT",
              help="With --accept on a prompt(): the text to answer ('-' reads it from stdin).")
def dialog(dialog_id, accept, dismiss, prompt_text):
    """Answer the pending dialog DIALOG_ID (from 'bp dialogs'): --accept [--prompt TEXT] or --dismiss.

    The prompt text goes to the page only: it is never echoed or logged. A command blocked by
    the dialog continues once it is answered.

    \b
    Examples:
      bp dialog dialog-1a2b3c4d5e6f --accept
      bp dialog dialog-1a2b3c4d5e6f --dismiss
      printf %s "$ANSWER" | bp dialog dialog-1a2b3c4d5e6f --accept --prompt -
    """
    if accept == dismiss:
        raise click.UsageError("Give exactly one of --accept or --dismiss.")
    if prompt_text is not None and not accept:
        raise click.UsageError("--prompt goes with --accept.")
    args = {"dialogId": dialog_id, "action": "accept" if accept else "dismiss"}
    if prompt_text is not None:
        if prompt_text == "-":
            import sys

            prompt_text = sys.stdin.read(MAX_PROMPT + 1)
        if len(prompt_text) > MAX_PROMPT:
            raise click.BadParameter(f"at most {MAX_PROMPT} characters", param_hint="--prompt")
        args["promptText"] = prompt_text
    send(protocol.OP_DIALOG, args,
         lambda r: f"{r['dialogId']}: {'accepted' if r['action'] == 'accept' else 'dismissed'}")
