"""bp wait: one browser-visible condition of the selected tab, until the global --timeout.

Broker side: broker/commands/waits.py and broker/waits/conditions.py (same operation name, from bp.protocol).
"""

from bp import protocol
from cli import client, signals
from cli.commands import built
from cli.declare import IntRange, command, command_settings, option
from cli.output import escape, finish

FLAGS = ("dialog", "download", "popup", "idle")


def _render(r):
    m = r.get("matched") or {}
    head = f"[wait] {r['condition']} after {r['elapsedMs']} ms"
    if r.get("timeoutMs"):
        head += f" (of {r['timeoutMs']} ms)"
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
    if condition == "idle":
        return f"{head}: no request pending and the page unchanged for {m.get('quietMs')} ms" + (
            f" ({m['longLived']} long-lived connection(s) not waited for)" if m.get("longLived") else "")
    if condition == "popup":
        return f"{head}: {m.get('targetId')} {escape(m.get('url', ''))} (select: bp tab {m.get('targetId')})"
    line = f"{head}: {m.get('index')}. {escape(m.get('fileName') or '(no file name suggested)')} [{m.get('state')}]"
    return line + (f" (export: bp download {m.get('index')})" if m.get("state") == "completed" else "")


@command()
@option("--url", metavar="PATTERN", help="The tab's URL matches PATTERN: '*' is any text, case-insensitive, whole URL.")
@option("--text", metavar="TEXT", help="TEXT shows on the page, visibly (like 'bp search', case-insensitive).")
@option("--selector", metavar="CSS", help="A visible element matches CSS (open shadow roots included).")
@option("--dialog", is_flag=True, help="A JavaScript dialog is pending on the tab.")
@option("--download", is_flag=True, help="A download the tab began, that no earlier wait reported, has finished.")
@option("--popup", is_flag=True, help="The tab opened a tab (popup) this Agent has not been shown yet.")
@option("--idle", is_flag=True, help="The page is idle: no request pending and no DOM change for 0.5 s "
              "(WebSocket, EventSource and requests open over 5 s are not waited for).")
@option("--hidden", is_flag=True, help="With --text/--selector: a match counts even when it is not visible.")
@option("--interval", type=IntRange(100, 5000), default=250, show_default=True, metavar="MS",
              help="Polling interval in milliseconds (100-5000).")
@option("--timeout", "timeout_ms", type=IntRange(protocol.TIMEOUT_MIN_MS, protocol.TIMEOUT_MAX_MS),
              metavar="MS", help="How long to wait, in milliseconds (1-300000; default: the global --timeout "
              f"if given, else {protocol.WAIT_TIMEOUT_DEFAULT_MS}).")
def wait(**values):
    """Wait until one condition holds on the selected tab, at most --timeout (default 30 s).

    Give exactly one of --url, --text, --selector, --dialog, --download, --popup, --idle. A condition
    already true when the wait starts succeeds at once: --popup reports a popup of the tab that
    this Agent has not been shown yet ('bp tabs' shows it), --download a download of the tab
    that no earlier wait reported, so acting first and then waiting does not race. Waiting
    never opens a tab; other commands of the tab (and dialog answers) keep running meanwhile.

    The answer says the deadline it used (timeoutMs). A timeout is wait_timeout (retryable),
    which says nothing about what earlier commands did.

    \b
    URL patterns are globs over the whole URL, case-insensitive; only '*' is special:
      --url 'https://example.com/done'      exactly that URL
      --url '*/checkout/*'                  contains /checkout/
      --url '*example.com*'                 contains example.com
    \b
    Examples:
      bp wait --url '*/dashboard*' --timeout 10000
      bp wait --text "Order confirmed"
      bp wait --selector '#results li' --interval 500
      bp wait --dialog && bp dialogs
      bp click 4 && bp wait --popup
      bp click 7 && bp wait --download
      bp open https://app.example && bp wait --idle
    """
    timeout_ms = values.pop("timeout_ms")  # the call's deadline, not an argument of the request
    args = built(wait_request, values)
    settings = command_settings()
    if timeout_ms is None and not settings.timeout_given:
        timeout_ms = protocol.WAIT_TIMEOUT_DEFAULT_MS
    if timeout_ms is not None:
        settings = client.Settings(settings.client_key, settings.request_id, timeout_ms)
    signals.install()
    from cli import progress

    progress.expect(_awaited({k: v for k, v in args.items() if k not in ("interval", "hidden")}), settings.timeout_ms)
    reply = client.call(settings, protocol.OP_WAIT, args)
    if reply.get("code") == "wait_timeout" and not reply.get("hint"):
        reply["hint"] = f"Waited {settings.timeout_ms} ms; give 'bp wait ... --timeout MS' to wait longer."
    finish(reply, _render)


def wait_request(v):
    from bp.errors import invalid_argument

    given = {name: v[name] for name in ("url", "text", "selector") if v[name] is not None}
    given.update({name: True for name in ("dialog", "download", "popup", "idle") if v[name]})
    if len(given) != 1:
        raise invalid_argument("condition", "Give exactly one of --url, --text, --selector, --dialog, --download, --popup, "
                               "--idle.", given=sorted(given))
    for name in ("url", "text", "selector"):
        if name in given and not given[name].strip():
            raise invalid_argument(name, f"--{name} must not be empty.")
    args = dict(given, interval=v["interval"])
    if v["hidden"]:
        args["hidden"] = True
    return args


def _awaited(given):
    """What the wait is for, in the words of its option (shown by the progress line)."""
    (name, value), = given.items()
    if value is True:
        return f"--{name}"
    return f"--{name} {value[:40]!r}" + ("…" if len(value) > 40 else "")
