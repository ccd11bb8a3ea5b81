"""marshmallow schemas for every CLI <-> broker message.

The broker validates each request on arrival (after the size bound) and each reply before it
leaves, so malformed data is refused at the boundary with `invalid_argument`. The CLI does not
import this module (marshmallow costs ~90 ms); it trusts only size-bounded replies that pass
`bp.envelope.check_reply`.
"""

from __future__ import annotations

from marshmallow import EXCLUDE, RAISE, Schema, ValidationError, fields, validate, validates_schema

from bp import ops, protocol
from bp.errors import ERROR_CODES


class Strict(Schema):
    """A message whose unknown fields are refused (marshmallow's Meta is inherited)."""

    class Meta:
        unknown = RAISE


class RequestSchema(Strict):
    v = fields.List(fields.Integer(strict=True), required=True, validate=validate.Length(equal=2))
    op = fields.String(required=True, validate=validate.Length(min=1, max=64))
    client = fields.String(required=True, validate=validate.Regexp(protocol.CLIENT_KEY_RE))
    requestId = fields.String(validate=validate.Regexp(protocol.REQUEST_ID_RE))
    commandId = fields.String(required=True, validate=validate.Regexp(r"^cmd-[A-Za-z0-9]{8,64}$"))
    timeoutMs = fields.Integer(required=True, strict=True,
                               validate=validate.Range(protocol.TIMEOUT_MIN_MS, protocol.TIMEOUT_MAX_MS))
    args = fields.Dict(keys=fields.String(), required=True)
    installation = fields.Dict(keys=fields.String())


class BrowserFilterArgs(Strict):
    browser = fields.String(validate=validate.Length(min=1, max=256), allow_none=True)


class EmptyArgs(Strict):
    """No arguments: any field is refused."""


class BrokerIdentitySchema(Strict):
    pid = fields.Integer(required=True, strict=True, validate=validate.Range(min=1))
    startTime = fields.Float(required=True, allow_none=True)


class DisconnectArgs(Strict):
    expectBroker = fields.Nested(BrokerIdentitySchema, allow_none=True)


class TabArgs(Strict):
    index = fields.Integer(strict=True, validate=validate.Range(min=1, max=100_000))
    targetId = fields.String(validate=validate.Regexp(r"^tab-[0-9a-f]{12}$"))
    release = fields.Boolean(truthy={True}, falsy={False})


class OpenArgs(Strict):
    url = fields.String(required=True, validate=validate.Length(min=1, max=8192))
    new = fields.Boolean(truthy={True}, falsy={False})
    profile = fields.String(validate=validate.Length(min=1, max=256))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))


class CloseArgs(Strict):
    all = fields.Boolean(truthy={True}, falsy={False})


class ProfilesArgs(Strict):
    identify = fields.Boolean(truthy={True}, falsy={False})
    refresh = fields.Boolean(truthy={True}, falsy={False})


class ProfileArgs(Strict):
    selector = fields.String(required=True, validate=validate.Length(min=1, max=256))


class SnapshotArgs(Strict):
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))
    diff = fields.Boolean(truthy={True}, falsy={False})
    grep = fields.String(validate=validate.Length(min=1, max=protocol.MAX_GREP))
    role = fields.String(validate=validate.OneOf(protocol.ELEMENT_ROLES))
    disabled = fields.Boolean(truthy={True}, falsy={False})

    @validates_schema
    def _one_form(self, data, **kwargs):
        if data.get("diff") and ("grep" in data or "role" in data):
            raise ValidationError("give --diff or --grep/--role, not both", field_name="diff")


class ClickArgs(Strict):
    ref = fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    xy = fields.List(fields.Float(allow_nan=False), validate=validate.Length(equal=2))
    button = fields.String(validate=validate.OneOf(["left", "right"]))
    clickCount = fields.Integer(strict=True, validate=validate.Range(min=1, max=2))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))

    @validates_schema
    def _one_target(self, data, **_):
        if ("ref" in data) == ("xy" in data):
            raise ValidationError("give exactly one of ref or xy", field_name="ref")


