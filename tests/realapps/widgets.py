"""What the component-library tasks share: the page's own state (judged, never bp's word), and the
Agent's moves an Agent makes the same way on every library."""

import os
import re

from tests.realapps.agent import local_storage

STATE_KEY = "state"


def app_state(agent, url_prefix):
    """The React pages' state: localStorage "state", written by the app on every change, read
    through the test's own DevTools connection."""
    return local_storage(agent.chromium, url_prefix, STATE_KEY) or {}


def set_slider(agent, ref, value):
    """Set a slider to a value in one command (issue 26 item 2): `bp select <ref> <number>`, the
    verb the ax-truth branch documents for sliders (docs/commands.md, bp select)."""
    return agent.act("select", ref, str(value))


def upload_file(agent, name, text="attached by a real-app task\n"):
    """A file of the Agent's own, in its output directory, uploaded to the page's file input."""
    os.makedirs(agent.out_dir, exist_ok=True)
    path = os.path.join(agent.out_dir, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def code_in(text, prefix):
    """The code a toast or live region announced ("Your code is K1234")."""
    found = re.search(re.escape(prefix) + r"\s*([A-Z]\d{4})", text)
    assert found, text[-2000:]
    return found.group(1)


def ref_in_roles(observation, roles, name):
    """The one element named `name` of any of `roles` (libraries differ in the role of an item)."""
    found = [e["ref"] for e in observation["elements"] if e["role"] in roles and e["name"] == name]
    assert len(found) == 1, (roles, name, [(e["ref"], e["role"], e["name"]) for e in observation["elements"]])
    return str(found[0])
