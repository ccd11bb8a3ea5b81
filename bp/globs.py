"""URL globs: a case-insensitive full match where only `*` is special (contract §1.3).

Matched without backtracking, so no pattern can hold the broker's CPU: a run of stars is one
star, the text before the first star must open the text and the text after the last must end
it, and each literal piece between stars is searched once, left to right, from where the last
one ended (the leftmost match is always a safe choice when only `*` is special). A match costs
one pass over the text, whatever the pattern.
"""

from bp.errors import invalid_argument

MAX_GLOB_CHARS = 16384


class Glob:
    __slots__ = ("pattern", "head", "middle", "tail", "starred")

    def __init__(self, pattern, field="url"):
        if not isinstance(pattern, str) or len(pattern) > MAX_GLOB_CHARS:
            raise invalid_argument(field, f"A URL pattern is a string of at most {MAX_GLOB_CHARS} characters.")
        self.pattern = pattern
        parts = pattern.lower().split("*")
        self.starred = len(parts) > 1
        self.head = parts[0]
        self.tail = parts[-1] if self.starred else ""
        self.middle = tuple(part for part in parts[1:-1] if part)  # empty pieces are star runs

    def __call__(self, text, trace=None):
        """Whether `text` matches. `trace`, a list, receives each (start, end) window searched:
        the windows never overlap and never go back, which is what bounds the work."""
        text = text.lower()
        if not self.starred:
            return text == self.head
        end = len(text) - len(self.tail)
        if end < len(self.head) or not text.startswith(self.head) or not text.endswith(self.tail):
            return False
        pos = len(self.head)
        for piece in self.middle:
            found = text.find(piece, pos, end)
            if trace is not None:
                trace.append((pos, found + len(piece) if found >= 0 else end))
            if found < 0:
                return False
            pos = found + len(piece)
        return True


def matcher(pattern, field="url"):
    return Glob(pattern, field)
