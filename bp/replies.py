"""Schemas of the hot commands' replies (issue 28 item 3): what an Agent reads after every step.

Named by bp/ops.py (`Op.reply`) and checked against real answers by tests/e2e/test_replies.py,
so a field that appears, changes type or goes away in a reply fails a test before it reaches an
Agent. The observation's own parts (an element, the page's geometry, what was left out) are
strict: an unknown field there fails. Evidence is checked for the fields every action's
evidence has; the rest is per action (docs/commands.md).

Marshmallow, like bp/schemas.py: the broker and the tests import this, never the CLI.
"""

from marshmallow import INCLUDE, RAISE, Schema, ValidationError, fields, validate, validates_schema

from bp import ops, protocol

TRUNCATION_REASONS = ("element_limit", "text_limit", "depth_limit", "byte_limit", "work_limit")
LEFT_OUT_REASONS = ("covered", "out_of_view", "transparent", "zero_size", "no_pointer_events")
STATUSES = ("verified", "mismatch", "unavailable", "unknown_outcome")


class Strict(Schema):
    class Meta:
        unknown = RAISE


def _true_or_mixed(value):
    if value is not True and value != "mixed":
        raise ValidationError("must be true or \"mixed\"")


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError("must be a number")


class Page(Strict):
    viewportWidth = fields.Integer(required=True, strict=True)
    viewportHeight = fields.Integer(required=True, strict=True)
    documentWidth = fields.Integer(required=True, strict=True)
    documentHeight = fields.Integer(required=True, strict=True)
    scrollX = fields.Integer(required=True, strict=True)
    scrollY = fields.Integer(required=True, strict=True)
    pixelsAbove = fields.Integer(required=True, strict=True)
    pixelsBelow = fields.Integer(required=True, strict=True)
    pixelsLeft = fields.Integer(required=True, strict=True)
    pixelsRight = fields.Integer(required=True, strict=True)
    scrollPercentX = fields.Integer(required=True, strict=True, validate=validate.Range(0, 100))
    scrollPercentY = fields.Integer(required=True, strict=True, validate=validate.Range(0, 100))


class Element(Strict):
    """One offered control: a ref and what Chromium's accessibility engine says it is."""

    ref = fields.Integer(required=True, strict=True, validate=validate.Range(1, protocol.MAX_REF))
    role = fields.String(required=True, validate=validate.OneOf(protocol.ELEMENT_ROLES))
    name = fields.String(required=True)
    context = fields.String(validate=validate.Length(max=80))
    description = fields.String()
    value = fields.String()
    checked = fields.Raw(validate=_true_or_mixed)
    pressed = fields.Raw(validate=_true_or_mixed)
    expanded = fields.Boolean(truthy={True}, falsy={False})
    haspopup = fields.String(validate=validate.OneOf(protocol.HASPOPUP))
    selected = fields.Boolean(truthy={True}, falsy={False})
    required = fields.Boolean(truthy={True}, falsy={False})
    readonly = fields.Boolean(truthy={True}, falsy={False})
    invalid = fields.Boolean(truthy={True}, falsy={False})
    multiple = fields.Boolean(truthy={True}, falsy={False})
    level = fields.Integer(strict=True)
    min = fields.Raw(validate=_number)
    max = fields.Raw(validate=_number)


class LeftOut(Strict):
    role = fields.String(required=True, validate=validate.OneOf(protocol.ELEMENT_ROLES))
    name = fields.String(required=True)
    reason = fields.String(required=True, validate=validate.OneOf(LEFT_OUT_REASONS))


class DisabledElement(Strict):
    role = fields.String(required=True, validate=validate.OneOf(protocol.ELEMENT_ROLES))
    name = fields.String(required=True)
    value = fields.String()
    disabled = fields.Boolean(required=True, truthy={True}, falsy=set())


class Hint(Schema):
    class Meta:
        unknown = INCLUDE  # each hint code has its own fields (docs/commands.md)

    code = fields.String(required=True)
    source = fields.String(required=True)
    confidence = fields.String(required=True)
    recommendedAction = fields.String(required=True)


class Evidence(Schema):
    """What every action's evidence says; the rest is the action's own."""

    class Meta:
        unknown = INCLUDE

    action = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    effects = fields.List(fields.String())
    settle = fields.Dict(keys=fields.String())


class Dialog(Schema):
    class Meta:
        unknown = INCLUDE

    type = fields.String(required=True)
    dialogId = fields.String(required=True)


class Reply(Schema):
    ok = fields.Boolean(required=True, truthy={True}, falsy=set())


class Observation(Reply, Strict):
    """`bp snapshot`, and what every acting command answers with (its evidence beside)."""

    title = fields.String(required=True)
    url = fields.String(required=True)
    page = fields.Nested(Page, required=True)
    elements = fields.List(fields.Nested(Element))  # all but --diff
    truncated = fields.Boolean(required=True, truthy={True}, falsy={False})
    truncationReasons = fields.List(fields.String(validate=validate.OneOf(TRUNCATION_REASONS)), required=True)
    hints = fields.List(fields.Nested(Hint), required=True)
    profileContextId = fields.String()
    disabledCount = fields.Integer(strict=True, validate=validate.Range(1))
    disabledElements = fields.List(fields.Nested(DisabledElement))
    leftOut = fields.List(fields.Nested(LeftOut))
    leftOutCount = fields.Integer(strict=True, validate=validate.Range(1))
    matches = fields.Integer(strict=True)  # --grep / --role
    diff = fields.Dict(keys=fields.String())  # --diff
    evidence = fields.Nested(Evidence)

    @validates_schema
    def _elements_or_diff(self, data, **_):
        if ("elements" in data) == ("diff" in data):
            raise ValidationError("an observation has its elements or, with --diff, its diff", field_name="elements")
        if "leftOut" in data and data.get("leftOutCount", 0) < len(data["leftOut"]):
            raise ValidationError("leftOutCount counts every entry of leftOut", field_name="leftOutCount")


