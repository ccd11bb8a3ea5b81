"""Files family: screenshot, pdf, downloads, download, upload.

Broker side: broker/commands/files.py (same operation names, from bp.protocol). The CLI resolves
where a file goes (bp/outputs.py: absolute FILE, else BROWSER_PILOT_OUTPUT_DIR, else the current
directory) and sends that; the broker, which holds the bytes, writes the file. Replies carry
metadata, never bytes.
"""

import os
import re

import click

from bp import outputs, protocol
from bp.errors import BPError, invalid_argument
from cli import client, render
from cli.build import given
from cli.commands import regular_file, send
from cli.output import escape, finish

REFS_RE = re.compile(r"^[0-9]{1,5}(,[0-9]{1,5})*$")
UPLOAD_MAX_BYTES = 64 * 1024 * 1024  # the broker's item quota may be lower (quota_exceeded)


def file_result(r):
    line = f"[file] {escape(r['file'])} ({escape(r['mimeType'])}, {r['sizeBytes']} bytes"
    if r.get("width"):
        line += f", {r['width']}x{r['height']}"
    if r.get("modelWidth"):
        line += f", model size {r['modelWidth']}x{r['modelHeight']}"
    if "annotationCount" in r:
        line += f", {r['annotationCount']} refs annotated"
    return line + ")"


@click.command()
@click.argument("file", required=False)
@click.option("-f", "--full", is_flag=True, help="The whole page, not just the viewport.")
@click.option("--selector", metavar="CSS", help="Only the first element matching CSS (its box).")
@click.option("--annotate", is_flag=False, flag_value="", default=None, metavar="[REFS]",
              help="Draw numbered boxes for the latest snapshot's refs (all, up to 200, or a comma list).")
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists (otherwise an existing file is file_exists).")
def screenshot(file, full, selector, annotate, overwrite):
    """Save a PNG of the selected tab to FILE and print where it went (never the bytes).

    FILE: an absolute path, or a name inside BROWSER_PILOT_OUTPUT_DIR (else the current
    directory); default screenshot-<UTC time>.png. An existing FILE is never replaced unless
    --overwrite (file_exists); a default name that exists becomes 'name (1).png'; a symbolic link
    is refused. --annotate draws the refs on the image only: the page is not touched.

    \b
    Example:  bp screenshot
    Example:  bp screenshot page.png --full
    Example:  bp screenshot --annotate 1,4,7 refs.png
    """
    refs = None
    if annotate is not None and annotate != "" and not REFS_RE.match(annotate):
        # `--annotate out.png`: the optional value was the file name.
        if file is not None:
            raise click.BadParameter("REFS must be a comma list of ref numbers, e.g. 1,4,7", param_hint="--annotate")
        file, annotate = annotate, ""
    if annotate:
        refs = sorted({int(r) for r in annotate.split(",")})
        if not all(1 <= r <= protocol.MAX_REF for r in refs) or len(refs) > 200:
            raise click.BadParameter(f"refs are 1-{protocol.MAX_REF}, at most 200 of them", param_hint="--annotate")
    modes = [name for name, on in (("--full", full), ("--selector", selector is not None),
                                   ("--annotate", annotate is not None)) if on]
    if len(modes) > 1:
        raise click.UsageError(f"{modes[0]} and {modes[1]} cannot be combined (--annotate is viewport only).")
    args = given(outputs.request_args(file, overwrite=overwrite), full=full)
    if selector is not None:
        args["selector"] = selector
    if annotate is not None:
        args["annotate"] = refs
    send(protocol.OP_SCREENSHOT, args, file_result, awaited="the screenshot")


@click.command()
@click.argument("file", required=False)
@click.option("--landscape", is_flag=True, help="Landscape pages.")
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists (otherwise an existing file is file_exists).")
def pdf(file, landscape, overwrite):
    """Print the selected tab to a PDF file and print where it went.

    FILE as for 'bp screenshot'; default page-<UTC time>.pdf. Printing works in headless Chrome;
    a headed browser may refuse it.

    \b
    Example:  bp pdf report.pdf --landscape
    """
    args = given(outputs.request_args(file, overwrite=overwrite), landscape=landscape)
    send(protocol.OP_PDF, args, file_result, awaited="the PDF of the page")


