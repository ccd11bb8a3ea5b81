"""Build a verifiable release from the one version number in bp/__init__.py.

    python -m release.build --out DIR [--no-isolation] [--no-archive] [--skill-dir DIR]
    python -m release.build --verify DIR

Steps: check that every version agrees (package, setup.cfg wiring, skill compatibility.json,
protocol range); copy the packaging inputs into a clean staging tree; build the sdist and the
wheel from that sdist (`python -m build`); archive the skill; freeze the self-contained Linux
x86_64 archive from the same staged sources (release/archive.py, unless --no-archive); write a `<asset>.sha256` sidecar
per asset and `browser-pilot-<v>-release-index.json` (+ sidecar); verify the result (every
size and hash, the versions inside the wheel, the sdist and the skill archive). Any
disagreement exits non-zero with one message per problem.
"""

import argparse
import configparser
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

from release import archive

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCT = "browser-pilot"
SKILL_NAME = "browser-pilot"
INDEX_SCHEMA = 1
# What the sdist is built from: nothing else of the working tree can leak into a release.
PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "README.md", "LICENSE", "MANIFEST.in")
PACKAGES = ("bp", "cli", "broker", "janitor")
SCRIPTS = ("bin",)  # the `bp` and `browser-pilot` commands (setup.cfg scripts)
# Platforms: the service needs Unix sockets and flock; CI runs Linux only.
SUPPORTED_PLATFORMS = [
    {"platform": "linux", "arch": "any", "status": "tested"},
    {"platform": "darwin", "arch": "any", "status": "untested",
     "note": "discovery and the service are written for macOS but no macOS run backs this release"},
]
UNSUPPORTED_PLATFORMS = [{"platform": "win32", "reason": "the service uses Unix sockets and flock"}]


class ReleaseError(Exception):
    def __init__(self, problems):
        self.problems = list(problems) if isinstance(problems, (list, tuple)) else [problems]
        super().__init__("; ".join(self.problems))


# --- the one version and what must agree with it ---------------------------------------------

def package_version(root=ROOT):
    """bp.__version__, read from the source text (never from whatever `bp` is importable)."""
    with open(os.path.join(root, "bp", "__init__.py"), encoding="utf-8") as fh:
        match = re.search(r'^__version__\s*=\s*"([^"]+)"\s*$', fh.read(), re.MULTILINE)
    if not match:
        raise ReleaseError("bp/__init__.py has no __version__ = \"X.Y.Z\" line")
    return match.group(1)


