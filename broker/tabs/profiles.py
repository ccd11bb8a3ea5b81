"""`bp profiles --identify`: the explicit, visible way to learn which Chrome profile a context is.

For each unidentified live context: open one temporary chrome://version page in it (owned by the
janitor, so a crash still closes it), read the profile path it reports, require that path to be a
direct child of the browser's user-data root, read bounded Local State metadata, close the page.
Nothing is guessed from directory order or names.
"""

import json
import logging
import os

from bp.errors import BPError

log = logging.getLogger("broker.profiles")

LOCAL_STATE_MAX_BYTES = 8 * 1024 * 1024


def identify(broker, contexts, timeout_s=15.0):
    browser = broker.browser
    conn = browser.require()
    root = os.path.realpath(conn.candidate["userDataRoot"])
    local_state = _local_state(root)
    for context in contexts:
        if context in browser.identities and browser.identities[context].get("identityStatus") == "verified":
            continue
        browser.identities[context] = _identify_one(broker, conn, context, root, local_state, timeout_s)


def _identify_one(broker, conn, context, root, local_state, timeout_s):
    from broker.tabs.session import TabSession

    params = {"url": "chrome://version", "group": "profile-identification"}
    if context:
        params["browserContextId"] = context
    try:
        created = conn.janitor_call("create", params, timeout_s=timeout_s)
    except BPError:
        return {"identityStatus": "unavailable", "identityErrorCode": "profile_path_unavailable"}
    raw = created["targetId"]
    broker.browser.targets.mark_internal(raw)
    session = None
    try:
        session = TabSession(conn, broker.browser.targets, raw, timeout_s=timeout_s)
        path = None
        for _ in range(50):
            path = session.evaluate("(document.getElementById('profile_path') || {}).textContent || ''")
            if path:
                break
            import time

            time.sleep(0.05)
    except BPError:
        path = None
    finally:
        if session is not None:
            session.close()
        try:
            conn.cdp("Target.closeTarget", {"targetId": raw}, timeout_s=5.0)
            broker.browser.targets.wait_gone([raw], timeout_s=5.0)  # closed means gone
        except BPError:
            pass
    if not path:
        return {"identityStatus": "unavailable", "identityErrorCode": "profile_path_unavailable"}
    path = os.path.realpath(path.strip())
    if os.path.dirname(path) != root:
        return {"identityStatus": "unavailable", "identityErrorCode": "profile_path_unverified"}
    directory = os.path.basename(path)
    if local_state is None:
        return {"identityStatus": "unavailable", "identityErrorCode": "local_state_unavailable",
                "profileDirectory": directory}
    info = ((local_state.get("profile") or {}).get("info_cache") or {}).get(directory)
    if not isinstance(info, dict):
        return {"identityStatus": "unavailable", "identityErrorCode": "profile_metadata_missing",
                "profileDirectory": directory}
    out = {"identityStatus": "verified", "profileDirectory": directory}
    for key, field in (("name", "profileName"), ("gaia_name", "accountName"), ("user_name", "accountEmail")):
        value = info.get(key)
        if isinstance(value, str) and value:
            out[field] = value[:256]
    out["displayName"] = out.get("profileName") or directory
    return out


def _local_state(root):
    path = os.path.join(root, "Local State")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(LOCAL_STATE_MAX_BYTES + 1)
    except OSError:
        return None
    if len(raw) > LOCAL_STATE_MAX_BYTES:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
