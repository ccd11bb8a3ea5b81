"""The one list of stable error codes, remediation codes, and the failure envelope.

Consumers branch on `code`, never on English text. Codes are never renamed; new ones are
only added. Kept free of imports so the CLI can load it on every call (the annotations are
strings: `typing` is imported by the type checker only).
"""

TYPE_CHECKING = False  # typing is never imported at run time here: the checker reads these
if TYPE_CHECKING:
    from typing import Any

# The 26 codes of the original 0.5.0 contract, then our additions (marked).
ERROR_CODES = (
    "protocol_incompatible",
    "not_initialized",
    "capability_denied",
    "browser_not_found",
    "browser_not_authorized",
    "browser_disconnected",
    "broker_in_use",
    "profile_selection_required",
    "profile_context_stale",
    "profile_context_unavailable",
    "workspace_not_found",
    "lease_expired",
    "target_not_owned",
    "target_busy",
    "stale_ref",
    "action_not_verified",
    "command_cancelled",
    "command_expired",
    "wait_timeout",
    "unknown_outcome",
    "artifact_not_found",
    "artifact_expired",
    "cursor_expired",
    "result_too_large",
    "invalid_argument",
    "internal_error",
    # Additions of the Python product.
    "browser_selection_required",  # several viable browsers and no --browser filter
    "unsafe_state",  # home/runtime files with a symlink, foreign owner or open mode
    "quota_exceeded",  # private storage quota (files issue)
    "command_in_progress",  # a --request-id retry of a command that is still accepted/dispatched
    "target_crashed",  # the tab's renderer crashed or stopped answering: reload it or close it
    "browser_unresponsive",  # the whole browser stopped answering (paused, overloaded): not the tab's fault
    "storage_full",  # the disk (or the person's disk quota) is full: nothing was written
    "audit_unavailable",  # an audited command refused before dispatch: its audit line cannot be written
    "file_exists",  # a file-producing command would replace an existing file (no --overwrite)
    "navigation_failed",  # `bp open` could not load the URL (unreachable, refused, a load error): retryable
)

_CODE_SET = frozenset(ERROR_CODES)

# Default `retryable` per code; a raise site may override it.
RETRYABLE = {
    "browser_not_authorized": True,
    "browser_disconnected": True,
    "broker_in_use": True,
    "profile_context_stale": True,
    "lease_expired": True,
    "target_busy": True,
    "action_not_verified": True,
    "wait_timeout": True,
    "unknown_outcome": True,
    "command_in_progress": True,
    "browser_unresponsive": True,
    "navigation_failed": True,
}

# Remediation codes with the sentence a person reads.
REMEDIATIONS = {
    "connect_browser": "Run 'bp connect' to request remote debugging authorization.",
    "start_browser": "Start the browser (or run 'bp launch' for a private one), then run 'bp connect'.",
    "enable_remote_debugging": "Open chrome://inspect/#remote-debugging in the browser and turn on remote debugging.",
    "authorize_remote_debugging": "Allow the remote debugging request in the browser.",
    "restart_remote_debugging": "The browser's DevToolsActivePort is stale: restart the browser or turn remote debugging off and on again.",
    "allow_remote_debugging": "Click 'Allow' in the browser's remote debugging dialog, then run 'bp connect' again.",
    "select_browser": "Several browsers can be connected: run 'bp connect --browser <id>' with one of the listed ids.",
    "select_supported_browser": "Install or start a supported browser, or check the --browser filter against 'bp browsers'.",
    "select_running_browser_pilot": "Browser Pilot is connected to another browser: run 'bp disconnect' first or omit --browser.",
    "stop_incompatible_broker_or_isolate": "A Browser Pilot service of another version is running: stop it with its own 'bp disconnect', or set BROWSER_PILOT_HOME to isolate this installation.",
    "use_matching_executable_or_isolate": "The running service belongs to another installation: stop it with that installation's 'bp disconnect'.",
    "close_active_clients": "Other Agents still hold state in the service; it keeps running.",
    "inspect_broker_state": "Run 'bp status' to inspect the service before retrying.",
    "inspect_broker_startup": "The Browser Pilot service did not start; see the log under BROWSER_PILOT_HOME/logs.",
    "restart_unresponsive_broker": "The Browser Pilot service is running but does not answer. Tell the person running it; check again with 'bp status' (a stopped or overloaded service may recover). Never stop processes yourself.",
    "restart_browser_pilot": "Run 'bp connect' to start a new Browser Pilot service.",
    "inspect_command_before_retry": "Inspect the current tab state (or 'bp command <id>') before deciding whether to retry.",
    "relist_profile_contexts": "Run 'bp profiles' to list the current profile contexts.",
    "reload_or_close_tab": "The tab's page crashed or stopped answering: reload it with 'bp open <url>' or close it with 'bp close'.",
    "check_url_or_site": "The page could not be loaded: check the URL and that the site is reachable, then run 'bp open <url>' again.",
    "give_http_credentials": "The site asks for HTTP authentication: give credentials with 'bp auth USER -' (the password on stdin), then open it again.",
    "policy_forbids": "The person's policy forbids it; only the person can change the policy (and restart the service).",
    "wait_for_browser": "The browser stopped answering (paused, suspended or overloaded), not the tab: wait a moment and retry; tell the person if it lasts.",
    "free_disk_space": "The disk or the person's disk quota is full: tell the person; nothing was written. Retry once space is freed.",
    "fix_audit_journal": "The audit journal under BROWSER_PILOT_HOME/audit cannot be written (disk full, or its files or directory changed): tell the person; no audited command runs until it can be written.",
    "choose_other_path": "A file already exists at that path: give another path, or pass --overwrite to replace it.",
    "fix_private_state": "Fix the ownership/permissions of the named path (owner-only, no symlink), or choose another BROWSER_PILOT_HOME.",
}

