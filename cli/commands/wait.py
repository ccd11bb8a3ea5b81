"""bp wait: one browser-visible condition of the selected tab, until the global --timeout.

Broker side: broker/handlers/waits.py and broker/waits.py (same operation name, from bp.protocol).
"""

import click

from bp import protocol
from bp.errors import invalid_argument
from cli import client, signals
from cli.output import escape, finish

FLAGS = ("dialog", "download", "popup")


def _render(r):
    m = r.get("matched") or {}
    head = f"[wait] {r['condition']} after {r['elapsedMs']} ms"
    condition = r["condition"]
    if condition == "url":
        return f"{head}: {escape(m.get('url', ''))}"
    if condition == "text":
        match = m.get("match") or {}
        return f"{head}: {m.get('totalMatches')} match(es), first: {escape(match.get('context', ''))}"
    if condition == "selector":
        element = m.get("element") or {}
        return f"{head}: {m.get('totalMatches')} element(s), first <{escape(element.get('tagName', ''))}>"
    if condition == "dialog":
        return f"{head}: {escape(m.get('type'))} dialog {m.get('dialogId')} (answer: bp dialog {m.get('dialogId')} --accept|--dismiss)"
    if condition == "popup":
        return f"{head}: {m.get('targetId')} {escape(m.get('url', ''))} (select: bp tab {m.get('targetId')})"
    line = f"{head}: {m.get('index')}. {escape(m.get('fileName') or '(no file name suggested)')} [{m.get('state')}]"
    return line + (f" (export: bp download {m.get('index')})" if m.get("state") == "completed" else "")


@click.command()
@click.option("--url", metavar="PATTERN", help="The tab's URL matches PATTERN: '*' is any text, case-insensitive, whole URL.")
@click.option("--text", metavar="TEXT", help="TEXT shows on the page (like 'bp search', case-insensitive).")
@click.option("--selector", metavar="CSS", help="An element matches CSS (present in the DOM, open shadow roots included).")
@click.option("--dialog", is_flag=True, help="A JavaScript dialog is pending on the tab.")
@click.option("--download", is_flag=True, help="A download the tab began, that no earlier wait reported, has finished.")
@click.option("--popup", is_flag=True, help="The tab opened a tab (popup) this Agent has not been shown yet.")
@click.option("--interval", type=click.IntRange(100, 5000), default=250, show_default=True, metavar="MS",
              help="Polling interval in milliseconds (100-5000).")
def wait(url, text, selector, dialog, download, popup, interval):
    """Wait until one condition holds on the selected tab; the deadline is the global --timeout.

    Give exactly one of --url, --text, --selector, --dialog, --download, --popup. A condition
    already true when the wait starts succeeds at once: --popup reports a popup of the tab that
    this Agent has not been shown yet ('bp tabs' shows it), --download a download of the tab
    that no earlier wait reported, so acting first and then waiting does not race. Waiting
    never opens a tab; other commands of the tab (and dialog answers) keep running meanwhile.

    A timeout is wait_timeout (retryable), which says nothing about what earlier commands did.

    \b
    URL patterns are globs over the whole URL, case-insensitive; only '*' is special:
      --url 'https://example.com/done'      exactly that URL
      --url '*/checkout/*'                  contains /checkout/
      --url '*example.com*'                 contains example.com
    \b
    Examples:
      bp --timeout 10000 wait --url '*/dashboard*'
      bp wait --text "Order confirmed"
      bp wait --selector '#results li' --interval 500
      bp wait --dialog && bp dialogs
      bp click 4 && bp wait --popup
      bp click 7 && bp wait --download
    """
    given = {k: v for k, v in (("url", url), ("text", text), ("selector", selector)) if v is not None}
    given.update({k: True for k, v in (("dialog", dialog), ("download", download), ("popup", popup)) if v})
    if len(given) != 1:
        raise invalid_argument("condition", "Give exactly one of --url, --text, --selector, --dialog, --download, --popup.",
                               given=sorted(given))
    for name in ("url", "text", "selector"):
        if name in given and not given[name].strip():
            raise invalid_argument(name, f"--{name} must not be empty.")
    args = dict(given, interval=interval)
    signals.install()
    finish(client.call(click.get_current_context().obj, protocol.OP_WAIT, args), _render)
