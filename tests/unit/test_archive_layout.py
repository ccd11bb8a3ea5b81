"""release/archive.py's checks on a hand-made archive tree (no PyInstaller here: the real build
is tests/e2e/test_archive.py), and the frozen entry's environment hand-over."""

import json
import os
import tarfile

import pytest

from release import archive, frozen_bp

VERSION = "0.5.0"


def _tree(tmp_path, *, version=VERSION):
    top = tmp_path / archive.archive_name(VERSION)
    (top / "_internal" / "bp").mkdir(parents=True)
    (top / "licenses").mkdir()
    (top / "bp").write_bytes(b"\x7fELF frozen")
    (top / "bp").chmod(0o755)
    (top / "_internal" / "bp" / "__init__.pyc").write_bytes(b"code")
    os.symlink("bp/__init__.pyc", top / "_internal" / "link.pyc")  # PyInstaller trees have symlinks
    (top / "licenses" / "INDEX.txt").write_text("Python: Python-LICENSE.txt\n")
    (top / "licenses" / "Python-LICENSE.txt").write_text("PSF\n")
    (top / archive.MANIFEST).write_text(json.dumps({"version": version, "platform": "linux", "arch": "x86_64"}))
    return top


def _packed(tmp_path, top):
    archive.write_sums(str(top))
    path = tmp_path / (top.name + ".tar.gz")
    archive.pack(str(top), str(path))
    return path


def test_a_sound_archive_passes_and_keeps_modes_and_links(tmp_path):
    path = _packed(tmp_path, _tree(tmp_path))
    assert archive.verify_archive(str(path), VERSION) == []
    with tarfile.open(path) as tar:
        members = {m.name.split("/", 1)[-1]: m for m in tar.getmembers()}
    assert members["bp"].mode == 0o755 and members["licenses/INDEX.txt"].mode == 0o644
    assert members["_internal/link.pyc"].issym()
    assert {m.uid for m in members.values()} == {0} and {m.mtime for m in members.values()} == {0}
    sums = (tmp_path / archive.archive_name(VERSION) / archive.SUMS).read_text().splitlines()
    assert [line.split("  ", 1)[1] for line in sums] == sorted(line.split("  ", 1)[1] for line in sums)
    assert "_internal/link.pyc" not in {line.split("  ", 1)[1] for line in sums}


def test_the_same_tree_packs_to_the_same_bytes(tmp_path):
    top = _tree(tmp_path)
    first = _packed(tmp_path, top).read_bytes()
    assert _packed(tmp_path, top).read_bytes() == first


def test_a_file_changed_after_summing_is_named(tmp_path):
    top = _tree(tmp_path)
    archive.write_sums(str(top))
    (top / "_internal" / "bp" / "__init__.pyc").write_bytes(b"other code")
    path = tmp_path / "a.tar.gz"
    archive.pack(str(top), str(path))
    assert archive.verify_archive(str(path), VERSION) == ["archive: _internal/bp/__init__.pyc differs from SHA256SUMS"]


def test_a_file_missing_from_the_sums_is_refused(tmp_path):
    top = _tree(tmp_path)
    archive.write_sums(str(top))
    (top / "_internal" / "extra.so").write_bytes(b"unsummed")
    path = tmp_path / "a.tar.gz"
    archive.pack(str(top), str(path))
    problems = archive.verify_archive(str(path), VERSION)
    assert len(problems) == 1 and "SHA256SUMS lists" in problems[0], problems


@pytest.mark.parametrize("damage", ["version", "executable", "licences"])
def test_wrong_version_a_plain_bp_or_no_licences_are_refused(tmp_path, damage):
    top = _tree(tmp_path, version="9.9.9" if damage == "version" else VERSION)
    if damage == "executable":
        (top / "bp").chmod(0o644)
    if damage == "licences":
        (top / "licenses" / "INDEX.txt").unlink()
    problems = archive.verify_archive(str(_packed(tmp_path, top)), VERSION)
    expected = {"version": "archive manifest says 9.9.9", "executable": "archive: bp is not executable",
                "licences": "licenses/INDEX.txt missing"}[damage]
    assert any(expected in p for p in problems), problems


def test_the_frozen_bp_hands_children_the_environment_it_was_started_with():
    started_with = {"PATH": "/usr/bin:/bin", "HOME": "/home/p", "LD_LIBRARY_PATH": "/opt/x/_internal:/usr/local/lib",
                    "LD_LIBRARY_PATH_ORIG": "/usr/local/lib", "_PYI_ARCHIVE_FILE": "/opt/x/bp",
                    "_PYI_PARENT_PROCESS_LEVEL": "1", "_PYI_LINUX_PROCESS_NAME": "bp"}
    frozen_bp.restore_environment(started_with)
    assert started_with == {"PATH": "/usr/bin:/bin", "HOME": "/home/p", "LD_LIBRARY_PATH": "/usr/local/lib"}
    unset_before = {"HOME": "/home/p", "LD_LIBRARY_PATH": "/opt/x/_internal", "_PYI_ARCHIVE_FILE": "/opt/x/bp"}
    frozen_bp.restore_environment(unset_before)
    assert unset_before == {"HOME": "/home/p"}
