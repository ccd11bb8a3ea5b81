"""The audit journal on real Chromium: one line per mutating command, accepted or denied, the
caller's own entries only, no secret in it, an edited or a cut line detected, and a SIGKILLed
broker's lines kept."""

import glob
import json
import os
import signal
import subprocess

from tests import helpers
from tests.helpers import bp, ok, ref_of


def journal_files(home):
    return sorted(glob.glob(os.path.join(home, "audit", "audit-*.jsonl")))


def journal_bytes(home):
    return b"".join(open(p, "rb").read() for p in journal_files(home))


def start(home, env_for, policy=None):
    os.chmod(home, 0o700)
    if policy is not None:
        path = os.path.join(home, "policy.json")
        with open(path, "w") as fh:
            json.dump(policy, fh)
        os.chmod(path, 0o600)
    env = env_for(home)
    assert bp(home, "connect", env=env).rc == 0
    return env


def test_entries_accepted_and_denied_own_only_and_no_secrets(home, env_for, pages):
    env = start(home, env_for, {"version": 1, "keys": {"reader-*": {"deny": ["action.input"]}}})
    secret_text, secret_pw, secret_header, secret_cookie, secret_js, secret_query = (
        "typed-" + os.urandom(6).hex(), "pw-" + os.urandom(6).hex(), "hdr-" + os.urandom(6).hex(),
        "ck-" + os.urandom(6).hex(), "js-" + os.urandom(6).hex(), "q-" + os.urandom(6).hex())
    url = pages.page("<input aria-label=field>", title="audit") + f"&token={secret_query}"
    observation = ok(home, env, "open", url)
    ok(home, env, "type", ref_of(observation, "textbox", "field"), secret_text)
    auth = subprocess.run([helpers.BP, "auth", "ada", "-"], input=secret_pw, env=env, capture_output=True, text=True)
    assert auth.returncode == 0, auth
    ok(home, env, "net", "headers", "*", f"X-Secret: {secret_header}")
    ok(home, env, "cookies", "set", f"sid={secret_cookie}")
    ok(home, env, "eval", f"'{secret_js}'.length")
    ok(home, env, "snapshot")  # a read: not journaled
    reader = dict(env, BROWSER_PILOT_CLIENT_KEY="reader-1")
    ok(home, reader, "open", pages.page("<button>b</button>", title="reader"))
    assert bp(home, "click", "1", env=reader).code == "capability_denied"

    mine = ok(home, env, "audit")["entries"]
    operations = [e["operation"] for e in mine]
    assert operations == ["connect", "open", "type", "auth.set", "net.rules.add", "cookies.set", "eval"], operations
    typed = mine[2]
    assert set(typed) == {"seq", "time", "key", "operation", "capability", "origin", "outcome", "commandId", "cursor"}
    assert typed["origin"] == f"http://127.0.0.1:{pages.port}" and typed["outcome"] == "ok"
    assert typed["capability"] == "action.input" and typed["commandId"].startswith("cmd-")
    theirs = ok(home, reader, "audit")["entries"]
    assert [(e["operation"], e["outcome"]) for e in theirs] == [("open", "ok"), ("click", "capability_denied")]
    # Paging by cursor.
    page = ok(home, env, "audit", "--after", mine[3]["cursor"], "--limit", "2")["entries"]
    assert [e["operation"] for e in page] == ["net.rules.add", "cookies.set"]
    # No secret anywhere: not in the journal, not in the logs.
    raw = journal_bytes(home)
    logs = b"".join(open(p, "rb").read() for p in glob.glob(os.path.join(home, "logs", "*")))
    for secret in (secret_text, secret_pw, secret_header, secret_cookie, secret_js, secret_query):
        assert secret.encode() not in raw and secret.encode() not in logs, secret
    assert ok(home, env, "audit", "--verify")["audit"]["verified"] is True


