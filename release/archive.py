"""The self-contained archive: `bp` for a host with no Python of its own.

    browser-pilot-<v>-linux-x86_64.tar.gz
      browser-pilot-<v>-linux-x86_64/
        bp                          the CLI; also the broker and the janitor (release/frozen_bp.py)
        _internal/                  the interpreter, the packages and their native libraries
        licenses/                   every bundled component's licence text, and an INDEX.txt
        SHA256SUMS                  every other regular file, `sha256sum -c SHA256SUMS` format
        browser-pilot-archive.json  version, platform, packager and the bundled distributions

Built with PyInstaller (one-folder: no unpacking to a temporary directory on every start, which
one-file does and which would cost every `bp` call) from the same staged sources as the wheel,
with the dependencies installed in the interpreter that runs the build. The release tooling
calls build_archive(); verify_archive() re-reads a built one.
"""

import glob
import gzip
import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY = os.path.join(HERE, "frozen_bp.py")
PLATFORM = "linux"
ARCH = "x86_64"
MANIFEST = "browser-pilot-archive.json"
SUMS = "SHA256SUMS"
# install_requires of setup.cfg, walked for their own requirements below.
ROOT_DISTRIBUTIONS = ("pyzmq", "websocket-client", "marshmallow", "click", "psutil", "multiprocessing-logging",
                      "orjson")
PACKAGES = ("bp", "cli", "broker", "janitor")
# Nothing of a test harness goes into the archive: the pytest plugin is for the wheel.
EXCLUDED_MODULES = ("pytest", "_pytest", "bp.pytest_plugin", "tkinter")


class ArchiveError(ValueError):
    pass


def member_bytes(tar, member):
    """A member's content. tarfile has no file object for a directory or a special file."""
    fh = tar.extractfile(member)
    if fh is None:
        raise ArchiveError(f"{member.name} is not a regular file")
    return fh.read()


def archive_name(version):
    return f"browser-pilot-{version}-{PLATFORM}-{ARCH}"


