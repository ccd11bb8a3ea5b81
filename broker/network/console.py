"""The console and page-error journals of held tabs (`bp console`, `bp errors`).

`Runtime.enable` (needed for console.* and uncaught exceptions; observable by pages) comes with
the hold like Network (broker/network/journal.py Hub.sync). Chrome replays the messages it kept
for the current document when Runtime is enabled, so messages of a user tab's current document
from before `bp tab N` are kept too; those of earlier documents are not. Console arguments stay
in Chrome's "console" object group; it is released every CONSOLE_RELEASE_EVERY messages so that
a chatty page does not keep its logged objects alive. Console text never reaches the log.
"""

import threading
from typing import TYPE_CHECKING, Any

from broker.network.entries import MAX_URL, now_ms

CONSOLE_RELEASE_EVERY = 200
MAX_CONSOLE = 500
MAX_ERRORS = 200
MAX_TEXT = 4096
LEVELS = ("debug", "info", "warning", "error")
_LEVEL_OF = {"log": "info", "info": "info", "debug": "debug", "dir": "info", "dirxml": "info", "table": "info",
             "trace": "debug", "clear": "info", "startGroup": "info", "startGroupCollapsed": "info",
             "endGroup": "info", "assert": "error", "profile": "debug", "profileEnd": "debug", "count": "debug",
             "timeEnd": "debug", "warning": "warning", "error": "error"}


class Console:
    """Hub's part that journals Runtime.consoleAPICalled and Runtime.exceptionThrown."""

    # The Hub's own, which this part uses (broker/network/journal.py, not imported: it imports this module).
    browser: Any  # broker/browser/binding.py Browser
    lock: threading.RLock

    if TYPE_CHECKING:
        def _owner_state(self, session) -> Any: ...  # the holder's KeyState, or None
        @staticmethod
        def _send(session, method: str, params: dict[str, Any] | None) -> None: ...

    def _runtime(self, session, method: str, params: dict[str, Any]) -> None:
        if method not in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown"):
            return
        state = self._owner_state(session)
        if state is None:
            return
        if method == "Runtime.consoleAPICalled":
            session.console_seen += 1
            if session.console_seen % CONSOLE_RELEASE_EVERY == 0:
                # The logged values' handles, which Browser Pilot never uses, keep them alive.
                self._send(session, "Runtime.releaseObjectGroup", {"objectGroup": "console"})
        url = ""
        try:
            raw = session.tab_raw_id or session.raw_id
            url = (self.browser.targets.info(raw) or {}).get("url") or ""
        except Exception:
            pass
        with self.lock:
            if method == "Runtime.consoleAPICalled":
                kind = params.get("type") or "log"
                text = " ".join(_remote_text(a) for a in (params.get("args") or [])[:32])
                state.console_seq += 1
                if len(state.console) == state.console.maxlen:
                    state.console_dropped += 1
                state.console.append({"id": f"console-{state.console_seq}", "level": _LEVEL_OF.get(kind, "info"),
                                      "type": kind[:32], "text": text[:MAX_TEXT], "truncated": len(text) > MAX_TEXT,
                                      "url": url[:MAX_URL], "timestamp": int(params.get("timestamp") or now_ms())})
            else:
                details = params.get("exceptionDetails") or {}
                exc = details.get("exception") or {}
                text = str(exc.get("description") or details.get("text") or "Uncaught exception")
                state.console_seq += 1
                if len(state.errors) == state.errors.maxlen:
                    state.errors_dropped += 1
                row = {"id": f"error-{state.console_seq}", "message": text[:MAX_TEXT], "truncated": len(text) > MAX_TEXT,
                       "url": str(details.get("url") or url)[:MAX_URL],
                       "timestamp": int(params.get("timestamp") or now_ms())}
                if details.get("lineNumber") is not None:
                    row["line"] = details["lineNumber"] + 1
                    row["column"] = (details.get("columnNumber") or 0) + 1
                state.errors.append(row)


def _remote_text(arg: dict[str, Any]) -> str:
    if "value" in arg:
        value = arg["value"]
        return value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if arg.get("unserializableValue"):
        return str(arg["unserializableValue"])
    return str(arg.get("description") or arg.get("type") or "")


def console_rows(hub_, agent, args: dict[str, Any]) -> dict[str, Any]:
    state = hub_.state(agent)
    limit = args.get("limit", 50)
    level = args.get("level")
    floor = LEVELS.index(level) if level else 0
    with hub_.lock:
        rows = [dict(r) for r in state.console if LEVELS.index(r["level"]) >= floor]
        dropped = state.console_dropped
    truncated = len(rows) > limit
    result: dict[str, Any] = {"messages": rows[-limit:], "total": len(rows), "truncated": truncated}
    if dropped:
        result["dropped"] = dropped
    return result


def error_rows(hub_, agent, args: dict[str, Any]) -> dict[str, Any]:
    state = hub_.state(agent)
    limit = args.get("limit", 50)
    with hub_.lock:
        rows = [dict(r) for r in state.errors]
        dropped = state.errors_dropped
    result: dict[str, Any] = {"errors": rows[-limit:], "total": len(rows), "truncated": len(rows) > limit}
    if dropped:
        result["dropped"] = dropped
    return result
