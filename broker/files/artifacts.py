"""Private artifact storage: Browser Pilot's own copies of screenshots, PDFs, uploads and downloads.

Layout: `<home>/artifacts/` (0700), one directory per item named by 16 random bytes (0700), one
file in it (0600): `data`, or for an upload the original base name (Chrome reports that name to
the page). No path is ever derived from an outside id, a GUID or a URL. Everything under the
directory is removed when the store starts (leftovers of a broker that was killed), when the
broker exits, and an Agent's items when it is released (`bp disconnect`, lease expiry) or when
they expire.

Bounds (private settings read when the broker starts, bp/settings.py):
    BROWSER_PILOT_ARTIFACT_ITEM_MAX_BYTES   one item             default  64 MiB
    BROWSER_PILOT_ARTIFACT_KEY_MAX_BYTES    one Agent key        default 256 MiB
    BROWSER_PILOT_ARTIFACT_TOTAL_MAX_BYTES  the whole broker     default   1 GiB
    BROWSER_PILOT_ARTIFACT_TTL_MS           an item's lifetime   default  30 minutes
A bound that would be passed is `quota_exceeded` and leaves nothing behind; it concerns only
Browser Pilot's copy (a download in Chrome's directory is never touched).
"""

import logging
import os
import shutil
import stat
import threading
import time

from bp import paths, settings
from bp.errors import BPError

log = logging.getLogger("broker.artifacts")



MAX_ITEMS_PER_KEY = 256
SWEEP_S = 2.0
CHUNK = 1024 * 1024
DIR_NAME = "artifacts"


