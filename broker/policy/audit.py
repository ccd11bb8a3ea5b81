"""The audit journal: one JSON line per mutating command, accepted or denied, under <home>/audit/.

A line holds the time, the client key, the operation and its capability, the target's origin
(never a full URL, typed text, values, headers, cookies or eval source), the outcome code, the
command id, a sequence number and the SHA-256 of the previous line, so an edited, removed or
cut line breaks the chain (`bp audit --verify`). Files are 0600 in a 0700 directory, appended
with one write() per line and never fsynced on the hot path: a broker crash keeps every line
whose write returned (the page cache survives the process), and the next broker cuts a partial
last line off before it appends. Bounded: a file rotates at MAX_FILE_BYTES and the oldest files
beyond MAX_FILES go; a cursor older than what is kept answers cursor_expired.
"""

import hashlib
import json
import logging
import os
import re
import threading
import time

from bp import paths
from bp.errors import BPError, invalid_argument

log = logging.getLogger("broker.audit")

DIR_NAME = "audit"
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 8
MAX_LINE = 4096
GENESIS = "0" * 64
_NAME_RE = re.compile(r"^audit-([0-9]{6})\.jsonl$")


def line_hash(line):
    return hashlib.sha256(line).hexdigest()


class Journal:
    def __init__(self, home_dir, max_file_bytes=MAX_FILE_BYTES, max_files=MAX_FILES):
        self.dir = os.path.join(home_dir, DIR_NAME)
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.lock = threading.Lock()
        self.fd = None
        self.file_no = 0
        self.size = 0
        self.seq = 0
        self.prev = GENESIS
        self.recovered = 0  # bytes of a partial last line cut off at start (a crash mid-write)
        self._open()

    # --- files -----------------------------------------------------------------------------------

    def _files(self):
        """[(number, path)] oldest first."""
        found = []
        for name in os.listdir(self.dir):
            m = _NAME_RE.match(name)
            if m:
                found.append((int(m.group(1)), os.path.join(self.dir, name)))
        return sorted(found)

    def _open(self):
        paths.ensure_private_dir(self.dir)
        files = self._files()
        if files:
            self.file_no, path = files[-1]
            self._resume(path)
        else:
            self._new_file(1)

    def _resume(self, path):
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
        self.fd, self.size = fd, st.st_size - self.recovered
        last = data[:whole].rstrip(b"\n").rsplit(b"\n", 1)[-1] if whole else b""
        if not last:
            last = self._last_line_before(self.file_no)
        if last:
            try:
                self.seq = int(json.loads(last)["seq"])
            except (ValueError, KeyError, TypeError):
                self.seq = 0
            self.prev = line_hash(last)

    def _last_line_before(self, number):
        for n, path in reversed(self._files()):
            if n < number:
                lines = _read_lines(path)
                if lines:
                    return lines[-1]
        return b""

    def _open_fd(self, path):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            os.close(fd)
            from bp.errors import unsafe_state

            raise unsafe_state(path, "its mode is not owner-only (0600)")
        return fd

    def _new_file(self, number):
        if self.fd is not None:
            os.close(self.fd)
        self.file_no = number
        self.fd = self._open_fd(os.path.join(self.dir, f"audit-{number:06d}.jsonl"))
        self.size = os.fstat(self.fd).st_size
        files = self._files()
        for _, old in files[:max(0, len(files) - self.max_files)]:
            try:
                os.unlink(old)
            except OSError:
                pass

    # --- writing ---------------------------------------------------------------------------------

    def append(self, *, key, operation, capability, origin, outcome, command_id):
        """One line; never raises (a journal that cannot be written is logged, not fatal to the
        command whose reply is already decided)."""
        try:
            with self.lock:
                self.seq += 1
                entry = {"seq": self.seq, "time": int(time.time() * 1000), "key": key, "operation": operation,
                         "capability": capability, "origin": origin, "outcome": outcome,
                         "commandId": command_id, "prev": self.prev}
                line = json.dumps(entry, separators=(",", ":"), ensure_ascii=True).encode()[:MAX_LINE - 1]
                if self.size + len(line) + 1 > self.max_file_bytes and self.size:
                    self._new_file(self.file_no + 1)
                os.write(self.fd, line + b"\n")
                self.size += len(line) + 1
                self.prev = line_hash(line)
        except Exception:
            log.exception("could not append to the audit journal")

    # --- reading ---------------------------------------------------------------------------------

    def _all_lines(self):
        out = []
        for _, path in self._files():
            out.extend(_read_lines(path))
        return out

    def entries(self, key, limit, after):
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

    def verify(self):
        """Walk the chain: each line must parse, number one more than the last and name the
        previous line's hash; the last must be the line this broker wrote last."""
        with self.lock:
            lines = self._all_lines()
            head_seq, head = self.seq, self.prev
        problems, prev, seq = [], None, None
        for index, line in enumerate(lines):
            try:
                entry = json.loads(line)
                number, named = int(entry["seq"]), entry["prev"]
            except (ValueError, KeyError, TypeError):
                problems.append({"line": index + 1, "reason": "unreadable", "after": seq})
                prev = line_hash(line)
                continue
            if prev is not None and named != prev:
                problems.append({"line": index + 1, "seq": number, "reason": "chain_broken"})
            if seq is not None and number != seq + 1:
                problems.append({"line": index + 1, "seq": number, "reason": "sequence_gap", "expected": seq + 1})
            prev, seq = line_hash(line), number
        if head_seq and (seq != head_seq or prev != head):
            problems.append({"reason": "head_mismatch", "seq": seq, "expectedSeq": head_seq})
        return {"verified": not problems, "lines": len(lines), "problems": problems[:64],
                "first": json.loads(lines[0]).get("seq") if lines and _parses(lines[0]) else None, "last": seq}


def _parses(line):
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _read_lines(path):
    """The lines of one file, a partial last line included (so a cut line is seen by verify)."""
    try:
        raw = paths.read_private_file(path, max_bytes=MAX_FILE_BYTES + 2 * MAX_LINE)
    except BPError:
        raise
    if not raw:
        return []
    return [line for line in raw.split(b"\n") if line]


def cursor_of(value):
    if value is None:
        return None
    m = re.match(r"^(?:audit-)?([0-9]{1,12})$", str(value))
    if not m:
        raise invalid_argument("after", "Give an audit cursor like audit-12 (from 'bp audit').")
    return int(m.group(1))
