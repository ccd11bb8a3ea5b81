"""Where Browser Pilot keeps its private files, and the rules for touching them.

Rules (engineering rules 1, 3, 4): directories 0700, files and sockets 0600, no symlinked final
components, no foreign owners, nothing group/other-writable. A read failure is never taken for
"absent": only ENOENT means absent. Stdlib only: the CLI uses this on every call.
"""

import errno
import os
import stat
import sys

from bp.errors import invalid_argument, unsafe_state

# sun_path is 108 bytes on Linux (104 on macOS); keep a margin for the NUL and janitor names.
MAX_SOCKET_PATH = 100
METADATA_MAX_BYTES = 16 * 1024

SOCKET_NAME = "broker.sock"
OWNER_LOCK_NAME = "broker.lock"  # flock held by the live broker for its whole life
LOCATOR_NAME = "broker-locator.json"
STARTUP_LOCK_NAME = "startup.lock"
LAUNCHED_NAME = "launched-browser.json"


def home():
    """BROWSER_PILOT_HOME (must be absolute) or ~/.browser-pilot. Not created here."""
    value = os.environ.get("BROWSER_PILOT_HOME")
    if value is not None:
        if not value or not os.path.isabs(value):
            raise invalid_argument("home", "BROWSER_PILOT_HOME must be an absolute path.", value=value[:256])
        return os.path.normpath(value)
    if sys.platform == "win32":  # pragma: no cover - documented, not exercised here
        return os.path.join(os.environ.get("LOCALAPPDATA", os.path.expanduser("~")), "Browser Pilot")
    return os.path.join(os.path.expanduser("~"), ".browser-pilot")


def runtime_dir(home_dir):
    """The directory holding the ipc sockets: the home itself, or a short owner-only fallback
    derived from a hash of the home when socket paths there would be too long."""
    if len(os.path.join(home_dir, "janitor-000000.sock").encode()) <= MAX_SOCKET_PATH:
        return home_dir
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(home_dir)).hexdigest()[:16]
    name = f"browser-pilot-{os.geteuid()}-{digest}"
    for base in (tempfile.gettempdir(), "/tmp"):
        candidate = os.path.join(base, name)
        if len(os.path.join(candidate, "janitor-000000.sock").encode()) <= MAX_SOCKET_PATH:
            return candidate
    raise invalid_argument("home", "No short enough directory for Browser Pilot's sockets; set TMPDIR to a short path.")


def socket_path(home_dir):
    return os.path.join(runtime_dir(home_dir), SOCKET_NAME)


def _refuse_unless_ours(path, st, is_kind, kind, open_bits, open_reason):
    """A state path must be of its kind, ours, and closed to others by `open_bits`."""
    if not is_kind(st.st_mode):
        raise unsafe_state(path, f"it is not {kind}")
    if st.st_uid != os.geteuid():
        raise unsafe_state(path, "it is owned by another user")
    if st.st_mode & open_bits:
        raise unsafe_state(path, open_reason)


def check_private_dir(path, *, fix_mode=True):
    """Verify an existing directory: a real directory (not a symlink), ours, not writable by others.
    Readable-by-others bits on our own directory are tightened to 0700."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise unsafe_state(path, "it is a symbolic link")
    _refuse_unless_ours(path, st, stat.S_ISDIR, "a directory", 0o022, "it is writable by group or others")
    if st.st_mode & 0o077 and fix_mode:
        os.chmod(path, 0o700)  # lstat above proved it is our directory, not a link
    return st


def ensure_private_dir(path):
    """Create (0700) or verify a private directory. Parents are created with default modes."""
    try:
        return check_private_dir(path)
    except FileNotFoundError:
        pass
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass  # a concurrent creator won; verify below
    return check_private_dir(path)


def ensure_home():
    """Resolve and prepare the home and runtime directories; returns (home, runtime)."""
    home_dir = home()
    ensure_private_dir(home_dir)
    run_dir = runtime_dir(home_dir)
    if run_dir != home_dir:
        ensure_private_dir(run_dir)
    return home_dir, run_dir


def read_private_file(path, max_bytes=METADATA_MAX_BYTES):
    """Bytes of a private metadata file, or None when it does not exist.

    Everything else that is wrong (symlink, not regular, foreign owner, open mode, too large,
    I/O error) raises: it is never mistaken for an absent file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise unsafe_state(path, "it is a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        _refuse_unless_ours(path, st, stat.S_ISREG, "a regular file", 0o077, "its mode is not owner-only (0600)")
        if st.st_size > max_bytes:
            raise unsafe_state(path, f"it is larger than {max_bytes} bytes")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:  # grew while we read: count bytes actually read
                raise unsafe_state(path, f"it is larger than {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _write_temp(directory, data):
    import tempfile  # writers only; the CLI's hot path never writes

    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")  # O_EXCL, mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        _unlink_quiet(tmp)
        raise
    return tmp


def replace_private_file(path, data):
    """Write complete-before-visible: private temp file, flushed, then os.replace."""
    tmp = _write_temp(os.path.dirname(path), data)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink_quiet(tmp)
        raise


def create_private_file_exclusive(path, data):
    """Publish a claim only if none exists: temp file then hard link (no replace).
    Returns True when we created it, False when a file already exists."""
    tmp = _write_temp(os.path.dirname(path), data)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    finally:
        _unlink_quiet(tmp)


def _unlink_quiet(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def file_identity(path):
    """(device, inode, mtime_ns) of a path without following a symlink; None if absent."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


def unlink_if_same(path, identity):
    """Unlink only if the file is still the one that was judged stale (rule 2)."""
    if identity is None or file_identity(path) != identity:
        return False
    _unlink_quiet(path)
    return True
