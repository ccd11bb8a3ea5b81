"""A small real file system that can be filled: a tmpfs mounted for one test (needs root, as in
CI's container), so "the disk is full" is the kernel's own ENOSPC, not an injected error."""

import contextlib
import errno
import os
import subprocess

import pytest


@contextlib.contextmanager
def small_tmpfs(path, size="1m"):
    """Mount a tmpfs of `size` at `path` (created 0700), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    os.makedirs(path, mode=0o700, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], capture_output=True)


def fill(directory, name=".filler"):
    """Write zeros into `directory` until the file system says ENOSPC; returns the filler path."""
    path = os.path.join(directory, name)
    block = b"\0" * 4096
    with open(path, "wb", buffering=0) as fh:
        while True:
            try:
                fh.write(block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    return path


def chattr(flag, path):
    """chattr `flag` (+i, -i) on a real file system, or a skip where this one or this user cannot
    (not root, or a file system without the attribute): the kernel's own EPERM is what is tested."""
    import shutil

    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    done = subprocess.run(["chattr", flag, path], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"chattr {flag} refused here: {done.stderr.strip()}")
