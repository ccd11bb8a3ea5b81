"""Output path rules (bp/outputs.py) and private storage bounds (broker/files/artifacts.py)."""

import os
import stat
import threading
import types

import pytest

from bp import outputs, settings
from bp.errors import BPError


def reason(exc_info):
    return exc_info.value.context.get("reason"), exc_info.value.context.get("field")


def test_output_dir_must_be_absolute_and_the_cwd_is_the_fallback(tmp_path):
    with pytest.raises(BPError) as exc:
        outputs.request_args(None, environ={"BROWSER_PILOT_OUTPUT_DIR": "rel/dir"})
    assert reason(exc) == ("not_absolute", "outputDir")
    assert outputs.request_args(None, environ={"BROWSER_PILOT_OUTPUT_DIR": "/x/y/"}) == \
        {"outputDir": "/x/y", "createOutputDir": True}
    assert outputs.request_args("a.png", environ={}, cwd=str(tmp_path)) == {"outputDir": str(tmp_path), "file": "a.png"}
    assert outputs.request_args(None, environ={"BROWSER_PILOT_OUTPUT_DIR": ""}, cwd="/w") == {"outputDir": "/w"}


@pytest.mark.parametrize("name", ["..", "../x.png", "a/../../x.png", ".", "a/.."])
def test_relative_names_never_leave_the_output_dir(name):
    with pytest.raises(BPError) as exc:
        outputs.destination("/out", name)
    assert reason(exc) == ("outside_output_dir", "file")


def test_destinations():
    assert outputs.destination("/out", "a/b.png") == ("/out/a/b.png", "/out")
    assert outputs.destination("/out", "/elsewhere//x.png") == ("/elsewhere/x.png", None)
    assert outputs.destination("/out", "a/./b/../c.png") == ("/out/a/c.png", "/out")


def test_write_is_private_atomic_and_replaces_a_regular_file_only_when_asked(tmp_path):
    target = tmp_path / "f.bin"
    target.write_text("old")
    os.chmod(target, 0o644)
    with pytest.raises(BPError) as exc:
        outputs.write(str(target), str(tmp_path), [b"ab", b"cd"])
    assert exc.value.code == "file_exists" and exc.value.context["path"] == str(target)
    assert exc.value.remediation["code"] == "choose_other_path"
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["f.bin"]
    assert outputs.write(str(target), str(tmp_path), [b"ab", b"cd"], overwrite=True) == (str(target), 4)
    assert target.read_bytes() == b"abcd"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["f.bin"]


def test_a_file_appearing_while_written_is_not_replaced(tmp_path):
    """The existence check comes first, but publishing is what makes it race-free: a file made
    at the name while the bytes were being written is kept (hard link, never rename over it)."""
    target = tmp_path / "race.png"

    def chunks():
        target.write_text("theirs")
        yield b"ours"

    with pytest.raises(BPError) as exc:
        outputs.write(str(target), str(tmp_path), chunks())
    assert exc.value.code == "file_exists" and target.read_text() == "theirs"
    assert sorted(os.listdir(tmp_path)) == ["race.png"]  # no temp file left


def test_a_name_not_chosen_by_the_caller_gets_a_unique_variant(tmp_path):
    (tmp_path / "conftest.py").write_text("project")
    (tmp_path / "conftest (1).py").write_text("earlier")
    path, size = outputs.export({"outputDir": str(tmp_path)}, "conftest.py", [b"server"])
    assert (path, size) == (str(tmp_path / "conftest (2).py"), 6)
    assert (tmp_path / "conftest.py").read_text() == "project" and (tmp_path / "conftest (1).py").read_text() == "earlier"
    assert outputs.export({"outputDir": str(tmp_path)}, "README", [b"a"])[0] == str(tmp_path / "README")
    assert outputs.export({"outputDir": str(tmp_path)}, "README", [b"b"])[0] == str(tmp_path / "README (1)")
    # The caller's own name is never renamed: it is file_exists (or --overwrite).
    with pytest.raises(BPError) as exc:
        outputs.export({"outputDir": str(tmp_path), "file": "conftest.py"}, "x", [b"server"])
    assert exc.value.code == "file_exists"
    assert outputs.export({"outputDir": str(tmp_path), "file": "conftest.py", "overwrite": True}, "x", [b"s"])[1] == 1
    assert (tmp_path / "conftest.py").read_text() == "s"


