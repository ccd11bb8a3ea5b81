"""Files on real Chromium: screenshot / pdf exports and their path rules, uploads, downloads
copied into private storage (Chrome's file left intact), and storage quotas."""

import json
import os
import shutil
import stat
import struct
import subprocess

import pytest

from tests import helpers
from tests.helpers import bp, ok, ref_of

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == PNG
    return struct.unpack(">II", head[16:24])


def private_file(path):
    st = os.lstat(path)
    return stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600


def artifact_entries(home):
    root = os.path.join(home, "artifacts")
    return os.listdir(root) if os.path.isdir(root) else []


@pytest.fixture
def outdir():
    with helpers.scratch_dir("bpo-") as path:
        yield path


@pytest.fixture
def files_env(connected, outdir):
    return dict(connected, BROWSER_PILOT_OUTPUT_DIR=outdir)


PAGE = """<style>body{margin:0} #box{position:absolute;left:40px;top:30px;width:120px;height:50px;background:#36c}</style>
<div id=box></div><button style="margin-top:120px">First</button> <a href="#x">Second</a>
<div style="height:3000px">tall</div>"""


# --- screenshot / pdf ----------------------------------------------------------------------------


def test_screenshot_goes_to_the_output_dir_private_png_with_its_size(home, files_env, outdir, pages):
    opened = ok(home, files_env, "open", pages.page(PAGE))
    result = ok(home, files_env, "screenshot")
    name = os.path.basename(result["file"])
    assert os.path.dirname(result["file"]) == outdir and name.startswith("screenshot-") and name.endswith(".png")
    assert set(result) == {"ok", "file", "mimeType", "sizeBytes", "width", "height"}
    assert result["mimeType"] == "image/png" and result["sizeBytes"] == os.path.getsize(result["file"])
    assert private_file(result["file"])
    assert png_size(result["file"]) == (result["width"], result["height"])
    assert (result["width"], result["height"]) == (opened["page"]["viewportWidth"], opened["page"]["viewportHeight"])
    assert "data" not in result.get("file", "") and len(json.dumps(result)) < 1000  # metadata, never bytes
    assert artifact_entries(home) == []  # the private copy went once exported


def test_screenshot_full_page_selector_and_explicit_absolute_path(home, files_env, outdir, pages):
    opened = ok(home, files_env, "open", pages.page(PAGE))
    elsewhere = helpers.short_tmpdir("bpe-")
    try:
        target = os.path.join(elsewhere, "full.png")
        full = ok(home, files_env, "screenshot", target, "--full")
        assert full["file"] == target and private_file(target)
        assert full["height"] > opened["page"]["viewportHeight"] and full["height"] >= 3000
        assert (full["modelWidth"], full["modelHeight"]) == (
            round(full["width"] * 1568 / full["height"]), 1568)
        box = ok(home, files_env, "screenshot", "box.png", "--selector", "#box")
        assert box["file"] == os.path.join(outdir, "box.png")
        assert (box["width"], box["height"]) == (120, 50) == png_size(box["file"])
        missing = bp(home, "screenshot", "--selector", "#nope", env=files_env)
        assert missing.code == "invalid_argument" and missing.json["context"]["field"] == "selector", missing
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