class TypeArgs(Strict):
    ref = fields.Integer(required=True, strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    text = fields.String(required=True, validate=validate.Length(max=100_000))
    clear = fields.Boolean(truthy={True}, falsy={False})
    submit = fields.Boolean(truthy={True}, falsy={False})
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))


COMMAND_STATUSES = ["accepted", "dispatched", "completed", "unknown_outcome", "cancelled", "expired"]


class CommandsArgs(Strict):
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=100))
    status = fields.List(fields.String(validate=validate.OneOf(COMMAND_STATUSES)), validate=validate.Length(max=6))


class AuditArgs(Strict):
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=1000))
    after = fields.String(validate=validate.Regexp(r"^(?:audit-)?[0-9]{1,12}$"))
    verify = fields.Boolean()


class CommandArgs(Strict):
    commandId = fields.String(required=True, validate=validate.Regexp(r"^cmd-[A-Za-z0-9]{8,64}$"))


class HoverArgs(Strict):
    ref = fields.Integer(required=True, strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))


class DragArgs(Strict):
    ref = fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    to = fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    toSelector = fields.String(validate=validate.Length(min=1, max=4096))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))

    @validates_schema
    def _one_each(self, data, **_):
        if ("ref" in data) == ("selector" in data):
            raise ValidationError("give exactly one of ref or selector", field_name="ref")
        if ("to" in data) == ("toSelector" in data):
            raise ValidationError("give exactly one of to or toSelector", field_name="to")


class KeyboardArgs(Strict):
    text = fields.String(required=True, validate=validate.Length(max=100_000))
    clear = fields.Boolean(truthy={True}, falsy={False})
    submit = fields.Boolean(truthy={True}, falsy={False})
    delay = fields.Integer(strict=True, validate=validate.Range(min=0, max=1000))
    click = fields.String(validate=validate.Length(min=1, max=1024))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))


def _key_combo(value: str) -> None:
    from bp import keys

    try:
        keys.parse(value)
    except keys.KeyError_ as exc:
        raise ValidationError(str(exc)) from None


class PressArgs(Strict):
    key = fields.String(required=True, validate=[validate.Length(min=1, max=64), _key_combo])
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))


class ScrollArgs(Strict):
    direction = fields.String(validate=validate.OneOf(["up", "down", "left", "right"]))
    amount = fields.Float(allow_nan=False, validate=validate.Range(min=0, max=1_000_000, min_inclusive=False))
    unit = fields.String(validate=validate.OneOf(["pixels", "viewport"]))
    ref = fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    to = fields.String(validate=validate.OneOf(["start", "end"]))
    toText = fields.String(validate=validate.Length(min=1, max=1000))
    exact = fields.Boolean(truthy={True}, falsy={False})
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))

    @validates_schema
    def _one_mode(self, data, **_):
        if sum(k in data for k in ("direction", "to", "toText")) > 1:
            raise ValidationError("give at most one of direction, to, toText", field_name="direction")
        if "ref" in data and "selector" in data:
            raise ValidationError("give at most one of ref or selector", field_name="ref")
        if ("amount" in data or "unit" in data) and ("to" in data or "toText" in data):
            raise ValidationError("amount and unit go with a direction only", field_name="amount")
        if "exact" in data and "toText" not in data:
            raise ValidationError("exact goes with toText only", field_name="exact")


class DropdownArgs(Strict):
    ref = fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    selector = fields.String(validate=validate.Length(min=1, max=4096))

    @validates_schema
    def _one_target(self, data, **_):
        if ("ref" in data) == ("selector" in data):
            raise ValidationError("give exactly one of ref or selector", field_name="ref")


class SelectArgs(DropdownArgs):
    option = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    by = fields.String(validate=validate.OneOf(["label", "value", "index"]))
    contains = fields.Boolean(truthy={True}, falsy={False})
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))


