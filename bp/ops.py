"""The operation table: one declaration per operation the CLI sends and the broker serves.

Every other list is derived from it: the OP_* names, OPERATIONS and MUTATING (bp/protocol.py),
the argument schemas (bp/schemas.py), which operations get a command record (broker/server.py),
how long the CLI waits (cli/client.py) and where the broker runs the handler (broker/registry.py).
Adding an operation is one declaration here, one handler in broker/commands/<family>.py and one
command in cli/commands/<family>.py (docs/design.md shows it step by step).

Stdlib only and no marshmallow: the CLI imports this on every call. Schemas are named here and
built by bp/schemas.py, on the broker only.
"""

TYPE_CHECKING = False  # typing is never imported at run time (the CLI's every call): annotations are strings
if TYPE_CHECKING:
    from typing import Any

# Where the broker runs an operation.
FRONT = "front"  # on the front loop itself: in-memory only, must never block (a cancel must not queue)
REQUEST = "request"  # on a request thread
TAB = "tab"  # on the selected tab's worker, one command at a time per tab (broker/registry.py on_tab)

# The contract's twelve capabilities (cli-contract.md, `initialize`): what an operation needs.
CAPABILITIES = ("browser.discovery", "browser.control", "workspace.manage", "observation.read", "action.input",
                "artifact.read", "event.read", "network.observe", "network.modify", "auth.manage", "cookies.read",
                "developer.eval")


class Op:
    """One operation. `long`: the CLI pings first, then waits for the command's own deadline (a
    busy tab is not a dead broker); otherwise the broker must answer within HEALTH_WAIT_MS.
    `mutating`: it may change browser or broker state, so a CLI-side timeout is unknown_outcome.
    `recorded`: it gets a command record (`bp command <id>` knows it). `reply`: the schema of a
    successful reply (bp/replies.py), declared for the hot commands and checked against real
    answers by tests/e2e/test_replies.py."""

    __slots__ = ("name", "args", "reply", "mutating", "recorded", "long", "capability", "runs")
    name: "str"
    args: "str"  # the name of its argument schema in bp/schemas.py
    reply: "str | None"  # the name of its reply schema in bp/replies.py
    mutating: "bool"
    recorded: "bool"
    long: "bool"
    capability: "str"  # one of CAPABILITIES
    runs: "str"  # FRONT, REQUEST or TAB

    def __init__(self, name: "str", args: "str", *, capability: "str", runs: "str" = REQUEST, mutating: "bool" = False,
                 recorded: "bool" = True, long: "bool" = True, reply: "str | None" = None) -> None:
        assert capability in CAPABILITIES, capability
        assert runs in (FRONT, REQUEST, TAB), runs
        self.name, self.args, self.reply = name, args, reply
        self.mutating, self.recorded, self.long = mutating, recorded, long
        self.capability, self.runs = capability, runs

    def __repr__(self) -> "str":
        return f"Op({self.name!r})"


OPS: "dict[str, Op]" = {}


def _op(name: "str", args: "str", **kw: "Any") -> "str":
    assert name not in OPS, name
    OPS[name] = Op(name, args, **kw)
    return name


# --- setup: cli/commands/setup.py, broker/commands/browser.py --------------------------------------
# Front-loop and read-only operations are answered at once and carry no command record.
OP_PING = _op("ping", "EmptyArgs", capability="browser.discovery", runs=FRONT, recorded=False, long=False)
OP_STATUS = _op("status", "EmptyArgs", capability="browser.discovery", recorded=False, long=False, reply="Status")
OP_BROWSERS = _op("browsers", "BrowserFilterArgs", capability="browser.discovery", recorded=False, long=False)
OP_CONNECT = _op("connect", "BrowserFilterArgs", capability="browser.control", mutating=True)
OP_DISCONNECT = _op("disconnect", "DisconnectArgs", capability="browser.control", mutating=True)

# --- tabs and profiles: cli/commands/tabs.py, broker/commands/tabs.py ----------------------------
OP_TABS = _op("tabs", "EmptyArgs", capability="workspace.manage", recorded=False, reply="Tabs")
OP_TAB = _op("tab", "TabArgs", capability="workspace.manage")
OP_OPEN = _op("open", "OpenArgs", capability="browser.control", runs=TAB, mutating=True, reply="Observation")
OP_CLOSE = _op("close", "CloseArgs", capability="workspace.manage", mutating=True)
OP_PROFILES = _op("profiles", "ProfilesArgs", capability="browser.discovery", mutating=True)  # --identify opens tabs
OP_PROFILE = _op("profile", "ProfileArgs", capability="workspace.manage", recorded=False)

# --- observation: cli/commands/observe.py, broker/commands/observe.py ----------------------------
OP_SNAPSHOT = _op("snapshot", "SnapshotArgs", capability="observation.read", runs=TAB, reply="Observation")

# --- actions: cli/commands/actions.py + keys.py, broker/commands/actions.py ----------------------
OP_CLICK = _op("click", "ClickArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")
OP_TYPE = _op("type", "TypeArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")
OP_HOVER = _op("hover", "HoverArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")
OP_DRAG = _op("drag", "DragArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")
OP_KEYBOARD = _op("keyboard", "KeyboardArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")
OP_PRESS = _op("press", "PressArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")

# --- forms: cli/commands/scroll.py + select.py, broker/commands/forms.py -------------------------
OP_SCROLL = _op("scroll", "ScrollArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")
OP_DROPDOWN = _op("dropdown", "DropdownArgs", capability="observation.read", runs=TAB)
OP_SELECT = _op("select", "SelectArgs", capability="action.input", runs=TAB, mutating=True, reply="Observation")

