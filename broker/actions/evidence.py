"""What an acting command says it did: one `Evidence` per action, its effects from one vocabulary.

Every acting command's evidence passes through `Evidence.of` in the action pipeline
(broker/actions/pipeline.py) on its way to the Agent, so an effect outside `Effect` is a bug
caught there, not a word the Agent meets. Actions built on `Evidence` (click, press, hover) set
their facts through it; the others still hand a dict, read the same way.
"""

import enum
from dataclasses import dataclass, field


class Effect(enum.StrEnum):
    """What an action was seen to change (the evidence's `effects`, as the skill lists them)."""

    NAVIGATION = "navigation"
    NAVIGATION_BLOCKED = "navigation_blocked"
    URL_CHANGED = "url_changed"
    DIALOG_OPENED = "dialog_opened"
    POPUP_OPENED = "popup_opened"
    DOWNLOAD_STARTED = "download_started"
    CONTENT_CHANGED = "content_changed"
    DOCUMENT_CHANGED = "document_changed"
    CHECKED_CHANGED = "checked_changed"
    SELECTED_CHANGED = "selected_changed"
    PRESSED_CHANGED = "pressed_changed"
    EXPANDED_CHANGED = "expanded_changed"
    FOCUS_CHANGED = "focus_changed"
    VALUE_CHANGED = "value_changed"
    VALUE_CLEARED = "value_cleared"
    INPUT_CLEARED_BY_PAGE = "input_cleared_by_page"


# A change of the element's own state -> its effect (click and hover compare before and after).
STATE_EFFECTS = (("checked", Effect.CHECKED_CHANGED), ("selected", Effect.SELECTED_CHANGED),
                 ("pressed", Effect.PRESSED_CHANGED), ("expanded", Effect.EXPANDED_CHANGED),
                 ("focused", Effect.FOCUS_CHANGED))
# Effects that already say the page changed: content_changed would add nothing.
PAGE_CHANGES = frozenset({Effect.CONTENT_CHANGED, Effect.DOCUMENT_CHANGED, Effect.NAVIGATION,
                          Effect.DOWNLOAD_STARTED})


@dataclass
class Evidence:
    action: str
    kind: str | None = None
    effects: list = field(default_factory=list)  # [Effect], in the order seen
    status: str | None = None  # verified | mismatch | unavailable
    reason: str | None = None
    facts: dict = field(default_factory=dict)  # the action's own fields (checked, download, under, ...)
    # False: effects are listed only when there are some (a verdict from a readback, not effects)
    listed: bool = field(default=True, repr=False)

    def add(self, effect):
        effect = Effect(effect)
        if effect not in self.effects:
            self.effects.append(effect)

    def has(self, *effects):
        return any(Effect(e) in self.effects for e in effects)

    def verified(self):
        self.status, self.reason = "verified", None
        return self

    def mismatch(self, reason):
        self.status, self.reason = "mismatch", reason
        return self

    def unavailable(self, reason):
        self.status, self.reason = "unavailable", reason
        return self

    def by_effects(self):
        """Verified by what it was seen to change, or unavailable when nothing changed that Browser
        Pilot can attribute (a menu shown by CSS :hover): the fresh observation shows what appeared."""
        return self.verified() if self.effects else self.unavailable("no_observable_effect")

    def to_json(self):
        out: dict = {"action": self.action}
        if self.kind is not None:
            out["kind"] = self.kind
        out.update(self.facts)
        if self.effects or self.listed:
            out["effects"] = [e.value for e in self.effects]
        if self.status is not None:
            out["status"] = self.status
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def of(cls, evidence):
        """An action's evidence as an Evidence (a dict from an action not built on it is read,
        its effects checked against the vocabulary: ValueError names one that is not)."""
        if isinstance(evidence, Evidence):
            return evidence
        facts = dict(evidence)
        effects = facts.pop("effects", None)
        found = cls(facts.pop("action", None), facts.pop("kind", None), status=facts.pop("status", None),
                    reason=facts.pop("reason", None), facts=facts, listed=effects is not None)
        for effect in effects or ():
            found.add(effect)
        return found


def reply_form(evidence):
    """The evidence as the reply carries it (a dict; an action with no effects list keeps none)."""
    if not isinstance(evidence, (dict, Evidence)):
        return evidence
    return Evidence.of(evidence).to_json()