ATTRIBUTE_NAME_RE = r"^[A-Za-z_:][-A-Za-z0-9_:.]{0,127}$"


class ReadArgs(Strict):
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=1_000_000))
    anchor = fields.String(validate=validate.Length(min=1, max=1024))


class SearchArgs(Strict):
    query = fields.String(required=True, validate=validate.Length(min=1, max=1000))
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    caseSensitive = fields.Boolean(truthy={True}, falsy={False})
    wholeWord = fields.Boolean(truthy={True}, falsy={False})
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=200))


class FindArgs(Strict):
    selector = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=200))
    attributes = fields.List(fields.String(validate=validate.Regexp(ATTRIBUTE_NAME_RE)),
                             validate=validate.Length(max=20))
    noShadow = fields.Boolean(truthy={True}, falsy={False})


class LocateArgs(Strict):
    selector = fields.String(required=True, validate=validate.Length(min=1, max=4096))


class FrameArgs(Strict):
    index = fields.Integer(strict=True, validate=validate.Range(min=0, max=10_000))


class EvalArgs(Strict):
    expression = fields.String(required=True, validate=validate.Length(min=1, max=100_000))


class WaitArgs(Strict):
    url = fields.String(validate=validate.Length(min=1, max=8192))
    text = fields.String(validate=validate.Length(min=1, max=1000))
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    dialog = fields.Boolean(truthy={True}, falsy={False})
    download = fields.Boolean(truthy={True}, falsy={False})
    popup = fields.Boolean(truthy={True}, falsy={False})
    idle = fields.Boolean(truthy={True}, falsy={False})  # our addition (issue 25): network idle + DOM quiet
    interval = fields.Integer(strict=True, validate=validate.Range(min=100, max=5000))
    hidden = fields.Boolean(truthy={True}, falsy={False})  # --text/--selector: invisible matches count too

    @validates_schema
    def _one_condition(self, data, **_):
        given = [k for k in ("url", "text", "selector", "dialog", "download", "popup", "idle")
                 if data.get(k) not in (None, False)]
        if len(given) != 1:
            raise ValidationError("give exactly one of url, text, selector, dialog, download, popup, idle",
                                  field_name="condition")
        for flag in ("dialog", "download", "popup", "idle"):
            if data.get(flag) is False:
                raise ValidationError("a condition flag is true or absent", field_name=flag)


class DialogArgs(Strict):
    dialogId = fields.String(required=True, validate=validate.Length(min=1, max=128))
    action = fields.String(required=True, validate=validate.OneOf(["accept", "dismiss"]))
    promptText = fields.String(validate=validate.Length(max=100_000))

    @validates_schema
    def _prompt_with_accept(self, data, **_):
        if "promptText" in data and data.get("action") != "accept":
            raise ValidationError("promptText goes with accept only", field_name="promptText")


class OutputFields(Strict):
    """Where an exported file goes (bp/outputs.py): resolved by the CLI, written by the broker."""

    outputDir = fields.String(required=True, validate=[validate.Length(min=1, max=4096),
                                                       validate.Regexp(r"^/", error="must be an absolute path")])
    createOutputDir = fields.Boolean(truthy={True}, falsy={False})
    file = fields.String(validate=validate.Length(min=1, max=4096))
    overwrite = fields.Boolean(truthy={True}, falsy={False})  # replace an existing file (bp/outputs.py)


REF_LIST_MAX = 200


class ScreenshotArgs(OutputFields):
    full = fields.Boolean(truthy={True}, falsy={False})
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    annotate = fields.List(fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF)),
                           allow_none=True, validate=validate.Length(min=1, max=REF_LIST_MAX))

    @validates_schema
    def _one_mode(self, data, **_):
        given = [k for k in ("full", "selector", "annotate") if k in data and data[k] is not False]
        if len(given) > 1:
            raise ValidationError("full, selector and annotate cannot be combined", field_name=given[1])


class PdfArgs(OutputFields):
    landscape = fields.Boolean(truthy={True}, falsy={False})


