"""The audit journal's files on a real directory (no service): a rotated file removed from within
retention is named with the exact entries it held, a rewritten last line is noticed at the next
start, and a line that cannot be written is kept and blocks the next command (issue 27 item 4)."""

import errno
import json
import os

import pytest

from bp.errors import BPError
from broker.policy import audit
from tests import tmpfs


def fill(journal, count, key="k"):
    for n in range(count):
        journal.append(key=key, operation="click", capability="action.input", origin=None, outcome="ok",
                       command_id=f"cmd-{n:012x}")


def seqs(path):
    return [json.loads(line)["seq"] for line in open(path, "rb").read().splitlines()]


@pytest.fixture
def home(tmp_path):
    os.chmod(tmp_path, 0o700)
    return str(tmp_path)


def test_a_removed_older_file_within_retention_is_reported_exactly(home):
    journal = audit.Journal(home, max_file_bytes=2000)
    fill(journal, 60)
    files = journal._files()
    assert len(files) >= 3 and len(files) <= audit.MAX_FILES
    assert journal.verify()["verified"] is True
    _, oldest = files[0]
    held = seqs(oldest)
    os.unlink(oldest)
    result = journal.verify()
    assert result["verified"] is False
    assert {"reason": "file_missing", "file": os.path.basename(oldest), "missing": [held[0], held[-1]],
            "entries": len(held)} in result["problems"]
    # A middle one too, also after a restart (the head record keeps the index).
    journal.fd and os.close(journal.fd)
    again = audit.Journal(home, max_file_bytes=2000)
    _, middle = files[1]
    held_middle = seqs(middle)
    os.unlink(middle)
    reasons = {(p["reason"], p.get("file")): p for p in again.verify()["problems"]}
    assert reasons[("file_missing", os.path.basename(middle))]["missing"] == [held_middle[0], held_middle[-1]]


def test_retention_pruning_is_not_a_missing_file(home):
    journal = audit.Journal(home, max_file_bytes=600, max_files=3)
    fill(journal, 40)
    assert len(journal._files()) == 3
    result = journal.verify()
    assert result["verified"] is True, result


def test_a_last_line_rewritten_while_stopped_is_noticed_at_start(home):
    journal = audit.Journal(home)
    fill(journal, 3)
    os.close(journal.fd)
    [(_, path)] = journal._files()
    data = open(path, "rb").read().replace(b'"outcome":"ok","commandId":"cmd-000000000002"',
                                           b'"outcome":"OK","commandId":"cmd-000000000002"')
    with open(path, "wb") as fh:
        fh.write(data)
    again = audit.Journal(home)
    problems = again.verify()["problems"]
    assert any(p["reason"] == "entries_missing" and p["cause"] == "tail_changed" for p in problems), problems


def test_an_unwritten_line_is_kept_and_blocks_the_next_command_until_written(home, monkeypatch):
    journal = audit.Journal(home)
    fill(journal, 2)
    real_write = os.write
    failing = {"on": True}

    def write(fd, data):
        if failing["on"] and fd == journal.fd:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(audit.os, "write", write)
    fill(journal, 1)  # the reply was decided: append never raises, the line stays pending
    assert len(journal.pending) == 1
    with pytest.raises(BPError) as refused:
        journal.ready()
    assert refused.value.code == "audit_unavailable" and refused.value.context["reason"] == "storage_full"
    failing["on"] = False
    journal.ready()  # the pending line is written first
    assert not journal.pending and journal.verify()["verified"] is True
    [(_, path)] = journal._files()
    assert seqs(path) == [1, 2, 3]


def test_a_journal_that_cannot_start_a_new_file_refuses_and_a_deleted_one_is_replaced(home):
    journal = audit.Journal(home)
    fill(journal, 2)
    directory = os.path.join(home, audit.DIR_NAME)
    [(_, first)] = journal._files()
    os.unlink(first)
    journal.ready()  # deleted: a new file, whose first line records the gap
    [(_, second)] = journal._files()
    assert second != first and json.loads(open(second, "rb").readline())["reason"] == "file_deleted"
    # The whole directory gone and a plain file in its place: nowhere to write, so refused.
    import shutil

    shutil.rmtree(directory)
    with open(directory, "w") as fh:
        fh.write("not a directory")
    with pytest.raises(BPError) as refused:
        journal.ready()
    assert refused.value.code == "audit_unavailable"
    assert refused.value.remediation["code"] == "fix_audit_journal"


