"""The broker locator and the startup lock: small private JSON claims on disk.

Both are written complete-before-visible (rule 1) and reclaimed only when pid + process start
time prove the owner dead, re-checking that the file is still the one judged stale (rule 2).
"""

import fcntl
import json
import os
import time
import uuid

from bp import identity, paths
from bp.errors import BPError

TYPE_CHECKING = False  # the CLI reads the locator: typing is the checker's only
if TYPE_CHECKING:
    from typing import Any

LOCATOR_SCHEMA = 1
LOCK_SCHEMA = 1


def _load(path: "str") -> "tuple[dict[str, Any] | None, tuple[int, int, int] | None]":
    """(record, file identity) or (None, None). Unreadable/unsafe files raise; a file that was
    read but is not our JSON is corruption and reported as such."""
    ident = paths.file_identity(path)
    raw = paths.read_private_file(path)
    if raw is None:
        return None, None
    try:
        record = json.loads(raw)
    except ValueError:
        record = None
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return {"corrupt": True}, ident
    return record, ident


# --- locator ---------------------------------------------------------------------------------

def locator_path(home_dir):
    return os.path.join(home_dir, paths.LOCATOR_NAME)


def read_locator(home_dir: "str") -> "tuple[dict[str, Any] | None, tuple[int, int, int] | None]":
    return _load(locator_path(home_dir))


def write_locator(home_dir, record):
    paths.replace_private_file(locator_path(home_dir), json.dumps(record, indent=1).encode())


def remove_locator_if_mine(home_dir, pid, start_time):
    record, ident = read_locator(home_dir)
    if record and record.get("pid") == pid and record.get("startTime") == start_time:
        paths.unlink_if_same(locator_path(home_dir), ident)


# --- startup lock ----------------------------------------------------------------------------

class StartupLock:
    """Held by the one CLI that checks for and starts the broker. Context manager.

    Besides its JSON claim, the holder keeps an flock on the file, taken before the file is
    published, so "no process holds it" is the kernel's word: a claim nobody holds is reclaimed
    at once when it is corrupt (no writer of ours ever publishes a partial one), and a readable
    one when its pid + start time prove the owner gone (older writers hold no flock)."""

    def __init__(self, home_dir, wait_s):
        self.path = os.path.join(home_dir, paths.STARTUP_LOCK_NAME)
        self.wait_s = wait_s
        self.token = uuid.uuid4().hex
        self.held = False
        self._fd = None

    def __enter__(self):
        me = identity.own_identity()
        body = json.dumps({"schemaVersion": LOCK_SCHEMA, "pid": me["pid"], "startTime": me["startTime"],
                           "token": self.token, "createdAt": int(time.time() * 1000)}).encode()
        deadline = time.monotonic() + self.wait_s
        while True:
            if self._publish(body):
                self.held = True
                return self
            self._reclaim_if_dead()
            if time.monotonic() >= deadline:
                raise BPError("browser_disconnected", "Another Browser Pilot process is starting the service and did not finish in time.",
                              context={"lock": self.path})
            time.sleep(0.02)

    def _publish(self, body):
        tmp = paths._write_temp(os.path.dirname(self.path), body)
        try:
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            fcntl.flock(fd, fcntl.LOCK_EX)  # a fresh private file: nobody else can hold it
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                os.close(fd)
                return False
            self._fd = fd
            return True
        finally:
            paths._unlink_quiet(tmp)

    def _reclaim_if_dead(self):
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return  # gone (next try publishes) or not a plain file (the writer refuses it below)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # its holder is alive
            record, ident = _load(self.path)
            if record is None or paths.file_identity(self.path) != ident or os.fstat(fd).st_ino != (ident or (0, 0))[1]:
                return  # changed under us: judge it again on the next try
            if record.get("corrupt") or not identity.is_alive(record["pid"], record.get("startTime")):
                paths.unlink_if_same(self.path, ident)
        finally:
            os.close(fd)

    def __exit__(self, *exc):
        if self.held:
            record, ident = _load(self.path)
            if record and record.get("token") == self.token:
                paths.unlink_if_same(self.path, ident)
            self.held = False
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        return False
