"""Glob matching cost (issue 14): microseconds per match of hostile patterns on a long URL.
Prints figures; asserts nothing. Run: .venv/bin/python -m tests.bench.bench_globs"""

import time

from bp.globs import Glob

URL = "http://example.com/" + "a" * 16000
PATTERNS = ["*" * 50 + "x", "*a" * 20 + "*b", "*" * 9 + "/api/*", "http://example.com/*", "*" * 16000]


def main():
    for pattern in PATTERNS:
        glob = Glob(pattern)
        rounds = 200
        start = time.perf_counter()
        for _ in range(rounds):
            glob(URL)
        per_match = (time.perf_counter() - start) / rounds * 1e6
        print(f"{pattern[:24]!r:28} ({len(pattern)} chars): {per_match:8.1f} us per match, 16 KB URL")


if __name__ == "__main__":
    main()
