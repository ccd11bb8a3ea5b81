"""Key names and combos for `bp press`: parsed by the CLI (so a typo fails at once) and again by
the broker, which turns them into CDP key events. Stdlib only.

A combo is modifiers and one key joined by '+': `Enter`, `Shift+Tab`, `Control+a`, `Meta+c`.
Modifiers: Control (Ctrl), Shift, Alt (Option), Meta (Cmd, Command). Keys: the named keys below,
single printable ASCII characters, and F1-F12. Names are case-insensitive; a single letter keeps
its case only through Shift.
"""

# modifier name -> (CDP modifier bit, key, code, windowsVirtualKeyCode)
MODIFIERS = {
    "alt": (1, "Alt", "AltLeft", 18),
    "control": (2, "Control", "ControlLeft", 17),
    "meta": (4, "Meta", "MetaLeft", 91),
    "shift": (8, "Shift", "ShiftLeft", 16),
}
MODIFIER_ALIASES = {"ctrl": "control", "option": "alt", "cmd": "meta", "command": "meta", "super": "meta"}

# named key -> (key, code, windowsVirtualKeyCode, text or None)
NAMED = {
    "enter": ("Enter", "Enter", 13, "\r"),
    "tab": ("Tab", "Tab", 9, None),
    "escape": ("Escape", "Escape", 27, None),
    "backspace": ("Backspace", "Backspace", 8, None),
    "delete": ("Delete", "Delete", 46, None),
    "insert": ("Insert", "Insert", 45, None),
    "space": (" ", "Space", 32, " "),
    "arrowup": ("ArrowUp", "ArrowUp", 38, None),
    "arrowdown": ("ArrowDown", "ArrowDown", 40, None),
    "arrowleft": ("ArrowLeft", "ArrowLeft", 37, None),
    "arrowright": ("ArrowRight", "ArrowRight", 39, None),
    "home": ("Home", "Home", 36, None),
    "end": ("End", "End", 35, None),
    "pageup": ("PageUp", "PageUp", 33, None),
    "pagedown": ("PageDown", "PageDown", 34, None),
    "contextmenu": ("ContextMenu", "ContextMenu", 93, None),
}
NAMED_ALIASES = {"esc": "escape", "return": "enter", "del": "delete", "up": "arrowup", "down": "arrowdown",
                 "left": "arrowleft", "right": "arrowright", "spacebar": "space"}
for _n in range(1, 13):
    NAMED[f"f{_n}"] = (f"F{_n}", f"F{_n}", 111 + _n, None)

# US layout: punctuation -> (code, windowsVirtualKeyCode, shifted)
PUNCTUATION = {
    "-": ("Minus", 189, "_"), "=": ("Equal", 187, "+"), "[": ("BracketLeft", 219, "{"),
    "]": ("BracketRight", 221, "}"), "\\": ("Backslash", 220, "|"), ";": ("Semicolon", 186, ":"),
    "'": ("Quote", 222, '"'), ",": ("Comma", 188, "<"), ".": ("Period", 190, ">"), "/": ("Slash", 191, "?"),
    "`": ("Backquote", 192, "~"),
}
SHIFTED_DIGITS = ")!@#$%^&*("
MAX_COMBO = 64


class KeyError_(ValueError):
    """An unknown key or modifier (the message names it)."""


def _character(ch):
    """(key, code, vk, needs_shift) for one printable ASCII character."""
    if ch.isalpha() and ch.isascii():
        return ch, f"Key{ch.upper()}", ord(ch.upper()), ch.isupper()
    if ch.isdigit():
        return ch, f"Digit{ch}", ord(ch), False
    if ch in SHIFTED_DIGITS:
        digit = str(SHIFTED_DIGITS.index(ch))
        return ch, f"Digit{digit}", ord(digit), True
    for base, (code, vk, shifted) in PUNCTUATION.items():
        if ch == base:
            return ch, code, vk, False
        if ch == shifted:
            return ch, code, vk, True
    raise KeyError_(f"unknown key {ch!r}")


def parse(combo):
    """A validated combo: {"modifiers": [names], "key", "code", "vk", "text"?, "mask"}.
    Raises KeyError_ naming the unknown part."""
    if not isinstance(combo, str) or not combo or len(combo) > MAX_COMBO:
        raise KeyError_("give a key such as Enter, Tab, Escape, ArrowDown, a or Control+a")
    parts = combo.split("+")
    if combo.endswith("+"):  # "Control++" means Control and the '+' key
        parts = parts[:-2] + ["+"] if combo.endswith("++") else parts
    *mods, name = parts
    if not name:
        raise KeyError_(f"no key after the modifiers in {combo!r}")
    modifiers = []
    for mod in mods:
        canonical = MODIFIER_ALIASES.get(mod.strip().lower(), mod.strip().lower())
        if canonical not in MODIFIERS:
            raise KeyError_(f"unknown modifier {mod!r} (use Control, Shift, Alt or Meta)")
        if canonical not in modifiers:
            modifiers.append(canonical)
    lowered = name.lower()
    lowered = NAMED_ALIASES.get(lowered, lowered)
    if lowered in NAMED and len(name) > 1:
        key, code, vk, text = NAMED[lowered]
    elif len(name) == 1 and name.isascii() and name.isprintable() and name != " ":
        key, code, vk, shift = _character(name)
        if shift and "shift" not in modifiers:
            modifiers.append("shift")
        if name.isalpha() and "shift" in modifiers:
            key = name.upper()
        text = key
    else:
        raise KeyError_(f"unknown key {name!r} (named keys: Enter, Tab, Escape, Backspace, Delete, arrows, "
                        "Home, End, PageUp, PageDown, Space, F1-F12; or one character)")
    mask = 0
    for mod in modifiers:
        mask |= MODIFIERS[mod][0]
    if mask & (MODIFIERS["control"][0] | MODIFIERS["alt"][0] | MODIFIERS["meta"][0]):
        text = None  # a shortcut, not typing
    combo = {"modifiers": modifiers, "key": key, "code": code, "vk": vk, "mask": mask}
    if text:
        combo["text"] = text
    return combo