# Hints the CLI adds for some codes (contract §2.2).
HINTS = {
    "stale_ref": "Run 'bp snapshot' to refresh element refs.",
    "browser_disconnected": "Run 'bp connect' first.",
    "unknown_outcome": "Inspect the current tab state before deciding whether to retry.",
}


class BPError(Exception):
    """A failure with a stable code. Everything that reaches a user is one of these."""

    # Set by the CLI on the error an interrupted command ends with (cli/client.py), and read with
    # getattr(exc, "exit_code", None): most errors never have it.
    exit_code: "int"

    def __init__(self, code: "str", message: "str", *, retryable: "bool | None" = None,
                 context: "dict[str, Any] | None" = None, remediation: "dict[str, Any] | None" = None,
                 hint: "str | None" = None) -> None:
        if code not in _CODE_SET:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code: str = code
        self.message: str = message
        self.retryable: bool = RETRYABLE.get(code, False) if retryable is None else bool(retryable)
        self.context: dict[str, Any] | None = context
        self.remediation: dict[str, Any] | None = remediation
        self.hint: str | None = hint

    def envelope(self) -> "dict[str, Any]":
        return failure(self.code, self.message, retryable=self.retryable, context=self.context,
                       remediation=self.remediation, hint=self.hint)


def remediation(code: "str", *, action_required: "bool" = True, message: "str | None" = None) -> "dict[str, Any]":
    return {"code": code, "message": message or REMEDIATIONS[code], "actionRequired": action_required}


def failure(code: "str", message: "str", *, retryable: "bool | None" = None, context: "dict[str, Any] | None" = None,
            remediation: "dict[str, Any] | None" = None, hint: "str | None" = None) -> "dict[str, Any]":
    """The public failure envelope (contract §2.2)."""
    out: dict[str, Any] = {
        "ok": False,
        "error": message,
        "code": code,
        "retryable": RETRYABLE.get(code, False) if retryable is None else bool(retryable),
    }
    hint = hint or HINTS.get(code)
    if hint:
        out["hint"] = hint
    if context:
        out["context"] = context
    if remediation:
        out["remediation"] = remediation
    return out


def invalid_argument(field: "str", message: "str", **context: "Any") -> "BPError":
    return BPError("invalid_argument", message, context={"field": field, **context})


def unsafe_state(path: "object", why: "str") -> "BPError":
    return BPError("unsafe_state", f"Refusing {path}: {why}.", context={"path": str(path), "reason": why},
                   remediation=remediation("fix_private_state"))


def target_crashed(reason: "str", **context: "Any") -> "BPError":
    """A command on a tab whose renderer crashed (`renderer_crashed`) or stopped answering
    (`unresponsive`): fails at once instead of waiting for a page that cannot answer."""
    message = ("The tab's page crashed." if reason == "renderer_crashed"
               else "The tab's page stopped answering.")
    return BPError("target_crashed", message, context={"reason": reason, **context},
                   remediation=remediation("reload_or_close_tab"))


def browser_unresponsive(**context: "Any") -> "BPError":
    """The whole browser stopped answering (a paused or suspended process, an overloaded
    machine), so the tab cannot be judged: retryable, and the tab is not marked crashed."""
    return BPError("browser_unresponsive", "The browser is not answering (paused, suspended or overloaded); "
                   "the tab is not known to have crashed.", retryable=True, context=context or None,
                   remediation=remediation("wait_for_browser", action_required=False))


def disconnected(message: "str" = "Browser Pilot is not connected to a browser.", *,
                 remediation_code: "str" = "connect_browser", context: "dict[str, Any] | None" = None,
                 retryable: "bool" = True) -> "BPError":
    return BPError("browser_disconnected", message, retryable=retryable, context=context,
                   remediation=remediation(remediation_code))