MAX_DOWNLOAD_INDEX = 2**31 - 1  # indexes keep counting up per key (broker/files/downloads.py)


class DownloadArgs(OutputFields):
    selector = fields.Raw(required=True)

    @validates_schema
    def _selector(self, data, **_):
        value = data.get("selector")
        if isinstance(value, bool) or not (
                (isinstance(value, int) and 1 <= value <= MAX_DOWNLOAD_INDEX)
                or (isinstance(value, str) and len(value) <= 64 and value.startswith("download-"))):
            raise ValidationError("a 1-based index or a download id", field_name="selector")


class UploadArgs(Strict):
    path = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    ref = fields.Integer(strict=True, validate=validate.Range(min=1, max=protocol.MAX_REF))
    nth = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))

    @validates_schema
    def _ref_or_nth(self, data, **_):
        if "ref" in data and "nth" in data:
            raise ValidationError("give at most one of ref and nth", field_name="nth")


class InstallationSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    version = fields.String(required=True, validate=validate.Length(max=64))
    path = fields.String(required=True, validate=validate.Length(max=4096))
    identity = fields.String(required=True, validate=validate.Length(max=128))


class RemediationSchema(Schema):
    code = fields.String(required=True)
    message = fields.String(required=True)
    actionRequired = fields.Boolean(required=True)


class ReplySchema(Schema):
    """Every reply: a success with any fields, or a failure envelope with a known code."""

    class Meta:
        unknown = EXCLUDE  # success results carry command-specific fields

    ok = fields.Boolean(required=True, truthy={True}, falsy={False})
    code = fields.String(validate=validate.OneOf(ERROR_CODES))
    error = fields.Raw()  # a failure's message; `bp command` of a failed command: its recorded error object
    retryable = fields.Boolean(truthy={True}, falsy={False})
    hint = fields.String()
    context = fields.Dict(keys=fields.String())
    remediation = fields.Nested(RemediationSchema)

    @validates_schema
    def _failure_has_envelope(self, data, **_):
        if data.get("ok") is False:
            missing = [name for name in ("code", "error", "retryable") if name not in data]
            if missing:
                raise ValidationError(f"failure envelope lacks {missing}")
            if not isinstance(data["error"], str):
                raise ValidationError("a failure's error is its message", field_name="error")


class NetArgs(Strict):
    limit = fields.Integer(strict=True, validate=validate.Range(1, 500))
    url = fields.String(validate=validate.Length(min=1, max=16384))
    method = fields.String(validate=validate.Regexp(r"^[A-Za-z]{1,32}$"))
    status = fields.String(validate=validate.Regexp(r"^(?:[1-5][xX][xX]|[1-5][0-9][0-9])$"))
    type = fields.String(validate=validate.Length(min=1, max=256))
    after = fields.String(validate=validate.Regexp(r"^(?:req-)?[0-9]{1,12}$"))


class NetShowArgs(Strict):
    id = fields.String(required=True, validate=validate.Regexp(r"^(?:req-)?[0-9]{1,12}$"))
    reveal = fields.Boolean(truthy={True}, falsy={False})
    save = fields.Boolean(truthy={True}, falsy={False})
    outputDir = fields.String(validate=validate.Length(min=1, max=4096))
    createOutputDir = fields.Boolean(truthy={True}, falsy={False})
    file = fields.String(validate=validate.Length(min=1, max=4096))
    overwrite = fields.Boolean(truthy={True}, falsy={False})  # replace an existing file (bp/outputs.py)


class NetExportArgs(Strict):
    url = fields.String(validate=validate.Length(min=1, max=16384))
    after = fields.String(validate=validate.Regexp(r"^(?:req-)?[0-9]{1,12}$"))
    reveal = fields.Boolean(truthy={True}, falsy={False})
    bodies = fields.Boolean(truthy={True}, falsy={False})
    outputDir = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    createOutputDir = fields.Boolean(truthy={True}, falsy={False})
    file = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    overwrite = fields.Boolean(truthy={True}, falsy={False})


