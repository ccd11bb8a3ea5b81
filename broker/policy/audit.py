"""The audit journal: one JSON line per audited command, accepted or denied, under <home>/audit/.

A line holds the time, the client key, the operation and its capability, the target's origin
(never a full URL, typed text, values, headers, cookies or eval source), the outcome code, the
command id, a sequence number and the SHA-256 of the previous line, so an edited, removed or
cut line breaks the chain (`bp audit --verify`). Files are 0600 in a 0700 directory, appended
with one write() per line and never fsynced on the hot path: a broker crash keeps every line
whose write returned (the page cache survives the process), and the next broker cuts a partial
last line off before it appends. Bounded: a file rotates at MAX_FILE_BYTES and the oldest files
beyond MAX_FILES go; a cursor older than what is kept answers cursor_expired.

Fails closed (docs/policy.md, "The audit journal"): before an audited command is dispatched,
`ready()` checks that its line can be written — the file is still the one the journal holds
open (a deleted or replaced file starts a new one whose first line records the gap), no earlier
line is still unwritten, the file system has room, and a write to the file and to the head
record succeeds (_probe: an immutable file or folder, a read-only or failing file system) — and
refuses with audit_unavailable otherwise. A head record beside the files (HEAD_NAME: the last seq and hash, and the seq range
of every retained file) lets `--verify` name older files that went missing and a tail cut off
while no service ran.
"""

import errno
import hashlib
import json
import logging
import os
import re
import threading
import time
from typing import Any

from bp import outputs, paths
from bp.errors import BPError, invalid_argument

log = logging.getLogger("broker.audit")

DIR_NAME = "audit"
HEAD_NAME = "head.json"
HEAD_BYTES = 2048  # the head record is rewritten in place, padded to this size (one pwrite)
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 8
MAX_LINE = 4096
MAX_PENDING = 64  # lines whose write failed, kept to be written before the next audited command
RESERVE_BYTES = 64 * 1024  # free space the file system must have before a command is dispatched
GENESIS = "0" * 64
_NAME_RE = re.compile(r"^audit-([0-9]{6})\.jsonl$")


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def file_name(number: int) -> str:
    return f"audit-{number:06d}.jsonl"


def unavailable(reason: str, path: str, **context: Any) -> BPError:
    """The stable refusal of an audited command whose line cannot be written."""
    from bp.errors import remediation

    return BPError("audit_unavailable", "The audit journal cannot be written, so the command was not run.",
                   context={"reason": reason, "path": path, **context}, remediation=remediation("fix_audit_journal"))