def check_host():
    """The archive holds this host's interpreter and native libraries, so it is built on the
    platform it is for."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        raise ArchiveError(f"the archive is built on Linux x86_64 only (this is {sys.platform} {platform.machine()}); "
                           "pass --no-archive")
    try:
        version = metadata.version("pyinstaller")
    except metadata.PackageNotFoundError:
        raise ArchiveError("PyInstaller is not installed in this interpreter: pip install 'pyinstaller>=6' "
                           "(part of the test and release extras), or pass --no-archive") from None
    if not _python_library():
        soname = sysconfig.get_config_var("INSTSONAME") or "libpython3.X.so.1.0"
        raise ArchiveError(f"the archive bundles this interpreter's shared library {soname}, which is not "
                           f"installed (Debian: apt-get install libpython{sys.version_info[0]}.{sys.version_info[1]}); "
                           "or pass --no-archive")
    return version


def _python_library():
    """Whether this interpreter's shared library (what PyInstaller bundles) is on this host."""
    soname = sysconfig.get_config_var("INSTSONAME")
    if not soname:
        return False
    for directory in (sysconfig.get_config_var("LIBDIR"), os.path.join(sys.base_prefix, "lib")):
        if directory and os.path.exists(os.path.join(directory, soname)):
            return True
    ldconfig = shutil.which("ldconfig") or ("/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else None)
    if ldconfig:
        listed = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
        return any(line.strip().startswith(soname + " ") for line in listed.splitlines())
    return False


def _freeze(staging, work):
    """PyInstaller one-folder build of release/frozen_bp.py against the staged sources."""
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--onedir", "--name", "bp",
           "--log-level", "WARN", "--distpath", os.path.join(work, "dist"), "--workpath", os.path.join(work, "build"),
           "--specpath", work, "--paths", staging, "--collect-data", "broker"]
    # The CLI imports its commands by name (cli/main.py) and everything imports lazily: take
    # every module of the four packages, not only what static analysis of the entry reaches.
    for package in PACKAGES:
        cmd += ["--collect-submodules", package]
    for module in EXCLUDED_MODULES:
        cmd += ["--exclude-module", module]
    # The staged sources before site-packages, where an installed (maybe older) copy of the same
    # packages can be: PyInstaller appends --paths to sys.path, PYTHONPATH comes first.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHOME"}
    env["PYTHONPATH"] = staging
    # A copy of the entry outside release/: PyInstaller puts the top directory of the script's
    # package (this checkout) on its search path, and the archive is made of the staged sources.
    entry = os.path.join(work, "bp_entry.py")
    shutil.copyfile(ENTRY, entry)
    proc = subprocess.run(cmd + [entry], cwd=work, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise ArchiveError(f"PyInstaller failed (exit {proc.returncode}):\n{tail}")
    _check_sources(os.path.join(work, "build", "bp", "PYZ-00.toc"), staging)
    return os.path.join(work, "dist", "bp")


def _check_sources(toc_path, staging):
    """Every module of the four packages that went into the archive was read from the staged
    sources (PyInstaller's table of contents names each module's file)."""
    import ast

    with open(toc_path, encoding="utf-8") as fh:
        _, entries = ast.literal_eval(fh.read())
    ours = [(name, path) for name, path, _ in entries if name.split(".")[0] in PACKAGES]
    foreign = [f"{name} from {path}" for name, path in ours
               if not os.path.realpath(path).startswith(os.path.realpath(staging) + os.sep)]
    if foreign or len(ours) < 20:
        raise ArchiveError(f"the archive's modules must come from the staged sources ({len(ours)} found): "
                           + "; ".join(foreign[:5]))


def _distributions():
    """The installed distributions the archive bundles: setup.cfg's requirements and theirs."""
    found = {}
    todo: list[str] = list(ROOT_DISTRIBUTIONS)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for another platform or Python
        found[key] = dist
        for requirement in dist.requires or ():
            if ";" in requirement:
                continue  # extras and markers: not installed for the runtime
            todo.append(requirement.split()[0].split("[")[0].rstrip("<>=!~,"))
    return [found[k] for k in sorted(found)]


def _license_files(dist):
    return [f for f in dist.files or () if any(word in f.name.upper() for word in ("LICEN", "COPYING", "NOTICE"))]


def _debian_package(library):
    """The Debian package a bundled system library came from, by `dpkg -S` (None if unknown)."""
    if not shutil.which("dpkg"):
        return None
    proc = subprocess.run(["dpkg", "-S", f"*/{library}"], capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return proc.stdout.split(":", 1)[0].strip()


def write_licenses(top):
    """licenses/: Browser Pilot's, Python's, PyInstaller's bootloader's, every bundled
    distribution's licence files, and each system library's Debian copyright file."""
    out = os.path.join(top, "licenses")
    os.makedirs(out)
    lines = ["Browser Pilot: MIT (setup.cfg license); this archive bundles the components below.", ""]
    python_license = os.path.join(sys.base_prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                                  "LICENSE.txt")
    if not os.path.isfile(python_license):
        raise ArchiveError(f"the interpreter's licence is not at {python_license}")
    shutil.copyfile(python_license, os.path.join(out, "Python-LICENSE.txt"))
    lines.append(f"Python {platform.python_version()} (interpreter and standard library): Python-LICENSE.txt")
    bundled = []
    for dist in _distributions() + [metadata.distribution("pyinstaller")]:
        name = dist.metadata["Name"]
        files = _license_files(dist)
        if not files:
            raise ArchiveError(f"{name} {dist.version}: no licence file in its installed metadata")
        target = os.path.join(out, f"{name}-{dist.version}")
        os.makedirs(target)
        for item in files:
            shutil.copyfile(item.locate(), os.path.join(target, item.name))
        licence = dist.metadata.get("License-Expression") or (dist.metadata.get("License") or "").splitlines()[0:1]
        licence = licence if isinstance(licence, str) else (licence[0] if licence else "see files")
        role = "bootloader (GPL with the bootloader exception)" if name.lower() == "pyinstaller" else "bundled"
        lines.append(f"{name} {dist.version} ({role}): {licence}; {name}-{dist.version}/")
        if name.lower() != "pyinstaller":
            bundled.append({"name": name, "version": dist.version})
    lines += ["", "System libraries copied from the build host (Debian):"]
    internal = os.path.join(top, "_internal")
    for path in sorted(glob.glob(os.path.join(internal, "lib*.so*"))):
        library = os.path.basename(path)
        if os.path.islink(path) or library.startswith("libpython"):
            continue  # pyzmq's own libraries (symlinks into pyzmq.libs) and Python are above
        package = _debian_package(library)
        copyright_file = package and f"/usr/share/doc/{package.split(':')[0]}/copyright"
        if package and copyright_file and os.path.isfile(copyright_file):
            shutil.copyfile(copyright_file, os.path.join(out, f"{package.split(':')[0]}-copyright"))
            lines.append(f"{library}: Debian package {package}; {package.split(':')[0]}-copyright")
        else:
            lines.append(f"{library}: origin not identified on the build host")
    with open(os.path.join(out, "INDEX.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return bundled


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_sums(top):
    """SHA256SUMS over every regular file of the tree (not the symlinks, whose targets are in it)."""
    rows = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, top)
            if rel == SUMS or os.path.islink(full):
                continue
            rows.append(f"{sha256_file(full)}  {rel}\n")
    with open(os.path.join(top, SUMS), "w", encoding="ascii", newline="\n") as fh:
        fh.writelines(sorted(rows, key=lambda row: row[66:]))
    return len(rows)


def _tar_filter(info):
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    if not info.issym():
        info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
    return info


def pack(top, path):
    """top/ as a .tar.gz under its own name: sorted, owner-less, mtime SOURCE_DATE_EPOCH, modes
    kept executable or not, symbolic links kept (PyInstaller's _internal/ has some)."""
    top_name = os.path.basename(top)
    entries = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            entries.append((os.path.join(top_name, os.path.relpath(full, top)), full))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(top, arcname=top_name, recursive=False, filter=_tar_filter)
        for arcname, full in sorted(entries):
            tar.add(full, arcname=arcname, recursive=False, filter=_tar_filter)
    with open(path, "wb") as fh:
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0) as gz:
            gz.write(raw.getvalue())


def build_archive(staging, out_dir, version, work):
    """Freeze, lay out, sum, license and pack; returns (file name, index entry)."""
    pyinstaller_version = check_host()
    frozen = _freeze(staging, work)
    top_name = archive_name(version)
    top = os.path.join(work, top_name)
    shutil.copytree(frozen, top, symlinks=True)
    bundled = write_licenses(top)
    manifest = {"product": "browser-pilot", "version": version, "platform": PLATFORM, "arch": ARCH,
                "executable": "bp", "packager": f"PyInstaller {pyinstaller_version} (one-folder)",
                "python": platform.python_version(), "distributions": bundled}
    with open(os.path.join(top, MANIFEST), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    files = write_sums(top)
    name = top_name + ".tar.gz"
    pack(top, os.path.join(out_dir, name))
    entry = {"file": name, "platform": PLATFORM, "arch": ARCH, "topDirectory": top_name,
             "executable": f"{top_name}/bp", "packager": manifest["packager"], "python": manifest["python"],
             "files": files}
    return name, entry


def verify_archive(path, version):
    """Problems found in a built archive (empty when it is sound): its manifest's version and
    platform, every SHA256SUMS line against the member's bytes, every regular file summed,
    licences present, the executable executable."""
    problems = []
    top = archive_name(version)
    with tarfile.open(path) as tar:
        members = {m.name: m for m in tar.getmembers()}
        for required in (MANIFEST, SUMS, "bp", "licenses/INDEX.txt", "licenses/Python-LICENSE.txt"):
            if f"{top}/{required}" not in members:
                problems.append(f"{os.path.basename(path)}: {top}/{required} missing")
        if problems:
            return problems
        manifest = json.loads(member_bytes(tar, members[f"{top}/{MANIFEST}"]))
        if manifest.get("version") != version or (manifest.get("platform"), manifest.get("arch")) != (PLATFORM, ARCH):
            problems.append(f"archive manifest says {manifest.get('version')} {manifest.get('platform')} "
                            f"{manifest.get('arch')}, expected {version} {PLATFORM} {ARCH}")
        if not members[f"{top}/bp"].mode & 0o100:
            problems.append("archive: bp is not executable")
        listed = {}
        for line in member_bytes(tar, members[f"{top}/{SUMS}"]).decode("ascii").splitlines():
            digest, _, rel = line.partition("  ")
            listed[rel] = digest
        regular = {name[len(top) + 1:] for name, m in members.items() if m.isfile() and name != f"{top}/{SUMS}"}
        if set(listed) != regular:
            problems.append(f"archive: SHA256SUMS lists {len(listed)} files, the archive holds {len(regular)}")
        for rel, digest in listed.items():
            member = members.get(f"{top}/{rel}")
            if member is None or not member.isfile():
                continue
            if hashlib.sha256(member_bytes(tar, member)).hexdigest() != digest:
                problems.append(f"archive: {rel} differs from SHA256SUMS")
    return problems
