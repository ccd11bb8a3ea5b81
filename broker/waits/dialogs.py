"""JavaScript dialogs (alert, confirm, prompt, beforeunload) as pending records of an Agent.

A TabSession (broker/tabs/session.py) keeps the dialog its tab shows, from Page.javascriptDialogOpening /
Closed: an opaque `dialog-…` id, type, bounded message, default prompt, URL and opening time.
An Agent sees the dialogs of the tabs it holds — its managed tabs, their popups, the user tabs it
controls — and nobody answers them but an explicit `bp dialog` (or the person at the browser).

Listing and answering never go through the tab's worker queue: a command blocked behind the
dialog must not block the answer that releases it. They read the session the tab's worker
already has and call CDP on it from the request thread; they never attach a session.
Prompt text is typed text: it goes to the browser only, never to a log, a result or an error.
"""

import os
import time

from bp.errors import BPError, invalid_argument

# A private setting for tests (not a public flag): how long a dialog stays pending before the next
# observation of the Agent carries a `dialog_pending` hint. Read when the broker starts.
HINT_AFTER_S = float(os.environ.get("BROWSER_PILOT_DIALOG_HINT_MS", "10000")) / 1000.0
ANSWER_TIMEOUT_S = 5.0
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


def brief(session):
    """What an action or navigation that opened a dialog reports about it."""
    return session.dialog_brief()


def listing(broker, agent):
    return [public(agent, raw, dialog) for raw, _, dialog in pending(broker, agent)]


def result(broker, agent):
    """`bp dialogs`: the oldest MAX_LISTED pending dialogs and whether more are open."""
    rows = listing(broker, agent)
    return {"dialogs": rows[:MAX_LISTED], "truncated": len(rows) > MAX_LISTED, "total": len(rows)}


def _unknown(dialog_id):
    return BPError("invalid_argument", "No pending dialog of this Agent has that id; run 'bp dialogs'.",
                   context={"field": "dialogId", "dialogId": str(dialog_id)[:128]})


def answer(broker, agent, dialog_id, accept, prompt_text=None, timeout_s=ANSWER_TIMEOUT_S, deadline=None):
    """Accept or dismiss one pending dialog; returns the action taken and, with a `deadline`, the
    settle of what the answer caused (a confirm() that submits a form navigates only once it is
    answered: the answer says so, and comes after the new document, not before the POST)."""
    for raw, session, dialog in pending(broker, agent):
        if dialog["id"] != dialog_id:
            continue
        params = {"accept": bool(accept)}
        heard = _heard(broker, agent, session, raw) if deadline is not None else None
        if accept and prompt_text is not None:
            if dialog.get("type") != "prompt":
                raise invalid_argument("prompt", "--prompt answers a prompt() dialog only.", dialogId=dialog_id,
                                       dialogType=dialog.get("type"))
            params["promptText"] = prompt_text
        try:
            session.call("Page.handleJavaScriptDialog", params, timeout_s=timeout_s)
        except BPError as exc:
            if heard is not None:
                heard.abandon()
            if session.dialog is not dialog:  # answered or gone meanwhile (the person, the page)
                raise _unknown(dialog_id) from None
            if exc.code == "internal_error":  # CDP refused: e.g. the dialog closed a moment ago
                raise BPError("internal_error", "The browser did not accept the answer to the dialog.",
                              retryable=True, context={"dialogId": dialog_id}) from None
            raise
        # The Closed event normally follows at once; the record goes with it. Do not leave a
        # stale record listed if the event is late: this dialog has been answered.
        if session.dialog is dialog:
            session.dialog = None
        out = {"dialogId": dialog_id, "action": "accept" if accept else "dismiss"}
        if heard is not None:
            out["settle"] = _settled(heard, session, deadline)
        return out
    raise _unknown(dialog_id)


def _heard(broker, agent, session, raw):
    """The settle of the answer, listening from before it is given. The page is blocked by the
    dialog, so nothing is armed inside it: the navigation, the requests and (once the page runs
    again) the DOM are what the answer's settle sees."""
    from broker.actions import settle

    return settle.Settle(broker, agent, session, raw, grace=False)


def _settled(heard, session, deadline):
    """The answer's settle record. The answer was given whatever happens next: a navigation that
    stalls or a tab that goes away is reported as still pending, never as a failed answer."""
    try:
        return heard.wait(deadline)
    except BPError:
        return {"status": "capped", "waitedMs": int((time.monotonic() - heard.started) * 1000),
                "pending": {"navigation": True}}


def hints(broker, agent, now=None):
    """`dialog_pending` hints for this Agent's dialogs open longer than the threshold, each added
    once (to the next result that carries hints). The dialog stays pending."""
    now = time.monotonic() if now is None else now
    out = []
    for raw, _, dialog in pending(broker, agent):
        if now - dialog["opened"] < HINT_AFTER_S or agent.key in dialog["hinted"]:
            continue
        dialog["hinted"].add(agent.key)
        out.append({"code": "dialog_pending", "source": "event", "confidence": "strong",
                    "recommendedAction": "answer_dialog", "dialogId": dialog["id"], "dialogType": dialog.get("type"),
                    "tabId": agent.opaque_id(raw)})
    return out[:4]
