"""Exported files (screenshot, pdf, download): where they go and how they are written.

Resolution (spec §15, contract §1.3): an absolute FILE is used as given; otherwise the name
(FILE, or the command's default name) is joined to BROWSER_PILOT_OUTPUT_DIR (must be absolute)
or, without it, to the CLI's current directory. A relative name never leaves that directory:
`..` is refused here, and a symlinked directory on the way out of it is refused by the writer
(it compares real paths). The CLI resolves the directory (the broker does not share its cwd)
and sends it; the broker, which holds the bytes, writes the file.

Writing: a private temporary file (0600, O_EXCL, O_NOFOLLOW) in the destination's directory,
flushed, then published under its name by a hard link, which never replaces anything (issue 27
item 5): an existing file at an explicit name is `file_exists` unless the caller passed
--overwrite (then an atomic rename over it); a name Browser Pilot or a server chose (a default
name, a download's own name) gets the first free `name (N).ext` instead. A symbolic link at the
destination is refused, never written through; a directory or other non-regular file there is
refused. A full disk or quota is `storage_full`. Stdlib only: the CLI imports this.
"""

import errno
import os
import stat

from bp.errors import invalid_argument

OUTPUT_DIR_ENV = "BROWSER_PILOT_OUTPUT_DIR"
MAX_PATH = 4096


def request_args(name, environ=None, cwd=None, overwrite=False):
    """The CLI's part: {"outputDir", "createOutputDir"?, "file"?} for the broker. Refuses a
    relative BROWSER_PILOT_OUTPUT_DIR (field outputDir) and a relative name that climbs out of
    the output directory (field file) before anything is sent."""
    environ = os.environ if environ is None else environ
    value = environ.get(OUTPUT_DIR_ENV)
    if value is not None and value != "":
        if not os.path.isabs(value) or "\0" in value or len(value) > MAX_PATH:
            raise invalid_argument("outputDir", f"{OUTPUT_DIR_ENV} must be an absolute path.", reason="not_absolute")
        args = {"outputDir": os.path.normpath(value), "createOutputDir": True}
    else:
        try:
            base = os.path.abspath(cwd if cwd is not None else os.getcwd())
        except OSError:
            raise invalid_argument("outputDir", "The current directory is not available; set BROWSER_PILOT_OUTPUT_DIR "
                                   "or give an absolute file name.", reason="no_current_directory") from None
        args = {"outputDir": base}
    if overwrite:
        args["overwrite"] = True
    if name is not None:
        check_name(name)
        args["file"] = name
        destination(args["outputDir"], name)  # refuse an escape before the broker does any work
    return args


def check_name(name):
    if not name or "\0" in name or len(name) > MAX_PATH:
        raise invalid_argument("file", "The file name is empty or too long.", reason="bad_name")


def destination(base, name):
    """(absolute path, confining directory or None). An absolute name is used as given
    (normalised) and not confined; a relative one must stay inside base."""
    check_name(name)
    if os.path.isabs(name):
        path = os.path.normpath(name)
        if path == os.sep:
            raise invalid_argument("file", "The file name names a directory.", reason="not_a_file")
        return path, None
    base = os.path.normpath(base)
    path = os.path.normpath(os.path.join(base, name))
    if path == base or os.path.commonpath([base, path]) != base:
        raise invalid_argument("file", "A relative file name must stay inside the output directory.",
                               reason="outside_output_dir")
    return path, base


