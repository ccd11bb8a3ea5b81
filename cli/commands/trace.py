"""Trace family: bp trace start [--screenshots], bp trace stop, bp trace export FILE.html.

Broker side: broker/commands/trace.py (recording: broker/trace/book.py; the HTML:
broker/trace/report.py). The CLI resolves where the file goes (bp/outputs.py), as for every
exported file; the broker, which holds the trace, writes it.
"""

import click

from bp import outputs, protocol
from cli.build import given
from cli.commands import send


def _state(r):
    t = r.get("trace")
    if not t:
        return "no trace"
    state = "recording" if t["recording"] else "stopped"
    extra = " with screenshots" if t.get("screenshots") else ""
    line = f"trace {state}{extra}: {t['steps']} step(s), {t['images']} image(s)"
    if t.get("dropped"):
        line += f", {t['dropped']} older step(s) dropped"
    return line


@click.group()
def trace():
    """Record what this Agent does, for the person to look at afterwards.

    A trace keeps, in the service's memory, every command of this client key in order: its
    arguments with secrets replaced, result code, evidence, URL and title, duration; with
    --screenshots also a small picture of the tab after each command that acted. 'bp trace
    export' writes it as one HTML file that opens in any browser, offline.

    \b
    Example:  bp trace start --screenshots
    Example:  bp trace export session.html
    """


@trace.command("start")
@click.option("--screenshots", is_flag=True, help="Also keep a small picture of the tab after each command that acted.")
def start(screenshots):
    """Start recording this Agent's commands (a trace already kept for this key is replaced).

    \b
    Example:  bp trace start
    Example:  bp trace start --screenshots
    """
    send(protocol.OP_TRACE_START, given({}, screenshots=screenshots), _state)


@trace.command("stop")
def stop():
    """Stop recording; the trace is kept for 'bp trace export' until 'bp disconnect'.

    \b
    Example:  bp trace stop
    """
    send(protocol.OP_TRACE_STOP, {}, _state)


@trace.command("export")
@click.argument("file", metavar="FILE.html")
@click.option("--overwrite", is_flag=True, help="Replace FILE if it exists (otherwise: file_exists).")
def export(file, overwrite):
    """Write the trace as one self-contained HTML file: a timeline with thumbnails, each step's
    evidence, filters by command and outcome, failures and unknown outcomes marked. No network,
    no external file; typed text, passwords, cookie and header values are never in it. An
    existing FILE is kept (file_exists) unless --overwrite; a symbolic link is refused. Relative
    names go under the current directory or BROWSER_PILOT_OUTPUT_DIR.

    \b
    Example:  bp trace export session.html
    Example:  bp trace export /tmp/run.html --overwrite
    """
    args = given(outputs.request_args(file), overwrite=overwrite)
    from cli.commands.files import file_result

    send(protocol.OP_TRACE_EXPORT, args,
         lambda r: file_result(r) + f" {r['steps']} step(s), {r['images']} image(s)", awaited="the trace's export")