def test_verify_detects_an_edited_and_a_cut_line(home, env_for, pages):
    env = start(home, env_for)
    for n in range(4):
        ok(home, env, "open", pages.page(f"<p>{n}</p>", title=f"v{n}"))
    assert ok(home, env, "audit", "--verify")["audit"]["verified"] is True
    path = journal_files(home)[-1]
    original = open(path, "rb").read()
    lines = original.splitlines(keepends=True)
    # Edited: a denied outcome made to look accepted (same length, so only the chain can tell).
    edited = lines[2].replace(b'"outcome":"ok"', b'"outcome":"OK"')
    assert edited != lines[2]
    with open(path, "wb") as fh:
        fh.write(b"".join(lines[:2] + [edited] + lines[3:]))
    result = ok(home, env, "audit", "--verify")["audit"]
    assert result["verified"] is False and {"reason": "chain_broken", "line": 4, "seq": 4} in result["problems"]
    # Cut: the last line loses its end.
    with open(path, "wb") as fh:
        fh.write(b"".join(lines[:-1]) + lines[-1][:len(lines[-1]) // 2])
    result = ok(home, env, "audit", "--verify")["audit"]
    assert result["verified"] is False
    assert {p["reason"] for p in result["problems"]} >= {"unreadable", "head_mismatch"}
    # A removed line in the middle.
    with open(path, "wb") as fh:
        fh.write(b"".join(lines[:1] + lines[2:]))
    result = ok(home, env, "audit", "--verify")["audit"]
    assert result["verified"] is False and any(p["reason"] == "sequence_gap" for p in result["problems"])
    with open(path, "wb") as fh:
        fh.write(original)
    assert ok(home, env, "audit", "--verify")["audit"]["verified"] is True


def test_journal_survives_a_broker_crash(home, env_for, pages):
    env = start(home, env_for)
    ok(home, env, "open", pages.page("<p>before</p>", title="crash"))
    before = ok(home, env, "audit")["entries"]
    os.kill(helpers.broker_pid(home), signal.SIGKILL)
    assert helpers.wait_until(lambda: helpers.brokers_of(home) == [], 10)
    assert bp(home, "connect", env=env).rc == 0
    after = ok(home, env, "audit")["entries"]
    assert [e["seq"] for e in after[:len(before)]] == [e["seq"] for e in before]
    assert after[-1]["operation"] == "connect" and after[-1]["seq"] == before[-1]["seq"] + 1
    assert ok(home, env, "audit", "--verify")["audit"]["verified"] is True
    assert bp(home, "audit", "--after", "audit-0", env=env).rc == 0


# --- failing closed (issue 27 item 4) --------------------------------------------------------------

from tests import tmpfs  # noqa: E402

COUNTER = "<button onclick=\"this.textContent=Number(this.textContent)+1\">0</button>"


def counter_value(home, env):
    return ok(home, env, "eval", "document.querySelector('button').textContent")["value"]


def test_a_full_disk_refuses_audited_commands_before_dispatch(home, env_for, pages):
    os.chmod(home, 0o700)
    with tmpfs.small_tmpfs(os.path.join(home, "audit"), "1m") as audit_dir:
        env = start(home, env_for)
        observation = ok(home, env, "open", pages.page(COUNTER, title="full"))
        button = ref_of(observation, "button", "0")
        filler = tmpfs.fill(audit_dir)
        refused = bp(home, "click", button, env=env)
        assert refused.rc != 0 and refused.code == "audit_unavailable", refused
        assert refused.json["context"]["reason"] == "storage_full"
        assert refused.json["remediation"]["code"] == "fix_audit_journal"
        # Reads are not audited and still answer: the click never reached the page.
        assert ok(home, env, "snapshot")["elements"] and bp(home, "eval", "1", env=env).code == "audit_unavailable"
        os.unlink(filler)
        ok(home, env, "click", button)
        assert counter_value(home, env) == "1"
        entries = ok(home, env, "audit")["entries"]
        assert [e["operation"] for e in entries][-2:] == ["click", "eval"]
        assert ok(home, env, "audit", "--verify")["audit"]["verified"] is True


def test_a_deleted_journal_file_starts_a_new_one_recording_the_gap(home, env_for, pages):
    env = start(home, env_for)
    for n in range(3):
        ok(home, env, "open", pages.page(f"<p>{n}</p>", title=f"d{n}"))
    [first] = journal_files(home)
    gone = [json.loads(line)["seq"] for line in open(first, "rb").read().splitlines()]
    os.unlink(first)
    ok(home, env, "open", pages.page("<p>after</p>", title="after"))
    files = journal_files(home)
    assert files and first not in files, files  # not appended to the deleted inode
    lines = [json.loads(line) for line in open(files[-1], "rb").read().splitlines()]
    assert lines[0]["event"] == "gap" and lines[0]["reason"] == "file_deleted"
    assert lines[0]["file"] == os.path.basename(first) and lines[1]["operation"] == "open"
    result = ok(home, env, "audit", "--verify")["audit"]
    assert result["verified"] is False
    assert {"reason": "file_missing", "file": os.path.basename(first), "missing": [gone[0], gone[-1]],
            "entries": len(gone)} in result["problems"], result
    assert any(p["reason"] == "entries_missing" and p["cause"] == "file_deleted" for p in result["problems"])


def test_a_tail_cut_while_the_service_was_down_is_reported(home, env_for, pages):
    env = start(home, env_for)
    for n in range(4):
        ok(home, env, "open", pages.page(f"<p>{n}</p>", title=f"t{n}"))
    assert bp(home, "disconnect", env=env).rc == 0
    assert helpers.wait_until(lambda: helpers.brokers_of(home) == [], 15)
    [path] = journal_files(home)
    lines = open(path, "rb").read().splitlines(keepends=True)
    last_seq = json.loads(lines[-1])["seq"]
    with open(path, "wb") as fh:  # the last two whole lines removed: the chain alone still verifies
        fh.write(b"".join(lines[:-2]))
    assert bp(home, "connect", env=env).rc == 0
    result = ok(home, env, "audit", "--verify")["audit"]
    assert result["verified"] is False
    assert any(p["reason"] == "entries_missing" and p["cause"] == "tail_truncated"
               and p["missing"] == [last_seq - 1, last_seq] for p in result["problems"]), result


def test_taking_a_tab_and_cancelling_are_audited(home, env_for, pages, chromium):
    env = start(home, env_for)
    marker = f"persons-{os.path.basename(home)}"
    user = chromium.new_user_tab(pages.url(f"/page?title={marker}"))
    assert helpers.wait_until(lambda: any(marker in t["url"] for t in ok(home, env, "tabs")["tabs"]))
    index = next(t["index"] for t in ok(home, env, "tabs")["tabs"] if marker in t["url"])
    ok(home, env, "tab", str(index))
    ok(home, env, "tab", "release")
    cancel = bp(home, "cancel", "cmd-000000000000", env=env)
    entries = ok(home, env, "audit")["entries"]
    assert [e["operation"] for e in entries][-3:] == ["tab", "tab", "cancel"], entries
    tab, cancelled = entries[-3], entries[-1]
    assert tab["capability"] == "workspace.manage" and tab["outcome"] == "ok"
    assert tab["origin"] == f"http://127.0.0.1:{pages.port}"
    assert cancelled["outcome"] == ("ok" if cancel.rc == 0 else cancel.code)
    chromium.close_tab(user)


def _button_text(home, env):
    return [e["name"] for e in ok(home, env, "snapshot")["elements"] if e["role"] == "button"][0]


def test_an_immutable_journal_refuses_the_click_before_it_reaches_the_page(home, env_for, pages):
    """Issue 39 item 3: the journal file made immutable (the kernel's EPERM on write). Before, the
    first click after it ran and its line was lost; now it is refused and the page never sees it."""
    env = start(home, env_for)
    button = ref_of(ok(home, env, "open", pages.page(COUNTER, title="immutable")), "button", "0")
    [path] = journal_files(home)
    tmpfs.chattr("+i", path)
    try:
        refused = bp(home, "click", button, env=env)
        assert refused.rc != 0 and refused.code == "audit_unavailable", refused
        assert refused.json["context"]["reason"] == "write_failed"
        assert _button_text(home, env) == "0"  # nothing dispatched
    finally:
        tmpfs.chattr("-i", path)
    ok(home, env, "click", button)
    assert _button_text(home, env) == "1"
    assert [e["operation"] for e in ok(home, env, "audit")["entries"]][-2:] == ["open", "click"]
    assert ok(home, env, "audit", "--verify")["audit"]["verified"] is True

