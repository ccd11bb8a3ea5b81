"""Network family: bp net (journal), net show, net block/mock/headers, net rules, net remove,
net clear.

Broker side: broker/commands/network.py and broker/network/journal.py (same operation names, from
bp.protocol). `bp net` with no subcommand (or only options) lists the journal.
"""

import base64
import re

import click

from bp import outputs, protocol
from bp.errors import invalid_argument
from cli.build import given
from cli.commands import regular_file, send
from cli.commands.listing import ListingGroup
from cli.output import escape

MOCK_FILE_MAX = 1024 * 1024
HEADER_RE = re.compile(r"^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,256})\s*:\s?(.*)$", re.S)


def _render_requests(r):
    rows = r.get("requests") or []
    if not rows:
        return "(no requests)"
    lines = [f"{'#':<9} {'METHOD':<7} {'STATUS':<6} {'TYPE':<10} {'TIME':>7} URL"]
    for q in rows:
        status = str(q.get("status", "ERR" if q.get("failed") else "..."))
        time_ms = f"{q['durationMs']}ms" if "durationMs" in q else ""
        lines.append(f"{q['id']:<9} {q['method']:<7} {status:<6} {q['type']:<10} {time_ms:>7} {escape(q['url'][:200])}")
    if r.get("truncated"):
        lines.append(f"(more requests match; next page: --after {r.get('nextCursor')})")
    return "\n".join(lines)


@click.group(cls=ListingGroup, invoke_without_command=False)
def net():
    """The network journal of this Agent's tabs and request rules (block, mock, add headers).

    \b
    bp net [--limit N] [--url GLOB] [--method M] [--status 200|4xx|5xx] [--type T] [--after ID]
    bp net show ID [--reveal] [--save FILE]
    bp net block PATTERN | mock PATTERN --body TEXT|--file PATH | headers PATTERN "Name: value"...
    bp net rules | remove RULE_ID | remove --all | clear

    Only requests of tabs this Agent holds are journaled (500 per Agent, oldest dropped), from
    the moment Browser Pilot first works in the tab. Rules apply to this Agent's tabs only and
    go with 'bp disconnect'. Patterns: '*' wildcards, case-insensitive, whole URL.
    """


@net.command("list", hidden=True)
@click.option("-l", "--limit", type=click.IntRange(1, 500), default=20, show_default=True,
              help="At most N requests (the latest, or the first after --after).")
@click.option("--url", "url_glob", metavar="GLOB", help="Whole-URL glob, '*' wildcards, case-insensitive.")
@click.option("--method", metavar="M", help="HTTP method, e.g. POST.")
@click.option("--status", metavar="200|4xx|5xx", help="An exact status or a class.")
@click.option("--type", "types", metavar="T[,T]", help="Resource types: document, xhr, fetch, script, image…")
@click.option("--after", metavar="ID", help="Only requests after this id (paging forward).")
def list_requests(limit, url_glob, method, status, types, after):
    """List journaled requests (oldest first)."""
    if status is not None and not re.match(r"^(?:[1-5][xX][xX]|[1-5][0-9][0-9])$", status):
        raise invalid_argument("status", "Give a status like 200, 4xx or 5xx.")
    if after is not None and not re.match(r"^(?:req-)?[0-9]{1,12}$", after):
        raise invalid_argument("after", "Give a request id like req-12.")
    args = {"limit": limit}
    for name, value in (("url", url_glob), ("method", method), ("status", status), ("type", types), ("after", after)):
        if value is not None:
            args[name] = value
    send(protocol.OP_NET, args, _render_requests)


def _render_show(r):
    lines = [f"{r['id']} {r['method']} {escape(r['url'])}"]
    if "status" in r:
        lines.append(f"status {r['status']} {escape(r.get('statusText', ''))} {escape(r.get('mimeType', ''))}")
    if r.get("error"):
        lines.append(f"error {escape(r['error'])}")
    lines.append("request headers:")
    lines += [f"  {escape(h['name'])}: {escape(h['value'])}" for h in r.get("requestHeaders", [])]
    if "postData" in r:
        lines.append(f"post data: {escape(r['postData'][:2000])}")
    if r.get("responseHeaders") is not None:
        lines.append("response headers:")
        lines += [f"  {escape(h['name'])}: {escape(h['value'])}" for h in r["responseHeaders"]]
    if r.get("bodyAvailable"):
        lines.append(f"body ({r['bodyEncoding']}{', truncated' if r.get('responseBodyTruncated') else ''}):")
        lines.append(escape(r["responseBody"][:4000]))
    return "\n".join(lines)


@net.command("show")
@click.argument("request_id", metavar="ID")
@click.option("--reveal", is_flag=True, help="Show Cookie, Set-Cookie, Authorization and API-key header values.")
@click.option("--save", "save", metavar="FILE", help="Write the response body to FILE instead (base64 decoded).")
@click.option("--overwrite", is_flag=True, help="With --save: replace FILE if it exists.")
def show(request_id, reveal, save, overwrite):
    """One request: headers (sensitive values redacted unless --reveal), post data (≤64 KiB),
    status, timing and the response body (≤64 KiB; binary bodies as base64).

    \b
    Example:  bp net show req-12
    Example:  bp net show req-12 --save body.json
    """
    args = given({"id": request_id}, reveal=reveal)
    if save is not None:
        args.update(outputs.request_args(save, overwrite=overwrite))
        args["save"] = True
        from cli.commands.files import file_result

        send(protocol.OP_NET_SHOW, args, file_result)
    send(protocol.OP_NET_SHOW, args, _render_show)


def _render_rule(r):
    rule = r["rule"]
    return f"{rule['id']} {rule['type']} {escape(rule['pattern'])}"


