"""The real-app suite's Agent: runs `bp` (the CLI, JSON output) and nothing else, and records
what a task cost — `bp` calls and bytes of output read — for the suite's closing figures."""

import json
import urllib.parse

import websocket

from tests import helpers


class Agent:
    def __init__(self, home, env):
        self.home = home
        self.env = env
        self.calls = 0
        self.bytes_read = 0

    def run(self, *args, timeout=90):
        result = helpers.bp(self.home, *args, env=self.env, timeout=timeout)
        self.calls += 1
        self.bytes_read += len(result.stdout.encode()) + len(result.stderr.encode())
        return result

    def ok(self, *args, timeout=90):
        """A command an Agent expects to succeed: rc 0 and ok: true, else the task fails here."""
        result = self.run(*args, timeout=timeout)
        assert result.rc == 0 and result.json and result.json.get("ok") is True, result
        return result.json

    def act(self, *args, timeout=90):
        """An action whose evidence must not tell the Agent it failed (an Agent that obeys a
        mismatch or a repeated_action hint redoes what already happened)."""
        out = self.ok(*args, timeout=timeout)
        evidence = out.get("evidence") or {}
        assert evidence.get("status") not in ("mismatch", "action_not_verified"), evidence
        assert not [h for h in out.get("hints") or [] if h.get("code") == "repeated_action"], out.get("hints")
        return out


def refs(observation, role, name=None, contains=None):
    return [e["ref"] for e in observation["elements"] if e["role"] == role
            and (name is None or e["name"] == name) and (contains is None or contains in (e["name"] or ""))]


def ref_of(observation, role, name=None, contains=None):
    found = refs(observation, role, name, contains)
    assert len(found) == 1, (role, name, contains, [(e["ref"], e["role"], e["name"]) for e in observation["elements"]])
    return str(found[0])


def page_eval(chromium, url_prefix, expression):
    """Read the app's own state in the page through the test's own DevTools connection (never
    Browser Pilot's): the one tab whose URL starts with url_prefix."""
    targets = [t for t in chromium.http("/json/list") if t["type"] == "page" and t["url"].startswith(url_prefix)]
    assert len(targets) == 1, (url_prefix, [t["url"] for t in targets])
    ws = websocket.create_connection(f"ws://127.0.0.1:{chromium.port}/devtools/page/{targets[0]['id']}",
                                     suppress_origin=True, timeout=10)
    try:
        ws.send(json.dumps({"id": 1, "method": "Runtime.evaluate",
                            "params": {"expression": expression, "returnByValue": True}}))
        while True:
            msg = json.loads(ws.recv())
            if msg.get("id") == 1:
                result = msg["result"]
                assert "exceptionDetails" not in result, result
                return result["result"].get("value")
    finally:
        ws.close()


def local_storage(chromium, url_prefix, key):
    raw = page_eval(chromium, url_prefix, f"localStorage.getItem({json.dumps(key)})")
    return None if raw is None else json.loads(raw)


def query_of(entry):
    return dict(urllib.parse.parse_qsl(entry["query"]))