class HeaderSchema(Strict):
    name = fields.String(required=True, validate=validate.Regexp(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$"))
    value = fields.String(required=True, validate=validate.Length(max=8192))


class NetRuleArgs(Strict):
    type = fields.String(required=True, validate=validate.OneOf(("block", "mock", "headers")))
    pattern = fields.String(required=True, validate=validate.Length(min=1, max=16384))
    status = fields.Integer(strict=True, validate=validate.Range(100, 599))
    body = fields.String(validate=validate.Length(max=1024 * 1024))
    bodyBase64 = fields.String(validate=validate.Length(max=(1024 * 1024 * 4) // 3 + 8))
    contentType = fields.String(validate=validate.Length(min=1, max=256))
    headers = fields.List(fields.Nested(HeaderSchema), validate=validate.Length(min=1, max=64))

    @validates_schema
    def _by_type(self, data, **_):
        if data["type"] == "headers" and not data.get("headers"):
            raise ValidationError("a headers rule needs at least one header", "headers")
        if data["type"] == "mock" and "body" not in data and "bodyBase64" not in data:
            raise ValidationError("a mock rule needs --body or --file", "body")


class NetRemoveArgs(Strict):
    ruleId = fields.String(validate=validate.Length(min=1, max=128))
    all = fields.Boolean(truthy={True}, falsy={False})


class CookiesArgs(Strict):
    domain = fields.String(validate=validate.Regexp(r"^\.?[A-Za-z0-9._-]{1,253}$"))
    url = fields.String(validate=validate.Length(min=1, max=8192))
    values = fields.Boolean(truthy={True}, falsy={False})


class CookieScope(Strict):
    """Which cookies: those sent to a URL, or of a domain and path."""

    url = fields.String(validate=validate.Length(min=1, max=8192))
    domain = fields.String(validate=validate.Length(min=1, max=253))
    path = fields.String(validate=validate.Length(min=1, max=1024))


class CookieSetArgs(CookieScope):
    name = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    value = fields.String(required=True, validate=validate.Length(max=4096))
    secure = fields.Boolean(truthy={True}, falsy={False})
    httpOnly = fields.Boolean(truthy={True}, falsy={False})
    sameSite = fields.String(validate=validate.OneOf(("Strict", "Lax", "None")))
    expires = fields.Integer(strict=True, validate=validate.Range(min=0))


class CookieDeleteArgs(CookieScope):
    name = fields.String(validate=validate.Length(min=1, max=4096))
    all = fields.Boolean(truthy={True}, falsy={False})


class AuthArgs(Strict):
    username = fields.String(required=True, validate=validate.Length(min=1, max=1024))
    password = fields.String(required=True, validate=validate.Length(max=4096))
    origin = fields.String(validate=validate.Length(min=1, max=2048))


class ConsoleArgs(Strict):
    limit = fields.Integer(strict=True, validate=validate.Range(1, 500))
    level = fields.String(validate=validate.OneOf(("debug", "info", "warning", "error")))


MAX_BATCH_STEPS = 50
# What a batch step may be: a command that acts on (or reads) the selected tab. Not `open --new`
# or `--profile` (they pick another tab), nor cookies (the profile's, not the tab's).
BATCH_OPS = frozenset(name for name, op in ops.OPS.items()
                      if op.runs == ops.TAB and not name.startswith("cookies.") and name != ops.OP_EMULATE) \
    | {ops.OP_WAIT}


class BatchStepSchema(Strict):
    cmd = fields.String(required=True, validate=validate.Length(min=1, max=64))  # the CLI's word, echoed
    op = fields.String(required=True, validate=validate.OneOf(sorted(BATCH_OPS)))
    args = fields.Dict(keys=fields.String(), required=True)
    timeoutMs = fields.Integer(strict=True, validate=validate.Range(protocol.TIMEOUT_MIN_MS, protocol.TIMEOUT_MAX_MS))


class BatchArgs(Strict):
    steps = fields.List(fields.Nested(BatchStepSchema), required=True,
                        validate=validate.Length(min=1, max=MAX_BATCH_STEPS))
    limit = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))

    @validates_schema
    def _steps_are_whole_requests(self, data, **_):
        """Every step's arguments pass its own op's schema before the first step runs."""
        for index, step in enumerate(data.get("steps") or ()):
            if step["op"] == ops.OP_OPEN and ("new" in step["args"] or "profile" in step["args"]):
                raise ValidationError("open --new/--profile picks another tab: not in a batch",
                                      field_name=f"steps.{index}.args.new")
            errors = ARGS_SCHEMAS[step["op"]].validate(step["args"])
            if errors:
                field, message = first_error(errors)
                raise ValidationError(message, field_name=f"steps.{index}.args.{field}")


class EmulateArgs(Strict):
    width = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))
    height = fields.Integer(strict=True, validate=validate.Range(min=1, max=10_000))
    device = fields.String(validate=validate.Length(min=1, max=64))
    scale = fields.Float(allow_nan=False, validate=validate.Range(min=0.1, max=10))
    mobile = fields.Boolean(truthy={True}, falsy={False})
    userAgent = fields.String(validate=validate.Length(min=1, max=1024))
    latitude = fields.Float(allow_nan=False, validate=validate.Range(min=-90, max=90))
    longitude = fields.Float(allow_nan=False, validate=validate.Range(min=-180, max=180))
    timezone = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_+\-]{1,64}(?:/[A-Za-z0-9_+\-]{1,64}){0,2}$"))
    locale = fields.String(validate=validate.Regexp(r"^[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8}){0,4}$"))
    colorScheme = fields.String(validate=validate.OneOf(("light", "dark")))
    offline = fields.Boolean(truthy={True}, falsy={False})
    reset = fields.Boolean(truthy={True}, falsy={False})

    @validates_schema
    def _coherent(self, data, **_):
        if ("width" in data) != ("height" in data):
            raise ValidationError("give both width and height", field_name="viewport")
        if ("latitude" in data) != ("longitude" in data):
            raise ValidationError("give both latitude and longitude", field_name="geolocation")
        if data.get("reset") and len(data) > 1:
            raise ValidationError("--reset takes no other option", field_name="reset")
        if not data:
            raise ValidationError("give at least one setting, or --reset", field_name="emulate")


