"""SIGINT/SIGTERM while waiting on the broker: noticed between poll slices, never mid-print."""

import _signal as signal  # pyright: ignore[reportMissingImports]  (not `signal`: its enum costs a step's import)

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
_received = []


class Interrupted(Exception):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum
        self.exit_code = EXIT_CODES.get(signum, 130)


def _on_signal(signum, _frame):
    _received.append(signum)


def install():
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def check():
    if _received:
        raise Interrupted(_received[0])