def test_write_refuses_symlinks_escapes_and_directories(tmp_path):
    out, other = tmp_path / "out", tmp_path / "other"
    out.mkdir()
    other.mkdir()
    victim = other / "victim"
    victim.write_text("keep")
    (out / "link").symlink_to(victim)
    (out / "sub").symlink_to(other)
    (out / "dir").mkdir()
    cases = [(out / "link", str(out), "symlink_destination"), (out / "link", None, "symlink_destination"),
             (out / "sub" / "x", str(out), "outside_output_dir"), (out / "dir", str(out), "not_a_regular_file"),
             (out / "missing" / "x", str(out), "no_such_directory")]
    for path, base, why in cases:
        with pytest.raises(BPError) as exc:
            outputs.write(str(path), base, [b"data"])
        assert reason(exc) == (why, "file"), path
    assert victim.read_text() == "keep"
    assert sorted(os.listdir(out)) == ["dir", "link", "sub"] and os.listdir(other) == ["victim"]


def test_export_creates_the_output_dir_privately(tmp_path):
    out = tmp_path / "made"
    path, size = outputs.export({"outputDir": str(out), "createOutputDir": True}, "d.png", [b"x"])
    assert (path, size) == (str(out / "d.png"), 1)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700


@pytest.mark.parametrize("raw, expected", [("report.csv", "report.csv"), ("../../etc/passwd", "passwd"),
                                           ("a\\b\\c.txt", "c.txt"), (".hidden", "hidden"), ("", "fallback"),
                                           ("..", "fallback"), ("x\x00y\x1b.txt", "xy.txt")])
def test_safe_basename(raw, expected):
    assert outputs.safe_basename(raw, "fallback") == expected


# --- private storage -----------------------------------------------------------------------------


class FakeAgents:
    def __init__(self):
        self.agents = {}

    def get(self, key):
        return self.agents.get(key)


@pytest.fixture
def store(tmp_path, monkeypatch):
    from broker.files import artifacts

    import dataclasses

    monkeypatch.setattr(settings, "_current", dataclasses.replace(
        settings.current(), artifact_item_max_bytes=10, artifact_key_max_bytes=15, artifact_total_max_bytes=25))
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "artifacts").mkdir(mode=0o700)
    (home / "artifacts" / "leftover").mkdir()
    (home / "artifacts" / "leftover" / "data").write_text("old")
    agents = FakeAgents()
    s = artifacts.Store(str(home), agents)
    yield s, agents
    s.close()


def agent(agents, key):
    a = agents.agents[key] = types.SimpleNamespace(key=key)
    return a


def test_store_wipes_leftovers_keeps_private_modes_and_enforces_quotas(store):
    s, agents = store
    assert os.listdir(s.root) == []
    a, b, c = agent(agents, "a"), agent(agents, "b"), agent(agents, "c")
    item = s.put_bytes(a, "screenshot", b"0123456789", "image/png")
    assert stat.S_IMODE(os.stat(item.path).st_mode) == 0o600 and stat.S_IMODE(os.stat(item.dir).st_mode) == 0o700
    assert b"".join(item.chunks()) == b"0123456789"
    for data, who, limit in ((b"x" * 11, a, "item"), (b"x" * 6, a, "key")):
        with pytest.raises(BPError) as exc:
            s.put_bytes(who, "pdf", data, "application/pdf")
        assert exc.value.code == "quota_exceeded" and exc.value.context["limit"] == limit
    s.put_bytes(b, "pdf", b"x" * 10, "application/pdf")
    with pytest.raises(BPError) as exc:
        s.put_bytes(c, "pdf", b"x" * 6, "application/pdf")
    assert exc.value.context["limit"] == "total"
    assert len(os.listdir(s.root)) == 2  # nothing partial from the refusals
    s.release_key("a")
    assert len(os.listdir(s.root)) == 1 and s.used == 10
    with pytest.raises(BPError) as exc:
        s.get(a, item.id)
    assert exc.value.code == "artifact_not_found"


