"""Process identity (pid + start time, via psutil) and installation identity.

A pid alone is not proof: pids are reused. A process is "the same" only when its pid and its
OS start time both match what was recorded. Not on the CLI's hot path (psutil costs ~30 ms).
"""

import hashlib
import os

import psutil

import bp

# psutil reports create_time as a float of seconds; records keep it rounded to 10 ms.
_START_TIME_TOLERANCE = 0.02


def process_start_time(pid):
    """The OS start time of pid, or None when there is no such (live) process."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return round(proc.create_time(), 2)
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        # Exists but not ours to inspect: treat as alive (never reclaim without proof).
        return -1.0


def own_identity():
    return {"pid": os.getpid(), "startTime": process_start_time(os.getpid())}


def is_alive(pid, start_time):
    """True unless pid + start time prove the recorded process is gone."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    actual = process_start_time(pid)
    if actual is None:
        return False
    if actual == -1.0 or start_time is None:
        return True
    return abs(actual - float(start_time)) <= _START_TIME_TOLERANCE


def installation_identity():
    """A hash over the installed package's real path, version and files.

    Two CLIs are "the same installation" only when this matches; it decides who may stop
    the broker (spec §18)."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(bp.__file__)))
    digest = hashlib.sha256()
    digest.update(os.fsencode(root) + b"\0" + bp.__version__.encode() + b"\0")
    for package in ("bp", "cli", "broker", "janitor"):
        pkg_dir = os.path.join(root, package)
        for dirpath, dirnames, filenames in os.walk(pkg_dir):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(dirpath, name)
                digest.update(os.fsencode(os.path.relpath(path, root)) + b"\0")
                with open(path, "rb") as fh:
                    digest.update(fh.read() + b"\0")
    return {"version": bp.__version__, "path": root, "identity": "installation:" + digest.hexdigest()}
