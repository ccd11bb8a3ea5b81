"""Answering a JavaScript dialog (`bp dialog`), and the settle on what the answer caused.

Which dialogs are pending, and how they are listed, is the tabs' (broker/tabs/dialogs.py). The
answer never goes through the tab's worker queue: a command blocked behind the dialog must not
block the answer that releases it. It calls CDP on the session the tab's worker already has,
from the request thread. Prompt text is typed text: it goes to the browser only, never to a
log, a result or an error.
"""

import time

from bp.errors import BPError, invalid_argument
from broker.tabs.dialogs import pending

ANSWER_TIMEOUT_S = 5.0


def _unknown(dialog_id):
    return BPError("invalid_argument", "No pending dialog of this Agent has that id; run 'bp dialogs'.",
                   context={"field": "dialogId", "dialogId": str(dialog_id)[:128]})


def answer(broker, agent, dialog_id, accept, prompt_text=None, timeout_s=ANSWER_TIMEOUT_S, deadline=None,
           record=None):
    """Accept or dismiss one pending dialog; returns the action taken and, with a `deadline`, the
    settle of what the answer caused (a confirm() that submits a form navigates only once it is
    answered: the answer says so, and comes after the new document, not before the POST)."""
    for raw, session, dialog in pending(broker, agent):
        if dialog["id"] != dialog_id:
            continue
        params = {"accept": bool(accept)}
        heard = _heard(session, raw) if deadline is not None else None
        if accept and prompt_text is not None:
            if dialog.get("type") != "prompt":
                raise invalid_argument("prompt", "--prompt answers a prompt() dialog only.", dialogId=dialog_id,
                                       dialogType=dialog.get("type"))
            params["promptText"] = prompt_text
        if record is not None:
            record.dispatching()  # the answer of the command `record` is (a request thread's, not the tab worker's)
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


def _heard(session, raw):
    """The settle of the answer, listening from before it is given. The page is blocked by the
    dialog, so nothing is armed inside it: the navigation, the requests and (once the page runs
    again) the DOM are what the answer's settle sees."""
    from broker.actions import settle

    return settle.Settle(session, raw, grace=False)


def _settled(heard, session, deadline):
    """The answer's settle record. The answer was given whatever happens next: a navigation that
    stalls or a tab that goes away is reported as still pending, never as a failed answer."""
    try:
        return heard.wait(deadline)
    except BPError:
        return {"status": "capped", "waitedMs": int((time.monotonic() - heard.started) * 1000),
                "pending": {"navigation": True}}