class Acted(Reply, Strict):
    """An acting command whose evidence came without a fresh observation: a JavaScript dialog
    the action opened blocks the page."""

    evidence = fields.Nested(Evidence, required=True)
    dialog = fields.Nested(Dialog, required=True)


class Status(Reply, Strict):
    browser = fields.Dict(required=True)
    service = fields.Dict(required=True)
    session = fields.Dict(required=True)
    commands = fields.Dict(required=True)
    processes = fields.List(fields.Dict(), required=True)
    recovery = fields.Dict(required=True)
    policy = fields.Dict(required=True)
    crashedTabs = fields.Dict()


class TabRow(Strict):
    index = fields.Integer(required=True, strict=True)
    targetId = fields.String(required=True, validate=validate.Regexp(r"^tab-[0-9a-f]{12}$"))
    title = fields.String(required=True)
    url = fields.String(required=True)
    origin = fields.String(required=True, validate=validate.OneOf(("managed", "managed_popup", "user_tab")))
    controlState = fields.String(required=True)
    selected = fields.Boolean(required=True, truthy={True}, falsy={False})
    profileContextId = fields.String()
    crashed = fields.Dict()
    emulation = fields.Dict()


class Tabs(Reply, Strict):
    tabs = fields.List(fields.Nested(TabRow), required=True)
    truncated = fields.Boolean(required=True, truthy={True}, falsy={False})


class Read(Reply, Strict):
    title = fields.String(required=True)
    url = fields.String(required=True)
    text = fields.String(required=True)
    length = fields.Integer(required=True, strict=True)
    truncated = fields.Boolean(required=True, truthy={True}, falsy={False})


class SearchMatch(Strict):
    index = fields.Integer(required=True, strict=True)
    text = fields.String(required=True)
    context = fields.String()  # or, when an earlier match shares it, sameContextAs
    tagName = fields.String(required=True)
    visible = fields.Boolean(required=True, truthy={True}, falsy={False})
    x = fields.Raw(required=True, validate=_number)
    y = fields.Raw(required=True, validate=_number)
    width = fields.Raw(required=True, validate=_number)
    height = fields.Raw(required=True, validate=_number)
    sameContextAs = fields.Integer(strict=True)

    @validates_schema
    def _context_once(self, data, **_):
        if ("context" in data) == ("sameContextAs" in data):
            raise ValidationError("a match has its context or the index of the match that shares it",
                                  field_name="context")


class Matched(Reply, Strict):
    """What a search of the page answers besides its matches."""

    title = fields.String(required=True)
    url = fields.String(required=True)
    totalMatches = fields.Integer(required=True, strict=True)
    truncated = fields.Boolean(required=True, truthy={True}, falsy={False})


class Search(Matched):
    matches = fields.List(fields.Nested(SearchMatch), required=True)


class Attribute(Strict):
    name = fields.String(required=True)
    value = fields.String(required=True)


class Found(Strict):
    index = fields.Integer(required=True, strict=True)
    tagName = fields.String(required=True)
    role = fields.String(allow_none=True)
    name = fields.String(required=True)
    text = fields.String(required=True)
    visible = fields.Boolean(required=True, truthy={True}, falsy={False})
    enabled = fields.Boolean(required=True, truthy={True}, falsy={False})
    x = fields.Raw(required=True, validate=_number)
    y = fields.Raw(required=True, validate=_number)
    width = fields.Raw(required=True, validate=_number)
    height = fields.Raw(required=True, validate=_number)
    attributes = fields.List(fields.Nested(Attribute), required=True)
    ref = fields.Integer(strict=True, validate=validate.Range(1, protocol.MAX_REF))


class Find(Matched):
    elements = fields.List(fields.Nested(Found), required=True)


class Wait(Reply, Strict):
    condition = fields.String(required=True)
    elapsedMs = fields.Integer(required=True, strict=True)
    timeoutMs = fields.Integer(required=True, strict=True)
    matched = fields.Dict(required=True)


def reply_schema(op):
    """The reply schema an operation names (bp/ops.py Op.reply), or None."""
    name = ops.OPS[op].reply
    return _INSTANCES.setdefault(name, globals()[name]()) if name else None


def check(op, reply):
    """The validation errors of one successful reply of `op` ({} when it conforms). An acting
    command's reply is an observation, or its evidence and the dialog that blocks the page."""
    schema = reply_schema(op)
    if schema is None:
        raise KeyError(f"operation {op!r} declares no reply schema")
    if isinstance(schema, Observation) and "dialog" in reply and "elements" not in reply:
        schema = _INSTANCES.setdefault("Acted", Acted())
    return schema.validate(reply)


_INSTANCES = {}