# --- page: cli/commands/page.py, broker/commands/page.py -----------------------------------------
OP_EVAL = _op("eval", "EvalArgs", capability="developer.eval", runs=TAB, mutating=True)
OP_FRAME = _op("frame", "FrameArgs", capability="observation.read", runs=TAB)
OP_READ = _op("read", "ReadArgs", capability="observation.read", runs=TAB, reply="Read")
OP_SEARCH = _op("search", "SearchArgs", capability="observation.read", runs=TAB, reply="Search")
OP_FIND = _op("find", "FindArgs", capability="observation.read", runs=TAB, reply="Find")
OP_LOCATE = _op("locate", "LocateArgs", capability="observation.read", runs=TAB)

# --- command records: cli/commands/commands.py, broker/commands/records.py ----------------------
OP_COMMANDS = _op("commands", "CommandsArgs", capability="workspace.manage", runs=FRONT, recorded=False, long=False)
OP_COMMAND = _op("command", "CommandArgs", capability="workspace.manage", runs=FRONT, recorded=False, long=False)
OP_CANCEL = _op("cancel", "CommandArgs", capability="workspace.manage", runs=FRONT, recorded=False, long=False)

# --- waits and dialogs: cli/commands/wait.py + dialogs.py, broker/commands/waits.py --------------
OP_WAIT = _op("wait", "WaitArgs", capability="observation.read", reply="Wait")
OP_DIALOGS = _op("dialogs", "EmptyArgs", capability="event.read", recorded=False)
OP_DIALOG = _op("dialog", "DialogArgs", capability="action.input", mutating=True)

# --- files: cli/commands/files.py, broker/commands/files.py --------------------------------------
# Mutating: a file may have been written.
OP_SCREENSHOT = _op("screenshot", "ScreenshotArgs", capability="artifact.read", runs=TAB, mutating=True)
OP_PDF = _op("pdf", "PdfArgs", capability="artifact.read", runs=TAB, mutating=True)
OP_DOWNLOADS = _op("downloads", "EmptyArgs", capability="artifact.read", long=False)
OP_DOWNLOAD = _op("download", "DownloadArgs", capability="artifact.read", mutating=True)
OP_UPLOAD = _op("upload", "UploadArgs", capability="action.input", runs=TAB, mutating=True)

# --- network and browser data: cli/commands/net.py + browser_data.py, broker/commands/network.py -
OP_NET = _op("net.requests", "NetArgs", capability="network.observe")
OP_NET_SHOW = _op("net.show", "NetShowArgs", capability="network.observe", mutating=True)  # --save writes a file
OP_NET_CLEAR = _op("net.clear", "EmptyArgs", capability="network.observe", mutating=True)
OP_NET_RULE_ADD = _op("net.rules.add", "NetRuleArgs", capability="network.modify", mutating=True)
OP_NET_RULES = _op("net.rules.list", "EmptyArgs", capability="network.modify")
OP_NET_RULE_REMOVE = _op("net.rules.remove", "NetRemoveArgs", capability="network.modify", mutating=True)
OP_COOKIES = _op("cookies.list", "CookiesArgs", capability="cookies.read", runs=TAB)
# No cookies.write among the twelve: cookies are credentials, so changing them is auth.manage.
OP_COOKIE_SET = _op("cookies.set", "CookieSetArgs", capability="auth.manage", runs=TAB, mutating=True)
OP_COOKIE_DELETE = _op("cookies.delete", "CookieDeleteArgs", capability="auth.manage", runs=TAB, mutating=True)
OP_AUTH_SET = _op("auth.set", "AuthArgs", capability="auth.manage", mutating=True)
OP_AUTH_CLEAR = _op("auth.clear", "EmptyArgs", capability="auth.manage", mutating=True)
OP_CONSOLE = _op("console", "ConsoleArgs", capability="event.read")
OP_ERRORS = _op("errors", "ConsoleArgs", capability="event.read")

# --- policy and audit: cli/commands/policy.py, broker/commands/policy.py -------------------------
OP_POLICY = _op("policy", "EmptyArgs", capability="browser.discovery", recorded=False, long=False)
OP_AUDIT = _op("audit", "AuditArgs", capability="event.read", recorded=False, long=False)

# --- batches and emulation: cli/commands/batch.py + emulate.py, broker/commands/batch.py + emulate.py -
# A batch runs each step through that step's own handler (its own record and capability checks);
# its own capability is that of the actions it is made for.
OP_BATCH = _op("batch", "BatchArgs", capability="action.input", mutating=True)
OP_EMULATE = _op("emulate", "EmulateArgs", capability="browser.control", runs=TAB, mutating=True)
# Mutating: it writes a file (like net.show --save).
OP_NET_EXPORT = _op("net.export", "NetExportArgs", capability="network.observe", mutating=True)

# --- trace: cli/commands/trace.py, broker/commands/trace.py ------------------------------------
# A per-Agent record of every command (broker state: start/stop mutate it); export writes a file.
OP_TRACE_START = _op("trace.start", "TraceStartArgs", capability="workspace.manage", mutating=True, long=False)
OP_TRACE_STOP = _op("trace.stop", "EmptyArgs", capability="workspace.manage", mutating=True, long=False)
OP_TRACE_EXPORT = _op("trace.export", "TraceExportArgs", capability="artifact.read", mutating=True)

OPERATIONS = tuple(OPS)
MUTATING = frozenset(name for name, op in OPS.items() if op.mutating)
# Journaled (broker/policy/audit.py): every mutating operation, taking a person's tab and cancelling a command.
AUDITED = MUTATING | {OP_TAB, OP_CANCEL}
RECORDED = frozenset(name for name, op in OPS.items() if op.recorded)
LONG = frozenset(name for name, op in OPS.items() if op.long)

__all__ = [name for name in list(globals()) if name.startswith("OP_")]  # for bp.protocol's re-export
