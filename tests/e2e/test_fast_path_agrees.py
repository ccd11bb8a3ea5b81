"""The `bp` entry point (cli/fast.py) and the click application print the same JSON and exit
with the same code for the hot commands, against a real broker and Chromium and with none."""

import re
import subprocess
import sys

from tests.helpers import BP, bp, bp_env

CLICK_PATH = [sys.executable, "-c", "from cli.main import main; main()"]
PAGE = """<main><h1>Results</h1><p id=a class=hit title=first>free shipping on orders</p>
<p class=hit>Free Shipping again</p><a href="/next" title=next>next page</a>
<select id=size><option>s</option><option value=m>medium</option></select></main>"""


def both(env, *argv):
    """(rc, stdout) of the fast entry point and of the click application for one argv."""
    runs = [subprocess.run(prefix + list(argv), env=env, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL) for prefix in ([BP], CLICK_PATH)]
    return [(run.returncode, run.stdout) for run in runs]


def test_without_a_broker_both_paths_answer_alike(home):
    env = bp_env(home)
    for argv in (["scroll"], ["select", "4", "Canada"], ["open", "example.com"], ["wait", "--dialog"], ["read"],
                 ["find", "a"], ["search", "x"], ["keyboard", "hi"], ["snapshot"], ["click", "3"]):
        fast, slow = both(env, *argv)
        assert fast == slow and fast[0] == 1 and '"reason":"not_running"' in fast[1], (argv, fast)


def test_against_a_real_page_both_paths_answer_alike(home, connected, pages):
    assert bp(home, "open", pages.page(PAGE), env=connected).rc == 0
    for argv in (["read"], ["read", "--limit", "12"], ["read", "#a"], ["find", "p.hit", "--attributes", "title,id"],
                 ["find", "a", "--no-shadow", "-l", "1"], ["search", "free shipping"],
                 ["search", "Free", "--case-sensitive", "--whole-word"], ["find", "#nothing"],
                 ["read", "#nothing"], ["scroll", "--to", "start", "--selector", "#nothing"],
                 ["select", "#size", "zz"], ["wait", "--url", "*nowhere*"], ["open", "javascript:alert(1)"],
                 ["scroll", "sideways"], ["search", "x", "--limit", "0"]):
        timeout = ["--timeout", "300"] if argv[0] == "wait" else []
        fast, slow = both(connected, *timeout, *argv)
        if argv[0] == "wait":  # the elapsed time is the only difference a timeout may show
            fast, slow = [(rc, out.split('"elapsedMs"')[0]) for rc, out in (fast, slow)]
        # How long an action's settle waited is measured, not computed: the one field that may differ.
        fast, slow = [(rc, re.sub(r'"waitedMs":\d+', '"waitedMs":N', out)) for rc, out in (fast, slow)]
        assert fast == slow, argv
