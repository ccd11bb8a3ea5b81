"""Agreement of the observation with Chromium's accessibility tree (issue 26 item 7), per page:
the observation corpus (tests/corpus.py) and, when scripts/ensure-realapps.sh installed them,
the real-app screens (tests/realapps/screens.py). Prints the table; asserts nothing (the goals
are asserted by tests/agreement/ and tests/realapps/test_agreement.py).

    .venv/bin/python -m tests.bench.bench_agreement [--bp OTHER_TREE/.venv/bin/bp] [--detail]
        [--only corpus|realapps]
"""

import time

from tests.agreement.measure import BP_LIMIT, bp_json, measure, table
from tests.bench.rig import Rig, arguments
from tests.corpus import CASES


def main():
    args = arguments(runs=1, bp={"default": None}, detail={"action": "store_true"},
                     only={"default": None, "choices": ["corpus", "realapps"]})
    bp = args.bp or None
    with Rig("agree") as rig:
        home, env = rig.home(bp=bp)
        bp = bp or __import__("tests.helpers", fromlist=["BP"]).BP
        pages = []
        started = time.monotonic()
        if args.only in (None, "corpus"):
            for case in sorted(CASES):
                observation = bp_json(bp, env, "open", rig.pages.url(f"/corpus/{case}"), "--limit", BP_LIMIT)
                pages.append(measure(rig.chromium, env, observation["url"], case, bp=bp, observation=observation))
        if args.only in (None, "realapps"):
            from tests.realapps import screens

            if screens.installed():
                with screens.Servers() as servers:
                    for label, url, ready in servers.screens():
                        observation = screens.open_screen(bp, env, url, ready)
                        pages.append(measure(rig.chromium, env, observation["url"], label, bp=bp,
                                             observation=observation))
            else:
                print("real apps not installed (scripts/ensure-realapps.sh): corpus only")
        print(table(pages, detail=args.detail))
        print(f"measured {len(pages)} pages in {time.monotonic() - started:.1f} s (bp {bp})")


if __name__ == "__main__":
    main()