def safe_basename(name, fallback):
    """A plain file name derived from an untrusted one (a download's suggested name): the last
    path component, no control characters, not hidden, at most 200 characters."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch >= " " and ch != "\x7f").strip()
    name = name.lstrip(".")
    if not name:
        return fallback
    if len(name.encode()) > 200:
        root, dot, ext = name.rpartition(".")
        ext = ext if dot and len(ext) <= 16 else ""
        name = (root or name).encode()[:180].decode(errors="ignore") + ("." + ext if ext else "")
    return name


def _refuse(reason, message):
    return invalid_argument("file", message, reason=reason)


def errno_name(number: "object", default: "object" = "error") -> "object":
    """The symbolic name of an OSError's errno number (`EACCES`), else `default`; `number` may be
    None (an OSError raised without one, or no OSError at all)."""
    return errno.errorcode.get(number, default) if isinstance(number, int) else default


MAX_UNIQUE = 1000  # `name (1).ext` … `name (999).ext`, then file_exists


def _exists(path, reason="file_exists"):
    from bp.errors import BPError, remediation

    return BPError("file_exists", "A file already exists at that path; it was not replaced.",
                   context={"field": "file", "path": path, "reason": reason},
                   remediation=remediation("choose_other_path"))


def storage_full(exc, where):
    """ENOSPC / EDQUOT as the stable storage_full (nothing was written)."""
    from bp.errors import BPError, remediation

    return BPError("storage_full", "There is no space left (the disk or the disk quota is full); nothing was written.",
                   context={"where": where, "reason": "quota" if exc.errno == errno.EDQUOT else "disk_full"},
                   remediation=remediation("free_disk_space"))


def unique_names(leaf):
    """`leaf`, then `stem (1).ext`, `stem (2).ext`, …"""
    yield leaf
    stem, dot, ext = leaf.rpartition(".")
    if not dot or not stem:
        stem, ext = leaf, ""
    for n in range(1, MAX_UNIQUE):
        yield f"{stem} ({n}).{ext}" if ext else f"{stem} ({n})"


def _publish(tmp, leaf, dir_fd, overwrite, unique):
    """Give the written temp file its name; returns the name used."""
    if overwrite:
        # rename() replaces a link or file at the destination itself: never writes through it.
        os.replace(tmp, leaf, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return leaf
    for name in unique_names(leaf) if unique else (leaf,):
        try:
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
                    raise
                _copy_exclusive(tmp, name, dir_fd)  # a file system without hard links
        except FileExistsError:
            continue  # never replaced: the next free name, or file_exists
        os.unlink(tmp, dir_fd=dir_fd)
        return name
    raise _exists(leaf, "no_free_name" if unique else "file_exists")


def _copy_exclusive(tmp, name, dir_fd):
    """Create `name` exclusively (O_EXCL) and copy the temp file into it."""
    src = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    try:
        dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=dir_fd)
        try:
            while True:
                chunk = os.read(src, 1 << 20)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view):]
            os.fsync(dst)
        except BaseException:
            os.close(dst)
            os.unlink(name, dir_fd=dir_fd)
            raise
        os.close(dst)
    finally:
        os.close(src)


def write(path, base, chunks, *, create_base=False, overwrite=False, unique=False):
    """Write `chunks` (an iterable of bytes) to path through a temporary file published without
    replacing anything (see the module doc). `base`: the directory a relative name was confined
    to (None for an explicit absolute path). `overwrite`: replace an existing file. `unique`: the
    name was not the caller's, so an existing file makes it `name (N).ext`.
    Returns (the path written, the number of bytes written)."""
    parent, leaf = os.path.split(path)
    if base is not None:
        if create_base:
            try:
                os.makedirs(base, mode=0o700, exist_ok=True)
            except OSError as exc:
                raise _refuse("output_dir_unavailable", f"The output directory cannot be created ({errno_name(exc.errno)}).") from None
        real_base = os.path.realpath(base)
        real_parent = os.path.realpath(parent)
        if os.path.commonpath([real_base, real_parent]) != real_base:
            raise _refuse("outside_output_dir", "The file name leads out of the output directory through a symbolic link.")
    try:
        dir_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise _refuse("no_such_directory", "The destination directory does not exist.") from None
    except NotADirectoryError:
        raise _refuse("no_such_directory", "The destination's parent is not a directory.") from None
    except OSError as exc:
        raise _refuse("not_writable", f"The destination directory cannot be opened ({errno_name(exc.errno)}).") from None
    tmp = None
    try:
        if base is not None:
            # The directory opened must be the one whose real path was checked (no swap between).
            st, real = os.fstat(dir_fd), os.stat(real_parent)
            if (st.st_dev, st.st_ino) != (real.st_dev, real.st_ino):
                raise _refuse("outside_output_dir", "The destination directory changed while it was checked.")
        try:
            existing = os.stat(leaf, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if stat.S_ISLNK(existing.st_mode):
                raise _refuse("symlink_destination", "The destination is a symbolic link; it is never written through.")
            if not stat.S_ISREG(existing.st_mode):
                raise _refuse("not_a_regular_file", "The destination exists and is not a regular file.")
            if not overwrite and not unique:
                raise _exists(path)  # before any work; the link below is what makes it race-free
        tmp = f".{leaf[:64]}.bp-{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=dir_fd)
        except OSError as exc:
            tmp = None
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise storage_full(exc, "output") from None
            raise _refuse("not_writable", f"The destination directory is not writable ({errno_name(exc.errno)}).") from None
        size = 0
        try:
            os.fchmod(fd, 0o600)
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                    size += written
            os.fsync(fd)
        finally:
            os.close(fd)
        name = _publish(tmp, leaf, dir_fd, overwrite, unique)
        tmp = None
        return os.path.join(parent, name), size
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise storage_full(exc, "output") from None
        raise _refuse("write_failed", f"The file could not be written ({errno_name(exc.errno)}).") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
        os.close(dir_fd)


def export(args, default_name, chunks):
    """Broker side: resolve the request's output arguments and write. Returns (path written, size):
    an explicit name is never replaced without `overwrite`; a default (or server-chosen) name
    that exists gets a unique variant."""
    name = args.get("file") or default_name
    path, base = destination(args["outputDir"], name)
    return write(path, base, chunks, create_base=bool(args.get("createOutputDir")) and base == os.path.normpath(args["outputDir"]),
                 overwrite=bool(args.get("overwrite")), unique=not args.get("file"))
