"""The command table: one row per `bp` command, the one list every other list derives from.

`cli/main.py` loads a command's module from its row; `hot` commands have a fast form
(cli/fast.py: `request` names the command's pure request builder, beside its click declaration,
and `op` the operation it sends); `step` commands can be steps of `bp batch`. Stdlib only: the
fast path reads it on every call.
"""


class Command:
    """One command: `module` (cli.commands.<family>) and `function` (its click command in it);
    `step`: a step `bp batch` can run (it acts on, or reads, the selected tab); hot commands
    name the operation their request goes to (`op`) and the builder of that request (`request`,
    a pure function in `module`). A plain class: no import on the fast path."""

    __slots__ = ("name", "module", "function", "step", "op", "request")

    def __init__(self, name, module, function, step=False, op=None, request=None):
        self.name, self.module, self.function = name, module, function
        self.step, self.op, self.request = step, op, request

    @property
    def hot(self):
        return self.request is not None

    def __repr__(self):
        return f"Command({self.name!r})"


def _family(module, *rows):
    return tuple(Command(row[0], f"cli.commands.{module}", *row[1:]) for row in rows)


TABLE = (
    *_family("setup", ("status", "status", False, "status", "status_request"), ("browsers", "browsers"),
             ("connect", "connect"), ("disconnect", "disconnect"), ("launch", "launch")),
    *_family("tabs", ("tabs", "tabs", False, "tabs", "tabs_request"), ("tab", "tab"),
             ("open", "open_url", True, "open", "open_request"), ("close", "close"), ("profiles", "profiles"),
             ("profile", "profile")),
    *_family("observe", ("snapshot", "snapshot", True, "snapshot", "snapshot_request")),
    *_family("actions", ("click", "click_ref", True, "click", "click_request"),
             ("type", "type_text", True, "type", "type_request"), ("hover", "hover", True, "hover", "hover_request"),
             ("drag", "drag", True, "drag", "drag_request")),
    *_family("commands", ("commands", "list_commands"), ("command", "show_command"), ("cancel", "cancel")),
    *_family("keys", ("keyboard", "keyboard", True, "keyboard", "keyboard_request"),
             ("press", "press", True, "press", "press_request")),
    *_family("scroll", ("scroll", "scroll", True, "scroll", "scroll_request")),
    *_family("select", ("dropdown", "dropdown", True), ("select", "select", True, "select", "select_request")),
    *_family("page", ("read", "read", True, "read", "read_request"),
             ("search", "search", True, "search", "search_request"), ("find", "find", True, "find", "find_request"),
             ("locate", "locate", True), ("frame", "frame", True), ("eval", "eval_js", True)),
    *_family("doctor", ("doctor", "doctor")),
    *_family("wait", ("wait", "wait", True, "wait", "wait_request")),
    *_family("dialogs", ("dialogs", "dialogs"), ("dialog", "dialog")),
    *_family("files", ("screenshot", "screenshot", True), ("pdf", "pdf", True), ("downloads", "downloads"),
             ("download", "download"), ("upload", "upload", True)),
    *_family("net", ("net", "net")),
    *_family("browser_data", ("cookies", "cookies"), ("auth", "auth"), ("console", "console"), ("errors", "errors")),
    *_family("completion", ("completion", "completion")),
    *_family("policy", ("policy", "policy"), ("audit", "audit")),
    *_family("batch", ("batch", "batch")),
    *_family("emulate", ("emulate", "emulate")),
    *_family("trace", ("trace", "trace")),
)
COMMANDS = {row.name: row for row in TABLE}
HOT = tuple(row.name for row in TABLE if row.hot)
STEPS = tuple(row.name for row in TABLE if row.step)
