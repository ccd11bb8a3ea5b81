"""What every benchmark stands on: a private headless Chromium, a page server on 127.0.0.1 and
Browser Pilot homes, all cleaned up however the run ends.

    args = arguments(runs=20)          # --runs (and any option a benchmark adds)
    with Rig("bench") as rig:
        home, env = rig.home()          # a private BROWSER_PILOT_HOME, connected
        bp_json(env, "open", rig.pages.page("<p>hi</p>"))
"""

import argparse
import json
import os
import shutil
import subprocess

from tests import helpers
from tests.pages import PageServer


def arguments(runs, **options):
    """A benchmark's command line: `--runs` (how many interleaved runs, `runs` by default) and one
    option a keyword (agent_browser_version={"default": "x"} is --agent-browser-version)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=runs)
    for name, settings in options.items():
        parser.add_argument("--" + name.replace("_", "-"), **settings)
    return parser.parse_args()


def bp_json(env, *args):
    """One `bp` call's JSON reply (whatever its exit code)."""
    return json.loads(subprocess.run([helpers.BP, *args], env=env, capture_output=True, text=True).stdout)


class Rig:
    def __init__(self, name="bench", extra_args=()):
        self.name = name
        self.chromium = helpers.Chromium(helpers.short_tmpdir(f"bpc-{name}-"), extra_args=extra_args)
        self.pages = PageServer()
        self.homes = []

    def home(self, connect=True, policy=None, bp=None):
        """(home, env) of a new private home on this Chromium; `policy` is written as its
        policy.json before the broker starts; `bp` is another tree's executable to connect with."""
        home = helpers.short_tmpdir(f"bph-{self.name}-")
        os.chmod(home, 0o700)
        self.homes.append(home)
        if policy is not None:
            path = os.path.join(home, "policy.json")
            with open(path, "w") as fh:
                json.dump(policy, fh)
            os.chmod(path, 0o600)
        env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=self.chromium.root)
        if connect:
            subprocess.run([bp or helpers.BP, "connect"], env=env, stdout=subprocess.DEVNULL, check=True)
        return home, env

    def close(self):
        for home in self.homes:
            helpers.stop_brokers(home)
            shutil.rmtree(home, ignore_errors=True)
        self.pages.stop()
        self.chromium.stop()
        shutil.rmtree(self.chromium.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
