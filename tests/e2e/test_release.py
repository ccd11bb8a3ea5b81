"""The release: one version everywhere, every asset hashed and indexed, disagreements fail."""

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from release import archive, build
from tests import distribution


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    return distribution.release_dir(tmp_path_factory)


def test_release_assets_match_their_sidecars_sizes_and_index(dist):
    index = distribution.release_index(dist)
    assert {a["kind"] for a in index["assets"]} == {"wheel", "sdist", "skill"}
    for asset in index["assets"]:
        path = os.path.join(dist, asset["file"])
        assert os.path.getsize(path) == asset["bytes"]
        assert archive.sha256_file(path) == asset["sha256"]
        with open(os.path.join(dist, asset["checksumFile"])) as fh:
            assert fh.read() == f"{asset['sha256']}  {asset['file']}\n"
    names = sorted(os.listdir(dist))
    index_name = f"browser-pilot-{index['version']}-release-index.json"
    assert index_name in names and index_name + ".sha256" in names
    check = subprocess.run(["sha256sum", "-c"] + [n for n in names if n.endswith(".sha256")], cwd=dist,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_release_index_binds_one_version_protocol_skill_range_platforms_and_python(dist):
    import bp
    from bp import protocol

    index = distribution.release_index(dist)
    with open(os.path.join(distribution.ROOT, "skill", "compatibility.json")) as fh:
        compat = json.load(fh)
    assert index["version"] == bp.__version__ == compat["skillVersion"] == compat["browserPilotCli"]["testedVersion"]
    assert index["protocol"] == protocol.PROTOCOL_RANGE == compat["protocol"]
    assert index["skill"]["compatibleCliRange"] == compat["browserPilotCli"]["supportedVersionRange"] == ">=0.5.0 <1.0.0"
    assert index["skill"]["testedCliVersion"] == bp.__version__
    assert index["python"]["requiresPython"] == ">=3.9"
    platforms = {p["platform"]: p["status"] for p in index["supportedPlatforms"]}
    assert platforms == {"linux": "tested", "darwin": "untested"}


def test_wheel_sdist_and_skill_archive_carry_the_same_version(dist):
    import bp

    index = distribution.release_index(dist)
    files = {a["kind"]: os.path.join(dist, a["file"]) for a in index["assets"]}
    with zipfile.ZipFile(files["wheel"]) as zf:
        names = zf.namelist()
        assert f'__version__ = "{bp.__version__}"' in zf.read("bp/__init__.py").decode()
        commands = {n.rsplit("/", 1)[-1]: zf.read(n).decode() for n in names if ".data/scripts/" in n}
    assert "broker/scripts/observe.js" in names  # package data travels with the wheel
    assert not any(n.startswith(("tests/", "release/", "skill/")) for n in names)
    # bin/bp, installed with the interpreter's path in its #! line (pip rewrites "#!python").
    assert sorted(commands) == ["bp", "browser-pilot"]
    assert all(text.startswith("#!python\n") and "from cli.fast import main" in text for text in commands.values())
    with tarfile.open(files["skill"]) as tar:
        members = tar.getnames()
        compat = json.load(tar.extractfile("browser-pilot/compatibility.json"))
    assert "browser-pilot/SKILL.md" in members and "browser-pilot/references/recovery.md" in members
    assert compat["browserPilotCli"]["testedVersion"] == bp.__version__


def test_verify_fails_on_a_tampered_asset(dist, tmp_path):
    copy = tmp_path / "dist"
    shutil.copytree(dist, copy)
    index = distribution.release_index(str(copy))
    skill = copy / next(a["file"] for a in index["assets"] if a["kind"] == "skill")
    data = bytearray(skill.read_bytes())
    data[-1] ^= 0xFF
    skill.write_bytes(bytes(data))
    with pytest.raises(build.ReleaseError) as info:
        build.verify_release(str(copy))
    assert any("sha256 differs" in p for p in info.value.problems)


def _compat_copy(tmp_path, **changes):
    with open(os.path.join(distribution.ROOT, "skill", "compatibility.json")) as fh:
        compat = json.load(fh)
    for dotted, value in changes.items():
        node = compat
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node[key]
        node[leaf] = value
    path = tmp_path / "compatibility.json"
    path.write_text(json.dumps(compat))
    return str(path)


def test_the_real_versions_agree():
    root = distribution.ROOT
    version = build.package_version(root)
    _, cfg_version = build.python_requires(root)
    problems = build.check_versions(version, os.path.join(root, "skill", "compatibility.json"),
                                    build.protocol_range(root), setup_cfg_version=cfg_version)
    assert problems == []


@pytest.mark.parametrize("changes,needle", [
    ({"browserPilotCli.testedVersion": "0.4.9"}, "testedVersion"),
    ({"skillVersion": "0.6.0"}, "skillVersion"),
    ({"browserPilotCli.minimumVersion": "0.6.0", "browserPilotCli.supportedVersionRange": ">=0.6.0 <1.0.0"},
     "outside the skill's range"),
    ({"browserPilotCli.supportedVersionRange": ">=0.5.0 <2.0.0"}, "supportedVersionRange"),
    ({"protocol": {"min": {"major": 1, "minor": 0}, "max": {"major": 1, "minor": 9}}}, "protocol"),
])
def test_a_mismatched_compatibility_file_fails_the_check(tmp_path, changes, needle):
    root = distribution.ROOT
    problems = build.check_versions(build.package_version(root), _compat_copy(tmp_path, **changes),
                                    build.protocol_range(root))
    assert any(needle in p for p in problems), problems


def test_a_setup_cfg_with_its_own_version_fails_the_check():
    root = distribution.ROOT
    problems = build.check_versions(build.package_version(root), os.path.join(root, "skill", "compatibility.json"),
                                    build.protocol_range(root), setup_cfg_version="0.5.0")
    assert any("one version source" in p for p in problems)


def test_an_index_of_another_version_fails_the_check(dist):
    root = distribution.ROOT
    index = dict(distribution.release_index(dist), version="0.5.1")
    problems = build.check_versions(build.package_version(root), os.path.join(root, "skill", "compatibility.json"),
                                    build.protocol_range(root), index=index)
    assert any("release index version" in p for p in problems)


def test_release_command_exits_nonzero_before_building_when_the_skill_disagrees(tmp_path):
    skill = tmp_path / "skill"
    shutil.copytree(os.path.join(distribution.ROOT, "skill"), skill)
    (skill / "compatibility.json").write_text(open(_compat_copy(tmp_path, **{"browserPilotCli.testedVersion": "9.9.9"})).read())
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "release.build", "--out", str(out), "--skill-dir", str(skill),
                           "--no-isolation"], cwd=distribution.ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "release check failed" in proc.stderr and "testedVersion '9.9.9'" in proc.stderr
    assert not out.exists() or not os.listdir(out)