def test_screenshot_default_is_the_current_directory_of_the_cli(home, connected, outdir, pages):
    ok(home, connected, "open", pages.page(PAGE))
    proc = subprocess.run([helpers.BP, "screenshot", "here.png"], env=connected, cwd=outdir, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, proc
    assert json.loads(proc.stdout)["file"] == os.path.join(outdir, "here.png")
    assert private_file(os.path.join(outdir, "here.png"))


def test_output_paths_that_escape_or_end_in_a_symlink_are_refused_and_nothing_is_written(home, files_env, outdir, pages):
    ok(home, files_env, "open", pages.page(PAGE))
    victim_dir = helpers.short_tmpdir("bpv-")
    try:
        victim = os.path.join(victim_dir, "victim.txt")
        with open(victim, "w") as fh:
            fh.write("untouched")
        os.symlink(victim, os.path.join(outdir, "link.png"))
        refused = bp(home, "screenshot", "link.png", env=files_env)
        assert refused.code == "invalid_argument", refused
        assert refused.json["context"] == {"field": "file", "reason": "symlink_destination"}
        assert open(victim).read() == "untouched" and os.path.islink(os.path.join(outdir, "link.png"))
        # The same through an explicit absolute path: never written through.
        refused = bp(home, "screenshot", os.path.join(outdir, "link.png"), env=files_env)
        assert refused.json["context"]["reason"] == "symlink_destination", refused
        # `..` and a symlinked directory leading out of the output directory.
        climb = bp(home, "screenshot", "../out.png", env=files_env)
        assert climb.json["context"] == {"field": "file", "reason": "outside_output_dir"}, climb
        os.symlink(victim_dir, os.path.join(outdir, "sub"))
        through = bp(home, "screenshot", "sub/out.png", env=files_env)
        assert through.json["context"] == {"field": "file", "reason": "outside_output_dir"}, through
        assert sorted(os.listdir(victim_dir)) == ["victim.txt"]
        relative = bp(home, "screenshot", env=dict(files_env, BROWSER_PILOT_OUTPUT_DIR="relative/dir"))
        assert relative.json["context"]["field"] == "outputDir", relative
        assert sorted(os.listdir(outdir)) == ["link.png", "sub"]  # no temporary file left behind
        # An existing regular file is replaced only with --overwrite (atomically, private mode).
        existing = os.path.join(outdir, "existing.png")
        with open(existing, "w") as fh:
            fh.write("old")
        os.chmod(existing, 0o644)
        assert bp(home, "screenshot", "existing.png", env=files_env).code == "file_exists"
        ok(home, files_env, "screenshot", "existing.png", "--overwrite")
        assert open(existing, "rb").read(8) == PNG and private_file(existing)
    finally:
        shutil.rmtree(victim_dir, ignore_errors=True)


def test_annotated_screenshot_draws_refs_without_touching_the_page(home, files_env, outdir, pages):
    snap = ok(home, files_env, "open", pages.page(PAGE))
    count = "document.querySelectorAll('*').length + ':' + document.documentElement.outerHTML.length"
    before = ok(home, files_env, "eval", count)["value"]
    plain = ok(home, files_env, "screenshot", "plain.png")
    everything = ok(home, files_env, "screenshot", "--annotate", "all.png")
    assert everything["annotationCount"] == len(snap["elements"]) == 2
    assert everything["file"] == os.path.join(outdir, "all.png")
    assert (everything["width"], everything["height"]) == (plain["width"], plain["height"])
    assert open(everything["file"], "rb").read() != open(plain["file"], "rb").read()
    one = ok(home, files_env, "screenshot", "--annotate", str(ref_of(snap, "button", "First")), "one.png")
    assert one["annotationCount"] == 1
    assert ok(home, files_env, "eval", count)["value"] == before
    unknown = bp(home, "screenshot", "--annotate", "99", env=files_env)
    assert unknown.code == "stale_ref", unknown


def test_pdf_is_a_private_pdf_file(home, files_env, outdir, pages):
    ok(home, files_env, "open", pages.page("<h1>Report</h1>"))
    result = ok(home, files_env, "pdf", "--landscape")
    assert os.path.basename(result["file"]).startswith("page-") and result["file"].endswith(".pdf")
    assert result["mimeType"] == "application/pdf" and set(result) == {"ok", "file", "mimeType", "sizeBytes"}
    with open(result["file"], "rb") as fh:
        data = fh.read()
    assert data[:5] == b"%PDF-" and len(data) == result["sizeBytes"] and b"/Type /Page" in data.replace(b"/Type/Page", b"/Type /Page")
    assert private_file(result["file"])


# --- uploads -------------------------------------------------------------------------------------

UPLOAD_PAGE = """<label>Resume <input type=file id=f></label>
<input type=file id=g><p id=out></p>
<script>document.getElementById('g').addEventListener('change', e => out.textContent = 'changed')</script>"""


@pytest.fixture
def upload_source():
    """upload_source(name, data): a file of the test's own, in a folder removed afterwards."""
    folders = []

    def make(name, data, prefix="bpsecret-"):
        folder = helpers.short_tmpdir(prefix)
        folders.append(folder)
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    yield make
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def test_upload_assigns_a_private_copy_and_never_reveals_the_local_path(home, files_env, pages, upload_source):
    source = upload_source("cv-secret.txt", b"hello upload\n")
    source_dir = os.path.dirname(source)
    snap = ok(home, files_env, "open", pages.page(UPLOAD_PAGE))
    by_nth = bp(home, "upload", source, "--nth", "2", env=files_env)
    assert by_nth.rc == 0, by_nth
    assert helpers.without_settle(by_nth.json["evidence"]) == {"action": "upload", "status": "verified",
                                                               "expectedFileCount": 1, "fileCount": 1,
                                                               "nameMatched": True}
    seen = ok(home, files_env, "eval", "[g.files[0].name, g.files[0].size, out.textContent, "
                                       "await g.files[0].text()]")["value"]
    assert seen == ["cv-secret.txt", 13, "changed", "hello upload\n"]
    ref = [e["ref"] for e in snap["elements"] if e["role"] == "button"][0]
    by_ref = bp(home, "upload", source, "--ref", str(ref), env=files_env)
    assert by_ref.rc == 0, by_ref
    assert by_ref.json["evidence"]["status"] == "verified"
    assert ok(home, files_env, "eval", "f.files[0].name")["value"] == "cv-secret.txt"
    # Relative to the CLI's cwd works too.
    proc = subprocess.run([helpers.BP, "upload", "cv-secret.txt"], env=files_env, cwd=source_dir,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, proc
    outputs = [by_nth.stdout, by_nth.stderr, by_ref.stdout, by_ref.stderr, proc.stdout, proc.stderr]
    with open(os.path.join(home, "logs", "broker.log"), errors="replace") as fh:
        outputs.append(fh.read())
    assert not any(source_dir in text or "bpsecret" in text for text in outputs)


CLEARING_UPLOADER = """<input type=file id=h><ul id=taken></ul>
<script>h.addEventListener('change', () => {
  for (const f of h.files) taken.insertAdjacentHTML('beforeend', '<li>' + f.name + '</li>');
  h.value = '';  // as Quasar's uploader does: the same file can be chosen again
});</script>"""


def test_an_uploader_that_empties_its_input_at_once_is_verified_as_given_the_file(home, files_env, pages,
                                                                                  upload_source):
    source = upload_source("notes.txt", b"notes\n", prefix="bpup-")
    ok(home, files_env, "open", pages.page(CLEARING_UPLOADER))
    evidence = ok(home, files_env, "upload", source)["evidence"]
    assert helpers.without_settle(evidence) == {"action": "upload", "status": "verified", "expectedFileCount": 1,
                                                "fileCount": 1, "nameMatched": True,
                                                "effects": ["input_cleared_by_page"]}
    assert ok(home, files_env, "eval", "[h.files.length, taken.textContent]")["value"] == [0, "notes.txt"]
    # The note is what the input held when the change event reached Browser Pilot's listener:
    # a page that empties the input before that (its own earlier capture listener) was never
    # seen holding the file, and the evidence says so.
    ok(home, files_env, "open", pages.page("<input type=file id=k>"
                                           "<script>window.addEventListener('change', () => { k.value = ''; }, true)"
                                           "</script>"))
    second = ok(home, files_env, "upload", source)["evidence"]
    assert (second["status"], second["reason"], second["fileCount"]) == ("mismatch", "file_count_mismatch", 0)


def test_upload_refuses_symlinks_directories_and_missing_files_without_naming_them(home, files_env, pages):
    source_dir = helpers.short_tmpdir("bpsecret-")
    try:
        real = os.path.join(source_dir, "real.txt")
        with open(real, "w") as fh:
            fh.write("x")
        link = os.path.join(source_dir, "link.txt")
        os.symlink(real, link)
        ok(home, files_env, "open", pages.page(UPLOAD_PAGE))
        for path, reason in ((link, "symlink"), (source_dir, "not_regular_file"),
                             (os.path.join(source_dir, "missing.txt"), "not_found")):
            result = bp(home, "upload", path, env=files_env)
            assert result.code == "invalid_argument", result
            assert result.json["context"] == {"field": "filepath", "reason": reason}
            assert "bpsecret" not in result.stdout + result.stderr
        none = bp(home, "upload", real, "--nth", "3", env=files_env)
        assert none.code == "invalid_argument" and none.json["context"]["field"] == "nth", none
        not_input = ok(home, files_env, "open", pages.page("<button>Plain</button>"))
        wrong = bp(home, "upload", real, "--ref", str(ref_of(not_input, "button", "Plain")), env=files_env)
        assert wrong.json["context"] == {"field": "ref", "reason": "not_file_input"}, wrong
        assert ok(home, files_env, "eval", "document.querySelectorAll('input').length")["value"] == 0
        assert artifact_entries(home) == []  # nothing copied for a refused upload
    finally:
        shutil.rmtree(source_dir, ignore_errors=True)


# --- downloads -----------------------------------------------------------------------------------


@pytest.fixture
def dl_env(home, download_browser, outdir):
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=download_browser.root,
                         BROWSER_PILOT_OUTPUT_DIR=outdir, BROWSER_PILOT_ARTIFACT_ITEM_MAX_BYTES=4096)
    result = bp(home, "connect", env=env)
    assert result.rc == 0, result
    return env


def _download(home, env, pages, browser, name, content):
    link = pages.url(f"/attachment?name={name}&content={content}")
    page = ok(home, env, "open", pages.page(f'<a href="{link}">Get {name}</a>'))
    ok(home, env, "click", str(ref_of(page, "link", f"Get {name}")))
    saved = os.path.join(browser.saved, name)
    assert helpers.wait_until(lambda: any(d["fileName"] == name and d["state"] not in ("in_progress", "copying")
                                          for d in ok(home, env, "downloads")["downloads"]), timeout=20)
    return saved


def test_a_download_is_copied_listed_and_exported_while_chromes_file_stays(home, dl_env, outdir, pages,
                                                                          download_browser):
    name = f"report-{os.path.basename(home)}.txt"
    saved = _download(home, dl_env, pages, download_browser, name, "hello-download")
    listed = ok(home, dl_env, "downloads")["downloads"]
    assert len(listed) == 1
    row = listed[0]
    assert set(row) == {"index", "id", "fileName", "mimeType", "sizeBytes", "state", "createdAt", "expiresAt"}
    assert (row["index"], row["fileName"], row["state"], row["sizeBytes"], row["mimeType"]) == \
        (1, name, "completed", 14, "text/plain")
    assert row["id"].startswith("download-") and row["expiresAt"] > row["createdAt"]
    exported = ok(home, dl_env, "download", "1", "out.bin")
    assert exported == {"ok": True, "file": os.path.join(outdir, "out.bin"), "mimeType": "text/plain", "sizeBytes": 14}
    assert open(exported["file"], "rb").read() == b"hello-download" and private_file(exported["file"])
    again = ok(home, dl_env, "download", row["id"])  # as often as wanted; default name = Chrome's
    assert again["file"] == os.path.join(outdir, name)
    assert open(saved, "rb").read() == b"hello-download"  # Chrome's original, untouched
    # Another Agent sees nothing of it.
    other = dict(dl_env, BROWSER_PILOT_CLIENT_KEY="other-agent")
    assert ok(home, other, "downloads")["downloads"] == []
    assert bp(home, "download", row["id"], env=other).code == "artifact_not_found"
    assert bp(home, "download", "7", env=dl_env).code == "artifact_not_found"
    # Released with the key: the copy goes, Chrome's file stays.
    ok(home, other, "disconnect")
    assert ok(home, dl_env, "disconnect")["brokerStopped"] is True
    assert artifact_entries(home) == []
    assert open(saved, "rb").read() == b"hello-download"


def test_quota_refuses_only_browser_pilots_copy_and_leaves_nothing_partial(home, dl_env, outdir, pages,
                                                                          download_browser):
    name = f"big-{os.path.basename(home)}.bin"
    content = "x" * 5000  # over the 4096-byte item quota of this broker
    saved = _download(home, dl_env, pages, download_browser, name, content)
    row = ok(home, dl_env, "downloads")["downloads"][0]
    assert (row["state"], row["reason"], row["fileName"]) == ("failed", "quota_exceeded", name)
    refused = bp(home, "download", "1", "big.bin", env=dl_env)
    assert refused.code == "quota_exceeded", refused
    assert open(saved).read() == content  # Chrome's download completed and is untouched
    # A screenshot bigger than the item quota: refused, nothing left in storage or the output dir.
    ok(home, dl_env, "open", pages.page(PAGE))
    shot = bp(home, "screenshot", "shot.png", env=dl_env)
    assert shot.code == "quota_exceeded", shot
    assert shot.json["context"]["limit"] == "item"
    assert os.listdir(outdir) == [] and artifact_entries(home) == []


def test_downloads_are_oldest_first_with_stable_indexes_and_wait_reports_the_finished_row(home, dl_env, outdir, pages,
                                                                                         download_browser):
    tag = os.path.basename(home)
    first, second = f"first-{tag}.txt", f"second-{tag}.txt"
    link = pages.url(f"/attachment?name={first}&content=one")
    page = ok(home, dl_env, "open", pages.page(f'<a href="{link}">Get it</a>'))
    ok(home, dl_env, "click", str(ref_of(page, "link", "Get it")))
    # The wait ends when the download is finished and copied, with its 'bp downloads' row.
    waited = ok(home, dl_env, "--timeout", "30000", "wait", "--download")["matched"]
    assert set(waited) == {"index", "id", "fileName", "mimeType", "sizeBytes", "state", "createdAt", "expiresAt"}
    assert (waited["index"], waited["fileName"], waited["state"], waited["sizeBytes"]) == (1, first, "completed", 3)
    assert ok(home, dl_env, "downloads")["downloads"] == [waited]
    _download(home, dl_env, pages, download_browser, second, "two!")
    listed = ok(home, dl_env, "downloads")["downloads"]
    # Oldest first, and "1" still means the first download after a second one arrived.
    assert [(d["index"], d["fileName"]) for d in listed] == [(1, first), (2, second)]
    assert ok(home, dl_env, "download", "1", "one.txt")["sizeBytes"] == 3
    assert open(os.path.join(outdir, "one.txt")).read() == "one"


@pytest.mark.parametrize("selector", ["report.csv", "0", "99999999999", "-1"])
def test_a_download_selector_that_names_nothing_is_artifact_not_found(home, selector):
    result = bp(home, "download", "--", selector)
    assert result.code == "artifact_not_found", result
    assert result.json["context"] == {"field": "selector"}


# --- no clobbering (issue 27 item 5) ---------------------------------------------------------------


@pytest.mark.parametrize("command", ["screenshot", "pdf"])
def test_an_existing_file_is_never_replaced_without_overwrite(home, files_env, outdir, pages, command):
    ok(home, files_env, "open", pages.page(PAGE))
    name = "exist.png" if command == "screenshot" else "exist.pdf"
    target = os.path.join(outdir, name)
    with open(target, "wb") as fh:
        fh.write(b"the person's file")
    for given in (name, target):  # relative (in the output dir) and absolute
        refused = bp(home, command, given, env=files_env)
        assert refused.rc != 0 and refused.code == "file_exists", refused
        assert refused.json["context"]["path"] == target and refused.json["retryable"] is False
        assert "--overwrite" in refused.json["remediation"]["message"]
    assert open(target, "rb").read() == b"the person's file" and os.listdir(outdir) == [name]
    replaced = ok(home, files_env, command, name, "--overwrite")
    assert replaced["file"] == target and open(target, "rb").read() != b"the person's file"
    assert os.path.getsize(target) == replaced["sizeBytes"] and os.listdir(outdir) == [name]


def test_a_download_under_the_servers_name_never_replaces_a_file(home, dl_env, outdir, pages, download_browser):
    project = os.path.join(outdir, "conftest.py")
    with open(project, "w") as fh:
        fh.write("# the project's own conftest\n")
    _download(home, dl_env, pages, download_browser, "conftest.py", "pwned")
    exported = ok(home, dl_env, "download", "1")
    assert exported["file"] == os.path.join(outdir, "conftest (1).py"), exported
    assert open(exported["file"]).read() == "pwned" and private_file(exported["file"])
    again = ok(home, dl_env, "download", "1")
    assert again["file"] == os.path.join(outdir, "conftest (2).py")
    assert open(project).read() == "# the project's own conftest\n"
    assert bp(home, "download", "1", "conftest.py", env=dl_env).code == "file_exists"
    assert open(project).read() == "# the project's own conftest\n"


# --- a full disk (issue 27 item 3) -----------------------------------------------------------------


def test_a_full_output_disk_or_private_storage_is_storage_full(home, env_for, pages):
    from tests import tmpfs

    os.chmod(home, 0o700)
    with helpers.scratch_dir("bpo-") as parent:
        with tmpfs.small_tmpfs(os.path.join(parent, "out"), "256k") as out, \
                tmpfs.small_tmpfs(os.path.join(home, "artifacts"), "256k") as store:
            env = env_for(home, BROWSER_PILOT_OUTPUT_DIR=out)
            assert bp(home, "connect", env=env).rc == 0
            ok(home, env, "open", pages.page(PAGE))
            filler = tmpfs.fill(out)
            full = bp(home, "screenshot", "shot.png", env=env)
            assert full.rc != 0 and full.code == "storage_full", full
            assert full.json["context"] == {"where": "output", "reason": "disk_full"}
            assert full.json["remediation"]["code"] == "free_disk_space"
            assert sorted(os.listdir(out)) == [os.path.basename(filler)]  # nothing partial left
            os.unlink(filler)
            tmpfs.fill(store)  # now Browser Pilot's own private storage is the full one
            full = bp(home, "pdf", "page.pdf", env=env)
            assert full.code == "storage_full" and full.json["context"]["where"] == "artifacts", full
            assert os.listdir(out) == []
            assert bp(home, "disconnect", env=env).rc == 0
            assert helpers.wait_until(lambda: helpers.brokers_of(home) == [], 15)
