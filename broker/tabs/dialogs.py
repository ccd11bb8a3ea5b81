"""JavaScript dialogs (alert, confirm, prompt, beforeunload) as pending records of an Agent.

A TabSession (broker/tabs/session.py) keeps the dialog its tab shows, from Page.javascriptDialogOpening /
Closed: an opaque `dialog-…` id, type, bounded message, default prompt, URL and opening time.
An Agent sees the dialogs of the tabs it holds — its managed tabs, their popups, the user tabs it
controls — and nobody answers them but an explicit `bp dialog` (or the person at the browser).

Listing never goes through the tab's worker queue (nor does answering, broker/waits/dialog_answer.py):
a command blocked behind the dialog must not block the answer that releases it. Both read the
session the tab's worker already has; they never attach a session. Here, below the observation
(which carries the `dialog_pending` hints), what is pending; answering, which settles on what the
answer caused, is an action above it.
"""

import time

from bp import settings

MAX_LISTED = 100  # dialogs per `bp dialogs` (one per tab at most); `truncated` says when more are open


def _visible(broker, agent, raw):
    holder, _ = broker.agents.owner(raw, broker.browser.popups())
    return holder == agent.key


def pending(broker, agent):
    """[(raw, session, dialog)] of the dialogs open in tabs this Agent holds, oldest first."""
    out = []
    for raw, session in broker.workers.sessions():
        dialog = session.dialog
        if dialog is not None and dialog.get("id") and _visible(broker, agent, raw):
            out.append((raw, session, dialog))
    out.sort(key=lambda row: row[2]["opened"])
    return out


def public(agent, raw, dialog):
    row = {"dialogId": dialog["id"], "tabId": agent.opaque_id(raw), "type": dialog.get("type"),
           "message": dialog.get("message", ""), "url": dialog.get("url", ""), "openedAt": dialog.get("openedAt")}
    if "defaultPrompt" in dialog:
        row["defaultPrompt"] = dialog["defaultPrompt"]
    return row


def listing(broker, agent):
    return [public(agent, raw, dialog) for raw, _, dialog in pending(broker, agent)]


def result(broker, agent):
    """`bp dialogs`: the oldest MAX_LISTED pending dialogs and whether more are open."""
    rows = listing(broker, agent)
    return {"dialogs": rows[:MAX_LISTED], "truncated": len(rows) > MAX_LISTED, "total": len(rows)}


def hints(broker, agent, now=None):
    """`dialog_pending` hints for this Agent's dialogs open longer than the threshold, each added
    once (to the next result that carries hints). The dialog stays pending."""
    now = time.monotonic() if now is None else now
    out = []
    for raw, _, dialog in pending(broker, agent):
        if now - dialog["opened"] < settings.current().dialog_hint_after_s or agent.key in dialog["hinted"]:
            continue
        dialog["hinted"].add(agent.key)
        out.append({"code": "dialog_pending", "source": "event", "confidence": "strong",
                    "recommendedAction": "answer_dialog", "dialogId": dialog["id"], "dialogType": dialog.get("type"),
                    "tabId": agent.opaque_id(raw)})
    return out[:4]