# --- every write failure refuses before dispatch (issue 39 item 3) ----------------------------------

def test_an_immutable_journal_file_refuses_before_dispatch_and_leaves_no_line(home):
    journal = audit.Journal(home)
    fill(journal, 2)
    [(_, path)] = journal._files()
    before = open(path, "rb").read()
    tmpfs.chattr("+i", path)
    try:
        with pytest.raises(BPError) as refused:
            journal.ready()  # before: ready() passed and the command ran; its line failed after it
        assert refused.value.code == "audit_unavailable" and refused.value.context["reason"] == "write_failed"
        assert open(path, "rb").read() == before
    finally:
        tmpfs.chattr("-i", path)
    journal.ready()
    fill(journal, 1)
    assert seqs(path) == [1, 2, 3] and journal.verify()["verified"] is True


def test_an_immutable_head_record_refuses_before_dispatch(home):
    journal = audit.Journal(home)
    fill(journal, 1)
    head = os.path.join(home, audit.DIR_NAME, audit.HEAD_NAME)
    tmpfs.chattr("+i", head)
    try:
        with pytest.raises(BPError) as refused:
            journal.ready()
        assert refused.value.context["reason"] == "write_failed"
    finally:
        tmpfs.chattr("-i", head)
    journal.ready()


def test_an_immutable_folder_refuses_the_command_whose_line_needs_a_new_file(home):
    journal = audit.Journal(home, max_file_bytes=2 * audit.MAX_LINE)
    fill(journal, 1)
    directory = os.path.join(home, audit.DIR_NAME)
    journal.ready()  # room in the file: the line is written to the open file, no new file needed
    fill(journal, 20)  # rotated while the folder accepted new files
    tmpfs.chattr("+i", directory)
    try:
        refusals = 0
        for _ in range(30):
            try:
                journal.ready()
            except BPError as exc:
                assert exc.code == "audit_unavailable"
                refusals += 1
                break
            fill(journal, 1)
        assert refusals == 1 and not journal.pending  # refused before a line had nowhere to go
    finally:
        tmpfs.chattr("-i", directory)
    journal.ready()
    assert journal.verify()["verified"] is True


@pytest.mark.parametrize("code", [errno.EIO, errno.EROFS, errno.EPERM, errno.ENOSPC])
def test_any_error_of_the_probe_write_refuses(home, monkeypatch, code):
    """A fault hook where the kernel cannot be made to fail on demand (EIO): the write the probe
    makes fails, the command is refused, and nothing of the probe stays in the file."""
    journal = audit.Journal(home)
    fill(journal, 2)
    [(_, path)] = journal._files()
    before = open(path, "rb").read()
    real_write = os.write

    def write(fd, data):
        if fd == journal.fd:
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    monkeypatch.setattr(audit.os, "write", write)
    with pytest.raises(BPError) as refused:
        journal.ready()
    expected = "storage_full" if code == errno.ENOSPC else "write_failed"
    assert refused.value.code == "audit_unavailable" and refused.value.context["reason"] == expected
    monkeypatch.setattr(audit.os, "write", real_write)
    assert open(path, "rb").read() == before
    journal.ready()
    assert open(path, "rb").read() == before  # the probe's byte is cut off again


def test_an_audit_folder_replaced_by_a_symlink_refuses(home, tmp_path_factory):
    journal = audit.Journal(home)
    fill(journal, 1)
    directory = os.path.join(home, audit.DIR_NAME)
    elsewhere = str(tmp_path_factory.mktemp("elsewhere"))
    os.chmod(elsewhere, 0o700)
    import shutil

    shutil.rmtree(directory)
    os.symlink(elsewhere, directory)
    with pytest.raises(BPError) as refused:
        journal.ready()
    assert refused.value.code == "audit_unavailable"
    assert os.listdir(elsewhere) == []  # nothing written through the link