def protocol_range(root=ROOT):
    """bp.protocol.PROTOCOL_RANGE of this tree, from a child interpreter that imports the tree."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from bp import protocol; "
            "print(json.dumps(protocol.PROTOCOL_RANGE))")
    out = subprocess.run([sys.executable, "-I", "-c", code, root], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def python_requires(root=ROOT):
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(os.path.join(root, "setup.cfg"), encoding="utf-8")
    return cfg.get("options", "python_requires", fallback=None), cfg.get("metadata", "version", fallback=None)


def _parse(version):
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:[-.]?(?:a|b|rc|dev|post)\d*)?", version or "")
    if not match:
        raise ValueError(version)
    return tuple(int(n) for n in match.groups())


def _range_text(minimum, maximum):
    return f">={minimum} <{maximum}"


def check_versions(version, compatibility_path, protocol, *, setup_cfg_version=None, index=None):
    """Every problem found (empty when all agree). Paths and values are passed in, so a test can
    check a deliberately wrong copy without touching the real files."""
    problems = []
    try:
        release = _parse(version)
    except ValueError:
        return [f"package version {version!r} is not X.Y.Z"]
    if setup_cfg_version is not None and setup_cfg_version.strip() != "attr: bp.__version__":
        problems.append(f"setup.cfg [metadata] version is {setup_cfg_version!r}; it must be 'attr: bp.__version__' "
                        "(one version source)")
    try:
        with open(compatibility_path, encoding="utf-8") as fh:
            compat = json.load(fh)
    except (OSError, ValueError) as exc:
        return problems + [f"{compatibility_path}: unreadable ({exc})"]
    cli = compat.get("browserPilotCli") or {}
    if compat.get("skillVersion") != version:
        problems.append(f"compatibility.json skillVersion {compat.get('skillVersion')!r} != package {version}")
    if cli.get("testedVersion") != version:
        problems.append(f"compatibility.json testedVersion {cli.get('testedVersion')!r} != package {version}")
    try:
        low, high = _parse(cli.get("minimumVersion")), _parse(cli.get("maximumVersionExclusive"))
    except ValueError:
        problems.append("compatibility.json minimumVersion/maximumVersionExclusive are not X.Y.Z")
    else:
        if not low <= release < high:
            problems.append(f"package {version} is outside the skill's range "
                            f"{_range_text(cli['minimumVersion'], cli['maximumVersionExclusive'])}")
        if high != (release[0] + 1, 0, 0):
            problems.append(f"compatibility.json maximumVersionExclusive {cli['maximumVersionExclusive']} is not the "
                            f"next major {release[0] + 1}.0.0")
        expected = _range_text(cli["minimumVersion"], cli["maximumVersionExclusive"])
        if cli.get("supportedVersionRange") != expected:
            problems.append(f"compatibility.json supportedVersionRange {cli.get('supportedVersionRange')!r} != "
                            f"{expected!r}")
    if compat.get("protocol") != protocol:
        problems.append(f"compatibility.json protocol {compat.get('protocol')} != bp.protocol.PROTOCOL_RANGE {protocol}")
    if index is not None:
        if index.get("version") != version:
            problems.append(f"release index version {index.get('version')!r} != package {version}")
        if index.get("protocol") != protocol:
            problems.append("release index protocol range != bp.protocol.PROTOCOL_RANGE")
        skill = index.get("skill") or {}
        if skill.get("testedCliVersion") != version or skill.get("compatibleCliRange") != cli.get("supportedVersionRange"):
            problems.append("release index skill compatibility != compatibility.json")
    return problems


# --- building ----------------------------------------------------------------------------------

def stage_sources(root, staging):
    """A clean copy of what the sdist is made of (no build/, egg-info, caches or tests)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
    for name in PACKAGING_FILES:
        if os.path.exists(os.path.join(root, name)):
            shutil.copy2(os.path.join(root, name), os.path.join(staging, name))
    for package in PACKAGES + SCRIPTS:
        shutil.copytree(os.path.join(root, package), os.path.join(staging, package), ignore=ignore)