def _downloads_view(r):
    if not r["downloads"]:
        return "(no downloads)"
    lines = []
    for d in r["downloads"]:
        size = f"{d['sizeBytes']} bytes" if "sizeBytes" in d else "size unknown"
        lines.append(f"{d['index']}. {escape(d['fileName'])} [{d['state']}] {size} {d['id']}")
    return "\n".join(lines)


@click.command()
def downloads():
    """List the downloads this Agent's tabs began, oldest first (index 1 = the first; an index
    keeps its meaning while the download is listed).

    Each finished download is copied into Browser Pilot's private storage (Chrome's own file is
    never moved or deleted); export a copy with 'bp download' until it expires.

    \b
    Example:  bp downloads
    """
    finish(client.call(click.get_current_context().obj, protocol.OP_DOWNLOADS, {}), _downloads_view)


@click.command()
@click.argument("selector")
@click.argument("file", required=False)
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists (otherwise an existing file is file_exists).")
def download(selector, file, overwrite):
    """Export a finished download (INDEX from 'bp downloads', or its id) to FILE.

    FILE as for 'bp screenshot'; default: the download's own file name, made unique
    ('name (1).ext') if a file of that name exists: nothing is ever replaced without --overwrite.
    The answer's `file` is the path written. Export as often as needed until the copy expires.

    \b
    Example:  bp download 1 report.csv
    """
    if selector.isascii() and selector.isdigit() and len(selector) <= 10 and 1 <= int(selector) <= 2**31 - 1:
        value = int(selector)
    elif selector.startswith("download-") and len(selector) <= 64:
        value = selector
    else:
        # Nothing of this Agent's can have that name: unknown, as for an index no longer listed.
        raise BPError("artifact_not_found", "No such download for this Agent; give an index from 'bp downloads' "
                      "or a download id (download-…).", context={"field": "selector"})
    args = outputs.request_args(file, overwrite=overwrite)
    args["selector"] = value
    send(protocol.OP_DOWNLOAD, args, file_result, awaited="the download's export")


def _upload_source(path):
    """The absolute path of a regular file the caller may upload. Errors never name the path."""
    try:
        absolute = os.path.abspath(path)
    except OSError:
        raise invalid_argument("filepath", "The current directory is not available; give an absolute path.") from None
    st = regular_file(absolute, "filepath", "The file to upload")
    if st.st_size > UPLOAD_MAX_BYTES:
        raise invalid_argument("filepath", f"The file to upload is larger than {UPLOAD_MAX_BYTES} bytes.",
                               reason="too_large", maxBytes=UPLOAD_MAX_BYTES)
    if not os.access(absolute, os.R_OK):
        raise invalid_argument("filepath", "The file to upload cannot be read.", reason="not_readable")
    return absolute


@click.command()
@click.argument("filepath")
@click.option("--ref", type=click.IntRange(1, protocol.MAX_REF), help="The file input's ref (or its label's) from the latest snapshot.")
@click.option("--nth", type=click.IntRange(1, 10000), help="The page's Nth file input (default 1).")
@click.option("-l", "--limit", type=click.IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def upload(filepath, ref, nth, limit):
    """Assign the local file FILEPATH to a file input of the selected tab.

    The file (regular, not a symbolic link, at most 64 MiB) is copied into Browser Pilot's
    private storage and the copy is assigned; the page sees its base name. Evidence reports the
    file count and whether the name matches; the local path is never printed or logged.

    \b
    Example:  bp upload ./cv.pdf
    Example:  bp upload /home/me/photo.jpg --ref 5
    """
    if ref is not None and nth is not None:
        raise click.UsageError("Give at most one of --ref and --nth.")
    args = {"path": _upload_source(filepath), "limit": limit}
    if ref is not None:
        args["ref"] = ref
    elif nth is not None:
        args["nth"] = nth
    send(protocol.OP_UPLOAD, args, render.observation)
