"""Issue 14 on real Chromium: user mistakes are invalid_argument with a field, network rules with
bad headers are refused when added (and never leave a request paused), secrets stay secret."""

import json
import os
import subprocess

import pytest

from tests import helpers
from tests.helpers import bp


def ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    assert result.json["ok"] is True, result
    return result.json


def refused(home, env, *args, field=None):
    result = bp(home, *args, env=env)
    assert result.rc == 1, result
    assert result.json["code"] == "invalid_argument", result
    if field is not None:
        assert result.json["context"]["field"] == field, result
    return result.json


def fetch_outcome(home, env, path, then="r.text()"):
    expression = f"fetch({path!r}).then(r => {then}).catch(e => 'failed:' + e.name)"
    return ok(home, env, "eval", expression)["value"]


def with_stdin(home, env, data, *args):
    proc = subprocess.run([helpers.BP, *args], env=env, input=data, capture_output=True, text=True, timeout=60)
    result = helpers.Result(proc)
    assert result.rc == 0, result
    return result.json


@pytest.mark.parametrize("args,field", [
    (("cookies", "set", "--url", "http://127.0.0.1/", "a=b;c=d"), "value"),
    (("cookies", "set", "--url", "http://127.0.0.1/", "a\nb=c"), "name"),
    (("cookies", "set", "--url", "javascript:x", "a=b"), "url"),
    (("cookies", "delete", "--url", "javascript:x", "a"), "url"),
    (("screenshot", "--selector", "[[["), "selector"),
    (("open", "\\"), "url"),
    (("eval", "(() => { let v = 1; for (let i = 0; i < 500; i++) v = [v]; return v; })()"), "expression"),
    (("click", "\u0661"), "ref"),  # ARABIC-INDIC DIGIT ONE is not ref 1
    (("snapshot", "--limit", "\uff11"), "limit"),  # FULLWIDTH DIGIT ONE
    (("--timeout", "\u0661\u0660\u0660\u0660", "status"), "timeout"),
    (("tab", "\u0661"), "index"),
])
def test_user_mistakes_are_invalid_argument(home, connected, pages, args, field):
    ok(home, connected, "open", pages.page("<p>mistakes</p>"))
    ok(home, connected, "snapshot")
    refused(home, connected, *args, field=field)
    assert bp(home, "status", env=connected).rc == 0


def test_rules_with_bad_headers_are_refused_when_added(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>rules</p>"))
    refused(home, connected, "net", "headers", "*", "X-A: b\r\nX-Injected: c", field="headers")
    refused(home, connected, "net", "headers", "*", "Host: evil.example", field="headers")
    refused(home, connected, "net", "headers", "*", "Content-Length: 5", field="headers")
    refused(home, connected, "net", "mock", "*", "--body", "x", "--content-type", "text/html\r\nX-B: c",
            field="contentType")
    assert ok(home, connected, "net", "rules")["rules"] == []
    assert fetch_outcome(home, connected, "/json").startswith("{")  # nothing paused


def test_sensitive_rule_headers_are_redacted_in_rules_and_command_records(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>secrets</p>"))
    added = bp(home, "net", "headers", "*/echo-headers*", "Authorization: Bearer sekrit-111", "X-Plain: shown",
               env=connected)
    assert added.rc == 0, added
    assert "sekrit-111" not in added.stdout
    rules = bp(home, "net", "rules", env=connected)
    assert "sekrit-111" not in rules.stdout and "shown" in rules.stdout
    records = ok(home, connected, "commands", "--limit", "50")["commands"]
    for record in records:
        shown = bp(home, "command", record["id"], env=connected)
        assert "sekrit-111" not in shown.stdout
    # The rule itself still sends the real value.
    assert fetch_outcome(home, connected, "/echo-headers",
                         "r.json().then(j => j.headers['authorization'])") == "Bearer sekrit-111"


def test_secret_values_can_come_from_stdin(home, connected, pages):
    url = pages.url("/")
    ok(home, connected, "open", pages.page("<p>stdin</p>"))
    with_stdin(home, connected, "cookie-from-stdin\n", "cookies", "set", "sess=-", "--url", url)
    cookies = ok(home, connected, "cookies", "--url", url, "--values")["cookies"]
    assert {"sess": "cookie-from-stdin"}.items() <= {c["name"]: c["value"] for c in cookies}.items()
    with_stdin(home, connected, "Bearer from-stdin\n", "net", "headers", "*/echo-headers*", "Authorization: -")
    assert fetch_outcome(home, connected, "/echo-headers",
                         "r.json().then(j => j.headers['authorization'])") == "Bearer from-stdin"


def test_url_credentials_never_reach_the_journal(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>creds</p>"))
    ok(home, connected, "net", "clear")
    credentialed = pages.url("/json").replace("http://", "http://ada:pw-secret-9@")
    ok(home, connected, "open", credentialed)
    listed = bp(home, "net", "--limit", "50", env=connected)
    assert listed.rc == 0, listed
    assert "pw-secret-9" not in listed.stdout and "ada:" not in listed.stdout
    assert any(r["url"].endswith("/json") for r in listed.json["requests"]), listed.json
    for row in listed.json["requests"]:
        assert "pw-secret-9" not in bp(home, "net", "show", row["id"], env=connected).stdout