class Artifact:
    __slots__ = ("id", "key", "agent", "kind", "mime", "size", "name", "created_at", "expires_at", "dir", "path",
                 "meta", "evicted")

    def __init__(self, key, agent, kind, mime, name, directory):
        self.id = "artifact-" + os.urandom(8).hex()
        self.key = key
        self.agent = agent  # the Agent object: a new Agent for the same key does not inherit it
        self.kind = kind
        self.mime = mime
        self.size = 0
        self.name = name
        self.created_at = time.time()
        self.expires_at = self.created_at + settings.current().artifact_ttl_s
        self.dir = directory
        self.path = os.path.join(directory, name)
        self.meta = {}
        self.evicted = False  # dropped to make room for the key's newer items (MAX_ITEMS_PER_KEY)

    def expired(self, now=None):
        return (time.time() if now is None else now) >= self.expires_at

    def chunks(self):
        """The stored bytes, read back (O_NOFOLLOW; the file must still be ours and regular)."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size != self.size:
                raise BPError("artifact_not_found", "Browser Pilot's copy is no longer intact.")
            while True:
                chunk = os.read(fd, CHUNK)
                if not chunk:
                    return
                yield chunk
        finally:
            os.close(fd)


def quota_error(limit, max_bytes, size):
    return BPError("quota_exceeded", f"Browser Pilot's private storage is full for this ({limit} limit {max_bytes} bytes); "
                   "only Browser Pilot's copy is affected.",
                   context={"limit": limit, "maxBytes": max_bytes, "sizeBytes": size})


def wipe(root):
    """Remove everything inside root (never root itself, never through a link)."""
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return
    for name in names:
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)  # fd-based on Linux: does not follow links inside
            else:
                os.unlink(path)  # a stray file or link: the link itself, not its target
        except OSError:
            log.warning("could not remove an artifact leftover")


class Store:
    def __init__(self, home_dir, agents):
        self.root = os.path.join(home_dir, DIR_NAME)
        paths.ensure_private_dir(self.root)
        wipe(self.root)
        self.agents = agents
        self.lock = threading.RLock()
        self.items = {}  # id -> Artifact
        self.used = 0  # bytes reserved or stored, all keys
        self.used_by_key = {}
        self._closed = threading.Event()
        self._sweeper = threading.Thread(target=self._sweep_loop, name="artifact-sweeper", daemon=True)
        self._sweeper.start()

    # --- quota -------------------------------------------------------------------------------

    def _reserve(self, key, size):
        bounds = settings.current()
        if size > bounds.artifact_item_max_bytes:
            raise quota_error("item", bounds.artifact_item_max_bytes, size)
        with self.lock:
            self._sweep_locked()
            if self.used_by_key.get(key, 0) + size > bounds.artifact_key_max_bytes:
                raise quota_error("key", bounds.artifact_key_max_bytes, size)
            if self.used + size > bounds.artifact_total_max_bytes:
                raise quota_error("total", bounds.artifact_total_max_bytes, size)
            self.used += size
            self.used_by_key[key] = self.used_by_key.get(key, 0) + size

    def _unreserve(self, key, size):
        with self.lock:
            self.used -= size
            left = self.used_by_key.get(key, 0) - size
            if left > 0:
                self.used_by_key[key] = left
            else:
                self.used_by_key.pop(key, None)

    # --- creating ----------------------------------------------------------------------------

    def _new_item(self, agent, kind, mime, name):
        directory = os.path.join(self.root, os.urandom(16).hex())
        os.mkdir(directory, 0o700)
        return Artifact(agent.key, agent, kind, mime, name, directory)

    def _publish(self, item):
        with self.lock:
            mine = [a for a in self.items.values() if a.key == item.key]
            if len(mine) >= MAX_ITEMS_PER_KEY:  # the oldest of this key make room
                for old in sorted(mine, key=lambda a: a.created_at)[:len(mine) - MAX_ITEMS_PER_KEY + 1]:
                    old.evicted = True  # its download row says so (broker/files/downloads.py)
                    self._drop_locked(old)
            self.items[item.id] = item
        return item

    def put_bytes(self, agent, kind, data, mime, meta=None):
        """Store bytes produced in the broker (a screenshot, a PDF)."""
        self._reserve(agent.key, len(data))
        item = None
        try:
            item = self._new_item(agent, kind, mime, "data")
            fd = os.open(item.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            item.size = len(data)
            item.meta = dict(meta or {})
            return self._publish(item)
        except BaseException as exc:
            self._discard(item)
            self._unreserve(agent.key, len(data))
            _raise_if_full(exc)
            raise

    def copy_file(self, agent, kind, source, mime, name, meta=None, refuse=None):
        """Copy a regular file into the store: opened without following a final symlink, checked
        regular by fstat, read no further than the size it had when opened. `refuse(reason)`
        builds the error for a source that is unusable (the caller's own wording: an upload must
        never name its path)."""
        refuse = refuse or (lambda reason: BPError("artifact_not_found", "The file cannot be copied.",
                                                    context={"reason": reason}))
        try:
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            raise refuse("not_found") from None
        except OSError as exc:
            import errno

            raise refuse("symlink" if exc.errno == errno.ELOOP else "not_readable") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise refuse("not_regular_file")
            size = st.st_size
            self._reserve(agent.key, size)
            item = None
            try:
                item = self._new_item(agent, kind, mime, name)
                out = os.open(item.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                copied = 0
                try:
                    while copied <= size:
                        chunk = os.read(fd, min(CHUNK, size + 1 - copied))
                        if not chunk:
                            break
                        copied += len(chunk)
                        if copied > size:
                            break
                        view = memoryview(chunk)
                        while view:
                            view = view[os.write(out, view):]
                finally:
                    os.close(out)
                if copied != size:
                    raise refuse("changed_while_copied")
                item.size = size
                item.meta = dict(meta or {})
                return self._publish(item)
            except BaseException as exc:
                self._discard(item)
                self._unreserve(agent.key, size)
                _raise_if_full(exc)
                raise
        finally:
            os.close(fd)

    def _discard(self, item):
        if item is not None:
            shutil.rmtree(item.dir, ignore_errors=True)

    # --- reading -----------------------------------------------------------------------------

    def get(self, agent, artifact_id):
        """The Agent's live artifact, or artifact_expired / artifact_not_found."""
        with self.lock:
            self._sweep_locked()
            item = self.items.get(artifact_id)
        if item is None or item.agent is not agent:
            raise BPError("artifact_not_found", "No such file in this Agent's storage.", context={"field": "selector"})
        return item

    # --- releasing ---------------------------------------------------------------------------

    def _drop_locked(self, item):
        if self.items.pop(item.id, None) is not None:
            self._discard(item)
            self.used -= item.size
            left = self.used_by_key.get(item.key, 0) - item.size
            if left > 0:
                self.used_by_key[item.key] = left
            else:
                self.used_by_key.pop(item.key, None)

    def release(self, item):
        with self.lock:
            self._drop_locked(item)

    def release_key(self, key):
        with self.lock:
            for item in [a for a in self.items.values() if a.key == key]:
                self._drop_locked(item)

    def _sweep_locked(self):
        now = time.time()
        for item in list(self.items.values()):
            if item.expired(now) or self.agents.get(item.key) is not item.agent:
                self._drop_locked(item)

    def sweep(self):
        with self.lock:
            self._sweep_locked()

    def _sweep_loop(self):
        while not self._closed.wait(SWEEP_S):
            try:
                self.sweep()
            except Exception:
                log.exception("artifact sweep failed")

    def close(self):
        self._closed.set()
        with self.lock:
            self.items.clear()
            self.used = 0
            self.used_by_key.clear()
            wipe(self.root)


def shutdown(store, home_dir):
    """Broker exit: every copy goes (the directory is wiped even if this broker never used it,
    `store` None: its services were never started)."""
    if store is not None:
        store.close()
        return
    root = os.path.join(home_dir, DIR_NAME)
    try:
        paths.check_private_dir(root, fix_mode=False)
    except (OSError, BPError):
        return
    wipe(root)


def _raise_if_full(exc):
    """A full disk (or disk quota) under the home is storage_full, not internal_error."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        from bp import outputs

        raise outputs.storage_full(exc, "artifacts") from None
