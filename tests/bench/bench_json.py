"""Benchmark: `json` against orjson, on the CLI side (the import, paid by every command) and on
the broker side (encoding and decoding a 10,000-element observation, paid per snapshot).

Prints medians of interleaved runs and whether the bytes are identical. Not a test:

    .venv/bin/python -m tests.bench.bench_json [--runs 30]
"""

import json
import sys
import time

from bp import fastjson
from tests.bench.bench_startup import median_table, timed
from tests.bench.rig import arguments
from tests.unit.test_fastjson import observation

PY = sys.executable


def imports(runs):
    cases = {"python -I -c pass": [PY, "-I", "-c", "pass"],
             "python -I -c 'import json'": [PY, "-I", "-c", "import json"],
             "python -I -c 'import orjson'": [PY, "-I", "-c", "import orjson"]}
    samples = {name: [] for name in cases}
    for _ in range(runs):
        for name, args in cases.items():
            samples[name].append(timed(args))
    print("CLI side, the import (interleaved process runs):")
    median_table(samples)


def _ms(fn, runs):
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def codecs(runs):
    value = observation(10_000, tricky=False)
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    orjson = fastjson.orjson
    cases = {
        "json.dumps(compact, ensure_ascii=False).encode()": lambda: json.dumps(
            value, ensure_ascii=False, separators=(",", ":")).encode(),
        "json.dumps(ensure_ascii=False) (default separators)": lambda: json.dumps(value, ensure_ascii=False),
        "orjson.dumps": lambda: orjson.dumps(value),
        "fastjson.compact (orjson + the exactness check)": lambda: fastjson.compact(value),
        "json.loads": lambda: json.loads(raw),
        "orjson.loads": lambda: orjson.loads(raw),
        "fastjson.loads": lambda: fastjson.loads(raw),
    }
    samples = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            samples[name] += _ms(fn, 1)
    print(f"Broker side, a 10,000-element observation ({len(raw):,} bytes), in process:")
    median_table(samples)
    print(f"  identical bytes (fastjson.compact vs json.dumps): {fastjson.compact(value) == raw}")


def main():
    args = arguments(30)
    imports(args.runs)
    codecs(args.runs)


if __name__ == "__main__":
    main()