def build_python(staging, out_dir, *, isolation=True):
    """sdist first, then the wheel built from that sdist (proves the sdist is complete)."""
    cmd = [sys.executable, "-m", "build", "--outdir", out_dir]
    if not isolation:
        cmd.append("--no-isolation")
    proc = subprocess.run(cmd + [staging], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
        raise ReleaseError(f"python -m build failed (exit {proc.returncode}):\n{tail}")
    wheels = [n for n in os.listdir(out_dir) if n.endswith(".whl")]
    sdists = [n for n in os.listdir(out_dir) if n.endswith(".tar.gz")]
    if len(wheels) != 1 or len(sdists) != 1:
        raise ReleaseError(f"expected one wheel and one sdist in {out_dir}, found {wheels + sdists}")
    return wheels[0], sdists[0]


def _tar_filter(info):
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def build_skill_archive(skill_dir, out_dir, version):
    """browser-pilot-skill-<v>.tar.gz with one top directory named after the skill; sorted,
    owner-less and timestamp-free, so the same tree gives the same bytes."""
    name = f"{PRODUCT}-skill-{version}.tar.gz"
    entries = []
    for dirpath, dirnames, filenames in os.walk(skill_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for filename in sorted(filenames):
            full = os.path.join(dirpath, filename)
            entries.append((os.path.relpath(full, skill_dir), full))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, full in sorted(entries):
            tar.add(full, arcname=f"{SKILL_NAME}/{rel}", recursive=False, filter=_tar_filter)
    with open(os.path.join(out_dir, name), "wb") as fh:
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0) as gz:
            gz.write(raw.getvalue())
    return name


def write_sidecar(out_dir, name):
    """`<64 lowercase hex>  <name>\\n`, the sha256sum format (`sha256sum -c` reads it)."""
    digest = archive.sha256_file(os.path.join(out_dir, name))
    with open(os.path.join(out_dir, name + ".sha256"), "w", encoding="ascii", newline="\n") as fh:
        fh.write(f"{digest}  {name}\n")
    return digest


def _asset(out_dir, name, kind):
    digest = write_sidecar(out_dir, name)
    return {"kind": kind, "file": name, "bytes": os.path.getsize(os.path.join(out_dir, name)), "sha256": digest,
            "checksumFile": name + ".sha256"}


def index_name(version):
    return f"{PRODUCT}-{version}-release-index.json"


def make_index(version, protocol, compat, requires_python, assets, archive_entry=None):
    cli = compat["browserPilotCli"]
    by_kind = {a["kind"]: a for a in assets}
    index = {
        "schemaVersion": INDEX_SCHEMA,
        "product": PRODUCT,
        "version": version,
        "protocol": protocol,
        "python": {"package": PRODUCT, "version": version, "installSpec": f"{PRODUCT}=={version}",
                   "requiresPython": requires_python, "wheel": by_kind["wheel"]["file"], "sdist": by_kind["sdist"]["file"]},
        "skill": {"name": SKILL_NAME, "version": compat["skillVersion"], "testedCliVersion": cli["testedVersion"],
                  "compatibleCliRange": cli["supportedVersionRange"], "skillPath": SKILL_NAME,
                  "file": by_kind["skill"]["file"]},
        "assets": assets,
        "supportedPlatforms": SUPPORTED_PLATFORMS,
        "unsupportedPlatforms": UNSUPPORTED_PLATFORMS,
    }
    if archive_entry:
        index["archive"] = archive_entry  # the self-contained build: platform, packager, entry point
    return index


# --- verifying ---------------------------------------------------------------------------------

def _wheel_facts(path):
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(meta).decode("utf-8")
        init = zf.read("bp/__init__.py").decode("utf-8")
    version = re.search(r'__version__\s*=\s*"([^"]+)"', init)
    if version is None:
        raise ValueError(f"{os.path.basename(path)}: bp/__init__.py sets no __version__")
    return _header(metadata, "Version"), version.group(1), names


def _header(metadata, key):
    match = re.search(rf"^{key}: (.+)$", metadata, re.MULTILINE)
    return match.group(1).strip() if match else None


def verify_release(out_dir, root=ROOT):
    """Re-read a built release: every asset's size and hash against the index and its sidecar,
    and the version inside the wheel, the sdist and the skill archive. Returns the index."""
    version = package_version(root)
    path = os.path.join(out_dir, index_name(version))
    problems = []
    try:
        with open(path, encoding="utf-8") as fh:
            index = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"{path}: unreadable ({exc})") from None
    for entry in index.get("assets", []) + [{"file": index_name(version), "checksumFile": index_name(version) + ".sha256"}]:
        full = os.path.join(out_dir, entry["file"])
        if not os.path.isfile(full):
            problems.append(f"{entry['file']}: missing")
            continue
        digest = archive.sha256_file(full)
        if "bytes" in entry and os.path.getsize(full) != entry["bytes"]:
            problems.append(f"{entry['file']}: {os.path.getsize(full)} bytes, index says {entry['bytes']}")
        if "sha256" in entry and digest != entry["sha256"]:
            problems.append(f"{entry['file']}: sha256 differs from the index")
        try:
            with open(os.path.join(out_dir, entry["checksumFile"]), encoding="ascii") as fh:
                sidecar = fh.read()
        except OSError:
            problems.append(f"{entry['checksumFile']}: missing")
            continue
        if sidecar != f"{digest}  {entry['file']}\n":
            problems.append(f"{entry['checksumFile']}: does not match {entry['file']}")
    kinds = {a["kind"]: a["file"] for a in index.get("assets", [])}
    if set(kinds) - {"archive"} != {"wheel", "sdist", "skill"} or ("archive" in kinds) != ("archive" in index):
        problems.append(f"index assets are {sorted(kinds)}, expected wheel, sdist, skill (and an indexed archive)")
    if not problems:
        wheel_meta, wheel_init, _ = _wheel_facts(os.path.join(out_dir, kinds["wheel"]))
        if wheel_meta != version or wheel_init != version:
            problems.append(f"wheel carries version {wheel_meta} / bp.__version__ {wheel_init}, expected {version}")
        with tarfile.open(os.path.join(out_dir, kinds["sdist"])) as tar:
            pkg_info = next(m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"))
            sdist_version = _header(archive.member_bytes(tar, pkg_info).decode("utf-8"), "Version")
        if sdist_version != version:
            problems.append(f"sdist carries version {sdist_version}, expected {version}")
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(os.path.join(out_dir, kinds["skill"])) as tar:
                member = tar.getmember(f"{SKILL_NAME}/compatibility.json")
                with open(os.path.join(tmp, "compatibility.json"), "wb") as fh:
                    fh.write(archive.member_bytes(tar, member))
            problems += [f"skill archive: {p}" for p in
                         check_versions(version, os.path.join(tmp, "compatibility.json"), index.get("protocol"),
                                        index=index)]
        if "archive" in kinds:
            problems += archive.verify_archive(os.path.join(out_dir, kinds["archive"]), version)
        if index.get("protocol") != protocol_range(root):
            problems.append("release index protocol range != this tree's bp.protocol.PROTOCOL_RANGE")
    if problems:
        raise ReleaseError(problems)
    return index


def build_release(out_dir, *, root=ROOT, skill_dir=None, isolation=True, with_archive=True):
    """Check, build, index, verify. Returns the index. Raises ReleaseError on any disagreement."""
    skill_dir = skill_dir or os.path.join(root, "skill")
    version = package_version(root)
    protocol = protocol_range(root)
    requires_python, cfg_version = python_requires(root)
    compat_path = os.path.join(skill_dir, "compatibility.json")
    problems = check_versions(version, compat_path, protocol, setup_cfg_version=cfg_version)
    if problems:
        raise ReleaseError(problems)
    with open(compat_path, encoding="utf-8") as fh:
        compat = json.load(fh)
    os.makedirs(out_dir, exist_ok=True)
    if os.listdir(out_dir):
        raise ReleaseError(f"{out_dir} is not empty: a release is built into an empty directory")
    archive_entry = None
    if with_archive:
        try:
            archive.check_host()  # before minutes of building, not after
        except archive.ArchiveError as exc:
            raise ReleaseError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="bp-release-") as staging:
        stage_sources(root, staging)
        wheel, sdist = build_python(staging, out_dir, isolation=isolation)
        if with_archive:
            with tempfile.TemporaryDirectory(prefix="bp-archive-") as work:
                try:
                    archive_file, archive_entry = archive.build_archive(staging, out_dir, version, work)
                except archive.ArchiveError as exc:
                    raise ReleaseError(str(exc)) from None
    skill = build_skill_archive(skill_dir, out_dir, version)
    assets = [_asset(out_dir, wheel, "wheel"), _asset(out_dir, sdist, "sdist"), _asset(out_dir, skill, "skill")]
    if archive_entry:
        assets.append(_asset(out_dir, archive_file, "archive"))
    index = make_index(version, protocol, compat, requires_python, assets, archive_entry)
    with open(os.path.join(out_dir, index_name(version)), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(index, fh, indent=2)
        fh.write("\n")
    write_sidecar(out_dir, index_name(version))
    return verify_release(out_dir, root)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m release.build", description=(__doc__ or "").split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", help="empty (or new) directory to build the release into")
    group.add_argument("--verify", metavar="DIR", help="only verify an already built release directory")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with this interpreter's setuptools/wheel instead of a fresh isolated environment")
    parser.add_argument("--no-archive", action="store_true",
                        help="skip the self-contained Linux x86_64 archive (PyInstaller); wheel, sdist and skill only")
    parser.add_argument("--skill-dir", help="the skill directory to release (default: skill/ of this tree)")
    args = parser.parse_args(argv)
    try:
        if args.verify:
            index = verify_release(os.path.abspath(args.verify))
            out_dir = os.path.abspath(args.verify)
        else:
            out_dir = os.path.abspath(args.out)
            index = build_release(out_dir, skill_dir=args.skill_dir and os.path.abspath(args.skill_dir),
                                  isolation=not args.no_isolation, with_archive=not args.no_archive)
    except ReleaseError as exc:
        print("release check failed:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"browser-pilot {index['version']} release in {out_dir}:")
    for asset in index["assets"]:
        print(f"  {asset['file']}  {asset['bytes']} bytes  sha256 {asset['sha256']}")
    print(f"  {index_name(index['version'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