@net.command("block")
@click.argument("pattern")
def block(pattern):
    """Fail requests whose URL matches PATTERN (the page sees a network error).

    \b
    Example:  bp net block '*://*.doubleclick.net/*'
    """
    send(protocol.OP_NET_RULE_ADD, {"type": "block", "pattern": pattern}, _render_rule)


def _read_mock_file(path):
    regular_file(path, "file", "The mock body file")
    with open(path, "rb") as fh:
        data = fh.read(MOCK_FILE_MAX + 1)
    if len(data) > MOCK_FILE_MAX:
        raise invalid_argument("file", f"A mock body is at most {MOCK_FILE_MAX} bytes.", reason="too_large")
    return data


@net.command("mock")
@click.argument("pattern")
@click.option("--body", metavar="TEXT", help="The response body.")
@click.option("--file", "file_path", metavar="PATH", help="Read the body from this file (≤1 MiB).")
@click.option("--status", type=click.IntRange(100, 599), default=200, show_default=True, help="HTTP status.")
@click.option("--content-type", metavar="TYPE", help="Content-Type (default text/plain; charset=utf-8).")
def mock(pattern, body, file_path, status, content_type):
    """Answer requests whose URL matches PATTERN with a fixed response (never sent to the server).

    \b
    Example:  bp net mock '*/api/user' --body '{"name":"Ada"}' --content-type application/json
    """
    if (body is None) == (file_path is None):
        raise click.UsageError("Give exactly one of --body or --file.")
    args = {"type": "mock", "pattern": pattern, "status": status}
    if body is not None:
        args["body"] = body
    else:
        args["bodyBase64"] = base64.b64encode(_read_mock_file(file_path)).decode("ascii")
    send(protocol.OP_NET_RULE_ADD, given(args, contentType=content_type), _render_rule)


@net.command("headers")
@click.argument("pattern")
@click.argument("header", nargs=-1, required=True)
def headers(pattern, header):
    """Add or replace request headers on requests whose URL matches PATTERN. A value '-' (one
    header at most) is read from stdin, so a secret stays out of argv; 'bp net rules' shows
    sensitive values (Authorization, Cookie, API keys) redacted.

    \b
    Example:  bp net headers '*://api.example.com/*' 'X-Debug: 1' 'Accept-Language: fr'
              printf 'Bearer %s' "$TOKEN" | bp net headers '*://api.example.com/*' 'Authorization: -'
    """
    rows = []
    for item in header:
        m = HEADER_RE.match(item)
        if not m:
            raise invalid_argument("header", "Give each header as 'Name: value'.")
        rows.append({"name": m.group(1), "value": m.group(2).strip()})
    from_stdin = [row for row in rows if row["value"] == "-"]
    if len(from_stdin) > 1:
        raise invalid_argument("header", "Only one header value can be read from stdin ('-').")
    if from_stdin:
        from cli.commands.browser_data import secret_from_stdin

        from_stdin[0]["value"] = secret_from_stdin("header", 8192)
    send(protocol.OP_NET_RULE_ADD, {"type": "headers", "pattern": pattern, "headers": rows}, _render_rule)


@net.command("rules")
def rules():
    """List this Agent's rules. Precedence: block, then mock, then headers; within a kind the
    most recently added rule first (as listed)."""
    send(protocol.OP_NET_RULES, {},
         lambda r: "\n".join(f"{x['id']} {x['type']} {escape(x['pattern'])}" for x in r["rules"]) or "(no rules)")


@net.command("remove")
@click.argument("rule_id", required=False, metavar="RULE_ID")
@click.option("-a", "--all", "remove_all", is_flag=True, help="Remove every rule of this Agent.")
def remove(rule_id, remove_all):
    """Remove one rule (id from 'bp net rules', with or without 'rule:') or --all."""
    if bool(rule_id) == bool(remove_all):
        raise invalid_argument("ruleId", "Give a rule id or --all.")
    args = {"all": True} if remove_all else {"ruleId": rule_id}
    send(protocol.OP_NET_RULE_REMOVE, args, lambda r: f"removed {r['removed']}")


@net.command("clear")
def clear():
    """Empty this Agent's request journal (rules stay)."""
    send(protocol.OP_NET_CLEAR, {}, lambda r: "journal cleared")


@net.command("export")
@click.argument("file", metavar="FILE.har")
@click.option("--url", metavar="GLOB", help="Only requests whose URL matches GLOB ('*' is any text).")
@click.option("--after", metavar="CURSOR", help="Only requests after this id (a nextCursor of 'bp net').")
@click.option("--reveal", is_flag=True, help="Keep Cookie, Set-Cookie, Authorization and API-key values.")
@click.option("--bodies", is_flag=True, help="Include response bodies (each ≤64 KiB, 16 MiB in all).")
@click.option("--overwrite", is_flag=True, help="Replace FILE.har if it exists (otherwise file_exists).")
def export(file, url, after, reveal, bodies, overwrite):
    """Write this key's network journal as a HAR 1.2 file: sensitive header values and every
    cookie value are redacted unless --reveal; response bodies only with --bodies, while the
    browser still holds them. Written like every exported file (0600, atomic, never through a
    symlink; relative names under the current directory or BROWSER_PILOT_OUTPUT_DIR).

    \b
    Example:  bp net export session.har
    Example:  bp net export api.har --url '*/api/*' --bodies
    """
    args = given(outputs.request_args(file, overwrite=overwrite), reveal=reveal, bodies=bodies)
    for name, value in (("url", url), ("after", after)):
        if value is not None:
            args[name] = value
    from cli.commands.files import file_result

    send(protocol.OP_NET_EXPORT, args,
         lambda r: file_result(r) + f" {r['entries']} request(s)")
