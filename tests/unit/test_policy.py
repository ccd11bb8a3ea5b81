"""The policy's matching rules and the audit journal's files, without a browser."""

import json
import os

import pytest

from bp import policy
from bp.errors import BPError
from broker.policy import audit


def make(data):
    return policy.Policy(policy.validate(data), "/p", "home", "sha256:x")


def test_origin_patterns_match_one_label_and_ports():
    rules = make({"version": 1, "origins": {"allow": ["http://127.0.0.1:*", "https://*.example.com"],
                                            "block": ["https://bank.example.com"]}})
    assert rules.url_allowed("http://127.0.0.1:8080/x?q=1")
    assert rules.url_allowed("https://www.example.com/")
    assert not rules.url_allowed("https://a.b.example.com/")  # '*' is one label
    assert not rules.url_allowed("https://example.com/")
    assert not rules.url_allowed("https://bank.example.com/login")  # block wins over allow
    assert not rules.url_allowed("http://localhost:8080/")
    assert not rules.url_allowed("data:text/html,hi") and rules.url_allowed("about:blank")
    assert not make({"version": 1, "origins": {"allow": ["https://x.org"]}}).url_allowed("https://x.org:8443/")
    assert policy.origin_of("https://u:pw@x.org:443/p?q#f") == "https://x.org"


def test_deny_by_capability_or_name_and_key_patterns_only_add():
    rules = make({"version": 1, "deny": ["close"], "keys": {"research-*": {"deny": ["action.input"]}}})
    assert rules.denied("research-1", "click") == "action.input"
    assert rules.denied("research-1", "close") == "close"
    assert rules.denied("writer", "click") is None and rules.denied("writer", "close") == "close"
    assert rules.denied("research-1", "ping") is None  # liveness is never denied
    assert policy.Policy.none().denied("any", "eval") is None


@pytest.mark.parametrize("data,field", [
    ({"version": 1, "deny": "eval"}, "deny"),
    ({"version": 1, "keys": {"a*": {"allow": []}}}, "keys.a*"),
    ({"version": 1, "origins": {"allow": ["127.0.0.1"]}}, "origins.allow[0]"),
    ({"version": 1, "origins": {"subresources": "yes"}}, "origins.subresources"),
    ({"version": 1, "extra": 1}, "extra"),
])
def test_invalid_policies_name_the_field(data, field):
    with pytest.raises(BPError) as caught:
        policy.validate(data)
    assert caught.value.code == "invalid_argument" and caught.value.context["field"] == field


def entry(journal, n):
    journal.append(key="k" if n % 2 else "other", operation="click", capability="action.input",
                   origin="http://127.0.0.1:1", outcome="ok", command_id=f"cmd-{n:08d}")


def test_journal_rotates_bounded_and_old_cursors_expire(tmp_path):
    home = str(tmp_path)
    os.chmod(home, 0o700)
    journal = audit.Journal(home, max_file_bytes=2048, max_files=3)
    for n in range(1, 101):
        entry(journal, n)
    files = sorted(os.listdir(os.path.join(home, "audit")))
    assert files.pop(files.index(audit.HEAD_NAME))  # the head record beside the journal (also 0600)
    assert len(files) == 3
    assert oct(os.stat(os.path.join(home, "audit")).st_mode & 0o777) == "0o700"
    assert all(os.stat(os.path.join(home, "audit", f)).st_mode & 0o777 == 0o600 for f in files)
    assert journal.verify()["verified"]
    listed = journal.entries("k", 5, None)
    assert [e["seq"] for e in listed["entries"]] == [91, 93, 95, 97, 99]
    first = journal.verify()["first"]
    page = journal.entries("k", 2, first)
    assert all(e["key"] == "k" and e["seq"] > first for e in page["entries"])
    with pytest.raises(BPError) as caught:
        journal.entries("k", 5, 1)
    assert caught.value.code == "cursor_expired"


def test_journal_resumes_after_a_crash_up_to_the_last_whole_line(tmp_path):
    home = str(tmp_path)
    os.chmod(home, 0o700)
    journal = audit.Journal(home)
    for n in range(1, 6):
        entry(journal, n)
    path = os.path.join(home, "audit", "audit-000001.jsonl")
    with open(path, "ab") as fh:
        fh.write(b'{"seq":6,"time":1,"key":"k","oper')  # the write a crash interrupted
    again = audit.Journal(home)
    assert again.recovered > 0 and again.seq == 5
    entry(again, 6)
    result = again.verify()
    assert result["verified"] and result["last"] == 6
    lines = open(path, "rb").read().splitlines()
    assert json.loads(lines[-1])["prev"] == audit.line_hash(lines[-2])