class TraceStartArgs(Strict):
    screenshots = fields.Boolean(truthy={True}, falsy={False})


class TraceExportArgs(OutputFields):
    file = fields.String(required=True, validate=validate.Length(min=1, max=4096))
    overwrite = fields.Boolean(truthy={True}, falsy={False})


def _args_schemas() -> dict[str, Schema]:
    """Operation name -> its argument schema, by the name bp/ops.py declares. A declared name
    with no schema class fails here, at broker start, not on the first request."""
    instances: dict[str, Schema] = {}
    table: dict[str, Schema] = {}
    for name, op in ops.OPS.items():
        cls = globals().get(op.args)
        if not (isinstance(cls, type) and issubclass(cls, Schema)):
            raise RuntimeError(f"operation {name!r} names the args schema {op.args!r}, which bp.schemas lacks")
        table[name] = instances.setdefault(op.args, cls())
    return table


ARGS_SCHEMAS = _args_schemas()
REQUEST = RequestSchema()
REPLY = ReplySchema()
INSTALLATION = InstallationSchema()


def first_error(messages: object, prefix: str = "") -> tuple[str, str]:
    """(field, message) of the first marshmallow error, for a stable `context.field`."""
    if isinstance(messages, dict):
        for key, value in messages.items():
            field, text = first_error(value, f"{prefix}{key}." if not isinstance(key, int) else prefix)
            return field, text
    if isinstance(messages, list) and messages:
        if isinstance(messages[0], str):
            return prefix.rstrip(".") or "request", messages[0]
        return first_error(messages[0], prefix)
    return prefix.rstrip(".") or "request", str(messages)