class Journal:
    def __init__(self, home_dir: str, max_file_bytes: int = MAX_FILE_BYTES, max_files: int = MAX_FILES,
                 reserve_bytes: int = RESERVE_BYTES):
        self.dir = os.path.join(home_dir, DIR_NAME)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.reserve_bytes = reserve_bytes
        self.lock = threading.Lock()
        self.fd: int | None = None  # the open file's, from _open on
        # (st_dev, st_ino) of the open file: a deleted/replaced file is noticed
        self.identity: tuple[int, int] | None = None
        self.head_fd: int | None = None  # the head record's, from _open on
        self.file_no = 0
        self.size = 0
        self.seq = 0
        self.prev = GENESIS
        self.index: dict[int, list[int]] = {}  # file number -> [first seq, last seq] of every retained file
        self.pending: list[tuple[int, bytes]] = []  # encoded lines whose write failed (disk full), in order
        self.recovered = 0  # bytes of a partial last line cut off at start (a crash mid-write)
        self._open()

    # --- files -----------------------------------------------------------------------------------

    def _files(self) -> list[tuple[int, str]]:
        """[(number, path)] oldest first."""
        found = []
        for name in os.listdir(self.dir):
            m = _NAME_RE.match(name)
            if m:
                found.append((int(m.group(1)), os.path.join(self.dir, name)))
        return sorted(found)

    def _path(self, number: int | None = None) -> str:
        return os.path.join(self.dir, file_name(self.file_no if number is None else number))

    def _open(self) -> None:
        paths.ensure_private_dir(self.dir)
        head = read_head(self.dir)
        self.head_fd = self._open_fd(os.path.join(self.dir, HEAD_NAME), append=False)
        files = self._files()
        if head is not None:
            self.index = {int(n): [int(a), int(b)] for n, a, b in head.get("files", [])}
        if files:
            self.file_no, path = files[-1]
            self._resume(path)
        if not files or (head is not None and int(head.get("file", 0)) > self.file_no):
            self._new_file(max([self.file_no, *self.index]) + 1)  # the newest file is gone: never reuse its number
        if head is not None and int(head.get("seq", 0)) == self.seq and head.get("hash") != self.prev:
            self._gap("tail_changed", seq=self.seq)  # the last line was rewritten while no service ran
        elif head is not None and int(head.get("seq", 0)) > self.seq:
            # The tail was cut (or the newest file removed) while no service ran: the next line
            # says which entries are gone, and the numbering goes on after the last one written.
            self._gap("tail_truncated", missing=[self.seq + 1, int(head["seq"])], next_seq=int(head["seq"]))
        elif head is None and files:
            self._gap("head_missing")  # a journal without its head record: the tail cannot be vouched for
        self._write_head()

    def _resume(self, path: str) -> None:
        """Continue the newest file after its last whole line (a partial one is cut off)."""
        fd = self._open_fd(path)
        st = os.fstat(fd)
        data = b""
        if st.st_size:
            os.lseek(fd, max(0, st.st_size - 2 * MAX_LINE), os.SEEK_SET)
            data = os.read(fd, 2 * MAX_LINE + 1)
        whole = data.rfind(b"\n") + 1
        if data and whole < len(data):
            self.recovered = len(data) - whole
            os.ftruncate(fd, st.st_size - self.recovered)
            log.warning("the audit journal ended in a partial line (%d bytes); cut off", self.recovered)
        self.fd, self.size, self.identity = fd, st.st_size - self.recovered, (st.st_dev, st.st_ino)
        last = data[:whole].rstrip(b"\n").rsplit(b"\n", 1)[-1] if whole else b""
        if not last:
            last = self._last_line_before(self.file_no)
        if last:
            try:
                self.seq = int(json.loads(last)["seq"])
            except (ValueError, KeyError, TypeError):
                self.seq = 0
            self.prev = line_hash(last)
        if self.file_no not in self.index and self.size:
            first = _first_seq(path)
            if first is not None:
                self.index[self.file_no] = [first, self.seq]

    def _last_line_before(self, number: int) -> bytes:
        for n, path in reversed(self._files()):
            if n < number:
                lines = _read_lines(path)
                if lines:
                    return lines[-1]
        return b""

    def _open_fd(self, path: str, append: bool = True) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_APPEND if append else 0)
        fd = os.open(path, flags, 0o600)
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            os.close(fd)
            from bp.errors import unsafe_state

            raise unsafe_state(path, "its mode is not owner-only (0600)")
        return fd

    def _new_file(self, number: int) -> None:
        paths.ensure_private_dir(self.dir)  # a removed audit directory comes back
        fd = self._open_fd(self._path(number))
        if self.fd is not None:
            os.close(self.fd)
        st = os.fstat(fd)
        self.fd, self.file_no, self.size, self.identity = fd, number, st.st_size, (st.st_dev, st.st_ino)
        files = self._files()
        for n, old in files[:max(0, len(files) - self.max_files)]:
            try:
                os.unlink(old)
            except OSError:
                pass
            self.index.pop(n, None)  # gone by retention, not by someone's hand
        for n in [n for n in self.index if n <= number - self.max_files]:
            del self.index[n]

    def _gap(self, reason: str, *, missing: list[int] | None = None, next_seq: int | None = None,
             **detail: Any) -> None:
        """A line recording that entries may be gone (and which, when known); it is chained like
        any other, has no key (so no Agent's `bp audit` lists it) and `--verify` reports it."""
        entry = {"event": "gap", "reason": reason, **detail}
        if missing is not None:
            entry["missing"] = missing
        if next_seq is not None:
            self.seq = next_seq
        log.warning("audit journal gap: %s", reason)
        self._write_entry(entry)

    def _check_file(self) -> None:
        """Start a new file (recording the gap) when ours was deleted or replaced behind us."""
        path = self._path()
        try:
            st = os.stat(path, follow_symlinks=False)
            current = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            current = None
        if current != self.identity:
            reason = "file_deleted" if current is None else "file_replaced"
            old = self.file_no
            self._new_file(self.file_no + 1)
            self._gap(reason, file=file_name(old))
        self._check_head()

    def _check_head(self) -> None:
        """A head record deleted or replaced behind us is written afresh (the files keep the chain)."""
        path = os.path.join(self.dir, HEAD_NAME)
        assert self.head_fd is not None  # opened by _open
        try:
            st = os.stat(path, follow_symlinks=False)
            fresh = os.fstat(self.head_fd)
            if (st.st_dev, st.st_ino) == (fresh.st_dev, fresh.st_ino):
                return
        except FileNotFoundError:
            pass
        fd = self._open_fd(path, append=False)
        os.close(self.head_fd)
        self.head_fd = fd
        self._write_head()

    def _write_entry(self, entry: dict[str, Any], flush: bool = True) -> None:
        self.seq += 1
        entry = {"seq": self.seq, "time": int(time.time() * 1000), **entry, "prev": self.prev}
        line = json.dumps(entry, separators=(",", ":"), ensure_ascii=True).encode()[:MAX_LINE - 1]
        self.prev = line_hash(line)
        self.pending.append((self.seq, line))
        if flush:
            self._flush()

    def _rotate_for(self, length: int) -> None:
        """Start the next file when `length` more bytes would not fit in this non-empty one."""
        if self.size and self.size + length > self.max_file_bytes:
            self._new_file(self.file_no + 1)

    def _flush(self) -> None:
        """Write the pending lines in order; raises OSError (and keeps them) if one fails."""
        while self.pending:
            seq, line = self.pending[0]
            self._rotate_for(len(line) + 1)
            data = line + b"\n"
            assert self.fd is not None  # opened by _open, and only ever replaced by another (_new_file)
            try:
                written = os.write(self.fd, data)
            except OSError:
                os.ftruncate(self.fd, self.size)  # no partial line left behind
                raise
            if written != len(data):
                os.ftruncate(self.fd, self.size)
                raise OSError(errno.ENOSPC, "short write to the audit journal")
            self.size += len(data)
            self.index.setdefault(self.file_no, [seq, seq])[1] = seq
            self.pending.pop(0)
            self._write_head()

    def _write_head(self) -> None:
        head = {"seq": self.seq - len(self.pending), "hash": self._prev_before_pending(), "file": self.file_no,
                "files": [[n, a, b] for n, (a, b) in sorted(self.index.items())]}
        data = json.dumps(head, separators=(",", ":")).encode()
        if len(data) >= HEAD_BYTES:
            raise OSError(errno.EFBIG, "audit head record too large")
        assert self.head_fd is not None  # opened by _open
        if os.pwrite(self.head_fd, data.ljust(HEAD_BYTES - 1) + b"\n", 0) != HEAD_BYTES:
            raise OSError(errno.ENOSPC, "short write to the audit head record")

    def _prev_before_pending(self) -> str | None:
        if not self.pending:
            return self.prev
        try:
            return json.loads(self.pending[0][1])["prev"]
        except (ValueError, KeyError):
            return None

    # --- writing ---------------------------------------------------------------------------------

    def ready(self) -> None:
        """Before an audited command is dispatched: raise audit_unavailable unless its line can be
        written (see the module doc)."""
        with self.lock:
            try:
                self._check_file()
                self._flush()
                free = os.statvfs(self.dir)
                if free.f_bavail * free.f_frsize < self.reserve_bytes:
                    raise OSError(errno.ENOSPC, "no room for the audit journal")
                self._probe()
            except BPError as exc:
                raise unavailable("unsafe_state", self.dir, detail=exc.code) from None
            except OSError as exc:
                reason = "storage_full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "write_failed"
                log.error("audit journal unavailable: %s (%s)", reason, outputs.errno_name(exc.errno, exc.errno))
                raise unavailable(reason, self.dir, pendingLines=len(self.pending)) from None

    def _probe(self) -> None:
        """Prove, before dispatch, that the command's line can be written where it will go: a
        file that needs rotating is rotated now (a folder that refuses a new file refuses the
        command, not its line); one byte is written to the journal and cut off again, and the head
        record rewritten. Whatever the kernel says (EPERM of an immutable file or folder, EROFS,
        EIO, ENOSPC) raises here, before anything reaches the browser, not after the command ran.
        A crash between the write and the cut leaves an empty line, which readers skip."""
        self._rotate_for(MAX_LINE + 1)
        assert self.fd is not None  # opened by _open
        if os.write(self.fd, b"\n") != 1:
            raise OSError(errno.ENOSPC, "short write to the audit journal")
        os.ftruncate(self.fd, self.size)
        self._write_head()

    def append(self, *, key: str, operation: str, capability: str, origin: str | None, outcome: str,
               command_id: str) -> None:
        """One line; never raises: the command's reply is already decided. A line that cannot be
        written stays pending, and the next audited command is refused until it is (ready())."""
        try:
            with self.lock:
                if len(self.pending) >= MAX_PENDING:
                    log.error("audit journal: %d lines unwritten; dropping the oldest", len(self.pending))
                    self.pending.pop(0)
                try:
                    self._check_file()
                    usable = True
                except (OSError, BPError):
                    usable = False  # kept pending: written by ready() later, or the next command is refused there
                self._write_entry({"key": key, "operation": operation, "capability": capability, "origin": origin,
                                   "outcome": outcome, "commandId": command_id}, flush=usable)
        except Exception as exc:
            log.error("could not append to the audit journal (%s); the line is kept pending",
                      outputs.errno_name(getattr(exc, "errno", None), type(exc).__name__))

    # --- reading ---------------------------------------------------------------------------------

    def _all_lines(self) -> list[bytes]:
        out = []
        for _, path in self._files():
            out.extend(_read_lines(path))
        return out

    def entries(self, key: str, limit: int, after: int | None) -> dict[str, Any]:
        """The caller's own entries after a cursor (a seq), oldest first, at most `limit`."""
        with self.lock:
            lines = self._all_lines()
        rows, first = [], None
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("seq"), int):
                continue
            if first is None:
                first = entry["seq"]
            if entry.get("key") != key or (after is not None and entry["seq"] <= after):
                continue
            rows.append(entry)
        if after is not None and first is not None and after < first - 1:
            raise BPError("cursor_expired", "That audit cursor is older than the retained journal.",
                          context={"after": f"audit-{after}", "oldest": f"audit-{first}"})
        truncated = len(rows) > limit
        rows = rows[:limit] if after is not None else rows[-limit:]
        for row in rows:
            row.pop("prev", None)
            row["cursor"] = f"audit-{row['seq']}"
        return {"entries": rows, "truncated": truncated,
                "nextCursor": rows[-1]["cursor"] if rows else (f"audit-{after}" if after is not None else None)}

    def verify(self) -> dict[str, Any]:
        """Walk the chain: each line must parse, number one more than the last and name the
        previous line's hash; the last must be the line this broker wrote last (and the one the
        head record names); every file the head record lists must still be there; a gap line is
        reported with what it says is missing."""
        with self.lock:
            files = self._files()
            per_file = [(n, _read_lines(path)) for n, path in files]
            head_seq, head = self.seq - len(self.pending), self._prev_before_pending()
            index = dict(self.index)
            pending = len(self.pending)
        on_disk = read_head(self.dir)
        problems, prev, seq, count, first = [], None, None, 0, None
        present = {n for n, _ in files}
        for n, (a, b) in sorted(index.items()):
            if n not in present:
                problems.append({"reason": "file_missing", "file": file_name(n), "missing": [a, b], "entries": b - a + 1})
        numbers = sorted(present)
        for lo, hi in zip(numbers, numbers[1:]):
            for n in range(lo + 1, hi):
                if n not in index:
                    problems.append({"reason": "file_missing", "file": file_name(n)})
        for _n, lines in per_file:
            for line in lines:
                count += 1
                try:
                    entry = json.loads(line)
                    number, named = int(entry["seq"]), entry["prev"]
                except (ValueError, KeyError, TypeError):
                    problems.append({"line": count, "reason": "unreadable", "after": seq})
                    prev = line_hash(line)
                    continue
                if first is None:
                    first = number
                if prev is not None and named != prev:
                    problems.append({"line": count, "seq": number, "reason": "chain_broken"})
                if entry.get("event") == "gap":
                    problem = {"reason": "entries_missing", "cause": entry.get("reason"), "line": count, "seq": number}
                    if entry.get("file"):
                        problem["lostFile"] = entry["file"]
                    if entry.get("missing"):
                        problem["missing"] = entry["missing"]
                    problems.append(problem)
                    if entry.get("missing"):
                        seq = int(entry["missing"][1])  # the numbering goes on after the missing ones
                if seq is not None and number != seq + 1:
                    problems.append({"line": count, "seq": number, "reason": "sequence_gap", "expected": seq + 1})
                prev, seq = line_hash(line), number
        if head_seq and (seq != head_seq or prev != head):
            problems.append({"reason": "head_mismatch", "seq": seq, "expectedSeq": head_seq})
        if on_disk is not None and int(on_disk.get("seq", 0)) != head_seq:
            problems.append({"reason": "head_record_mismatch", "seq": on_disk.get("seq"), "expectedSeq": head_seq})
        if pending:
            problems.append({"reason": "lines_unwritten", "entries": pending})
        return {"verified": not problems, "lines": count, "problems": problems[:64], "first": first, "last": seq}