def test_store_copies_regular_files_only_and_drops_items_of_a_replaced_agent(store, tmp_path):
    s, agents = store
    a = agent(agents, "a")
    src = tmp_path / "src.txt"
    src.write_bytes(b"hello")
    (tmp_path / "link").symlink_to(src)
    item = s.copy_file(a, "upload", str(src), "text/plain", "src.txt")
    assert os.path.basename(item.path) == "src.txt" and b"".join(item.chunks()) == b"hello"
    for path, why in ((tmp_path / "link", "symlink"), (tmp_path, "not_regular_file"), (tmp_path / "nope", "not_found")):
        with pytest.raises(BPError) as exc:
            s.copy_file(a, "upload", str(path), "text/plain", "x")
        assert exc.value.context["reason"] == why
    agent(agents, "a")  # a new Agent object for the same key (the old lease expired)
    s.sweep()
    assert s.items == {} and os.listdir(s.root) == []


def test_store_expiry(store, monkeypatch):
    s, agents = store
    a = agent(agents, "a")
    item = s.put_bytes(a, "pdf", b"x", "application/pdf")
    item.expires_at = 0
    s.sweep()
    assert s.items == {} and os.listdir(s.root) == [] and s.used == 0
    assert threading.active_count() >= 1 and settings.current().artifact_ttl_s > 0


# --- download attribution ------------------------------------------------------------------------


def fake_broker(owners):
    """owners: raw tab id -> Agent holding it."""
    agents_by_key = {a.key: a for a in owners.values()}
    browser = types.SimpleNamespace(generation=1, popups=lambda: {},
                                    targets=types.SimpleNamespace(info=lambda raw: {"type": "page"} if raw in owners else None))
    agents = types.SimpleNamespace(owner=lambda raw, popups: ((owners[raw].key, "managed") if raw in owners else (None, "user_tab")),
                                   get=lambda key: agents_by_key.get(key))
    return types.SimpleNamespace(browser=browser, agents=agents)


def live_agent(key):
    return types.SimpleNamespace(key=key, generation=1, lease_active=lambda now: True)


def test_downloads_are_attributed_to_the_tab_holder_only_and_a_double_claim_fails_closed():
    from broker.files import downloads

    a, b = live_agent("a"), live_agent("b")
    broker = fake_broker({"tab-a": a, "tab-b": b})
    tracker = downloads.Tracker(broker.browser, broker.agents, None)
    begin = {"guid": "g1", "suggestedFilename": "../r.csv", "frameId": "tab-a"}
    tracker.on_event("Page.downloadWillBegin", begin, "tab-a")
    tracker.on_event("Browser.downloadWillBegin", begin, None)  # the same owner again: fine
    assert [(r["fileName"], r["state"], r["mimeType"]) for _, r in tracker.rows(a)] == [("r.csv", "in_progress", "text/csv")]
    assert tracker.rows(b) == []
    tracker.on_event("Page.downloadWillBegin", {"guid": "g2", "suggestedFilename": "x"}, "tab-nobody")
    assert "g2" not in tracker.pending  # a tab nobody holds: ignored
    # Claimed by a second Agent: nobody keeps it, and it is never tracked again.
    tracker.on_event("Page.downloadWillBegin", dict(begin, frameId="tab-b"), "tab-b")
    assert tracker.rows(a) == [] and tracker.rows(b) == [] and "g1" not in tracker.pending
    tracker.on_event("Page.downloadWillBegin", begin, "tab-a")
    assert tracker.rows(a) == []
    tracker.on_event("Browser.downloadProgress", {"guid": "g1", "state": "completed", "filePath": "/etc/passwd"}, None)
    assert tracker.rows(a) == []
    # Canceled by Chrome: listed as such, never copied.
    tracker.on_event("Page.downloadWillBegin", {"guid": "g3", "suggestedFilename": "c.bin"}, "tab-a")
    tracker.on_event("Browser.downloadProgress", {"guid": "g3", "state": "canceled", "totalBytes": 3}, None)
    assert [(r["state"], r["sizeBytes"]) for _, r in tracker.rows(a)] == [("canceled", 3)]
    tracker.forget_key("a")
    assert tracker.rows(a) == []
