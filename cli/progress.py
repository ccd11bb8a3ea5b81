"""A progress line on stderr while a long command waits for its one reply.

For a person at a terminal only: `bp wait`, `bp connect` (Chrome's Allow dialog), `bp pdf`,
`bp screenshot` and `bp download` say what they wait for and for how long, once the wait has
lasted a second. When stderr is not a terminal (an Agent's pipes) nothing is written, so
nothing an Agent reads changes. The line is redrawn in place with `\\r` from the CLI's wait
loop (cli/zmtp.py calls its tick every slice) and erased before the answer is printed.
"""

import os
import sys
import time

DELAY_S = 1.0  # quick answers print nothing
MAX_AWAITED_CHARS = 100

_expected = None


def expect(awaited, timeout_ms=None):
    """What the current command's broker call waits for, in a few words (`the PDF`)."""
    global _expected
    _expected = (awaited, timeout_ms)


def forget():
    """Nothing expected any more (a batch's step said what it waits for; the batch does not)."""
    global _expected
    _expected = None


def ticker():
    """A Ticker for this command's call, or None (nothing expected, or stderr is no terminal)."""
    if _expected is None:
        return None
    try:
        if not os.isatty(sys.stderr.fileno()):
            return None
    except (AttributeError, ValueError, OSError):
        return None
    return Ticker(*_expected)


def _printable(text):
    """The awaited text may come from the command line: no control characters reach the terminal."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(text))
    return text if len(text) <= MAX_AWAITED_CHARS else text[:MAX_AWAITED_CHARS - 1] + "…"


class Ticker:
    def __init__(self, awaited, timeout_ms=None, clock=time.monotonic):
        self.awaited = _printable(awaited)
        self.timeout_ms = timeout_ms
        self.clock = clock
        self.started = clock()
        self.shown = None

    def line(self, elapsed_s, width=0):
        """The line; on a terminal `width` columns wide the awaited words are cut, never the time
        (a wrapped line could not be redrawn in place)."""
        of = f" of {self.timeout_ms / 1000:g} s" if self.timeout_ms else ""
        head, tail, awaited = "… waiting for ", f" ({elapsed_s:.1f} s{of})", self.awaited
        room = width - 1 - len(head) - len(tail)
        if width and len(awaited) > room:
            awaited = awaited[:max(0, room - 1)] + "…"
        return head + awaited + tail

    def __call__(self):
        elapsed = self.clock() - self.started
        if elapsed < DELAY_S:
            return
        try:
            width = os.get_terminal_size(sys.stderr.fileno()).columns
        except (AttributeError, ValueError, OSError):
            width = 0
        text = self.line(elapsed, width if width > 30 else 0)
        if text != self.shown:
            self._write("\r" + text + "\x1b[K")
            self.shown = text

    def clear(self):
        if self.shown is not None:
            self._write("\r\x1b[K")
            self.shown = None

    @staticmethod
    def _write(text):
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not fail the command