def read_head(directory: str) -> dict[str, Any] | None:
    """The head record beside the journal, or None (absent or unreadable)."""
    try:
        raw = paths.read_private_file(os.path.join(directory, HEAD_NAME), max_bytes=HEAD_BYTES)
        head = json.loads(raw) if raw and raw.strip() else None
    except (BPError, OSError, ValueError):
        return None
    return head if isinstance(head, dict) else None


def _first_seq(path: str) -> int | None:
    lines = _read_lines(path)
    try:
        return int(json.loads(lines[0])["seq"]) if lines else None
    except (ValueError, KeyError, TypeError):
        return None


def _read_lines(path: str) -> list[bytes]:
    """The lines of one file, a partial last line included (so a cut line is seen by verify)."""
    try:
        raw = paths.read_private_file(path, max_bytes=MAX_FILE_BYTES + 2 * MAX_LINE)
    except BPError:
        raise
    if not raw:
        return []
    return [line for line in raw.split(b"\n") if line]


def cursor_of(value: Any) -> int | None:
    if value is None:
        return None
    m = re.match(r"^(?:audit-)?([0-9]{1,12})$", str(value))
    if not m:
        raise invalid_argument("after", "Give an audit cursor like audit-12 (from 'bp audit').")
    return int(m.group(1))
