"""Browser data: bp cookies (list, set, delete, clear), bp auth, bp console, bp errors.

Broker side: broker/commands/network.py (same operation names, from bp.protocol). Cookie values,
credentials and console text are sensitive: values only on request, never logged or echoed.
"""

import sys

import click

from bp import protocol
from bp.errors import invalid_argument
from cli.build import given
from cli.commands import send
from cli.commands.listing import ListingGroup
from cli.output import escape

MAX_PASSWORD = 4096
MAX_COOKIE_VALUE = 4096


def secret_from_stdin(field, limit):
    """A secret read from stdin (its one trailing newline dropped), so it stays out of argv and
    `ps`; at most `limit` characters."""
    value = sys.stdin.read(limit + 1)
    if value.endswith("\n"):
        value = value[:-1]
    if len(value) > limit:
        raise invalid_argument(field, f"At most {limit} characters.")
    return value


def _render_cookies(r):
    rows = r.get("cookies") or []
    if not rows:
        return "(no cookies)"
    return "\n".join(f"{escape(c['name'])}={escape(c.get('value', '<' + str(c.get('valueLength')) + ' chars>'))}"
                     f"  domain={escape(c['domain'])} path={escape(c['path'])}"
                     f"{' httpOnly' if c['httpOnly'] else ''}{' secure' if c['secure'] else ''}" for c in rows)


@click.group(cls=ListingGroup)
def cookies():
    """Cookies of the selected tab's profile.

    \b
    bp cookies [DOMAIN] [--url URL] [--values]
    bp cookies set NAME=VALUE [--url URL | --domain D] [--path P] [--secure] [--http-only]
    bp cookies delete NAME [--url URL | --domain D] [--path P]
    bp cookies clear --domain D

    Listing is scoped to the tab's current URL, --url, or DOMAIN (and its subdomains); values
    are left out (their length shown) unless --values.
    """


@cookies.command("list", hidden=True)
@click.argument("domain", required=False)
@click.option("--url", metavar="URL", help="Cookies sent to this URL (default: the tab's URL).")
@click.option("--values", is_flag=True, help="Include the cookie values (sensitive).")
def list_cookies(domain, url, values):
    """List cookies."""
    args = given({}, domain=domain, url=url, values=values)
    send(protocol.OP_COOKIES, args, _render_cookies)


def _scope(args, url, domain, path):
    return given(args, url=url, domain=domain, path=path)


@cookies.command("set")
@click.argument("pair", metavar="NAME=VALUE")
@click.option("--url", metavar="URL", help="The cookie's URL (default: the tab's URL).")
@click.option("--domain", metavar="D", help="Domain (a leading dot is implied by the browser for subdomains).")
@click.option("--path", metavar="P", help="Path (default /).")
@click.option("--secure", is_flag=True, help="Secure cookie.")
@click.option("--http-only", is_flag=True, help="HttpOnly cookie.")
@click.option("--same-site", type=click.Choice(["Strict", "Lax", "None"]), help="SameSite.")
@click.option("--expires", type=click.IntRange(min=0), metavar="EPOCH_S", help="Expiry (Unix seconds); default session.")
def set_cookie(pair, url, domain, path, secure, http_only, same_site, expires):
    """Set a cookie in the selected tab's profile. The value is not echoed; NAME=- reads it from
    stdin, so a secret stays out of argv.

    \b
    Example:  bp cookies set theme=dark --url https://example.com/
              printf %s "$TOKEN" | bp cookies set session=- --url https://example.com/
    """
    name, sep, value = pair.partition("=")
    if not sep or not name:
        raise invalid_argument("name", "Give NAME=VALUE.")
    if value == "-":
        value = secret_from_stdin("value", MAX_COOKIE_VALUE)
    args = given(_scope({"name": name, "value": value}, url, domain, path),
                 secure=secure, httpOnly=http_only, sameSite=same_site)
    if expires is not None:
        args["expires"] = expires
    send(protocol.OP_COOKIE_SET, args, lambda r: f"cookie {escape(r['cookie']['name'])} set")


@cookies.command("delete")
@click.argument("name")
@click.option("--url", metavar="URL", help="The cookie's URL (default: the tab's URL).")
@click.option("--domain", metavar="D", help="Exact cookie domain.")
@click.option("--path", metavar="P", help="Exact cookie path.")
def delete_cookie(name, url, domain, path):
    """Delete cookies named NAME for the URL (or domain/path).

    \b
    Example:  bp cookies delete theme --url https://example.com/
    """
    send(protocol.OP_COOKIE_DELETE, _scope({"name": name}, url, domain, path),
         lambda r: f"cookie {escape(r['name'])} deleted")


@cookies.command("clear")
@click.option("--domain", metavar="D", required=True, help="Delete every cookie of D and its subdomains.")
def clear_cookies(domain):
    """Delete every cookie of one domain (and its subdomains) in the selected tab's profile.
    There is deliberately no way to wipe the whole cookie jar.

    \b
    Example:  bp cookies clear --domain example.com
    """
    send(protocol.OP_COOKIE_DELETE, {"all": True, "domain": domain}, lambda r: f"{r['deleted']} deleted")


@click.command()
@click.argument("username", required=False)
@click.argument("password", required=False)
@click.option("--origin", metavar="ORIGIN", help="Answer only challenges of this origin (scheme://host[:port]).")
@click.option("--clear", "clear_", is_flag=True, help="Forget the credentials (also: 'bp auth' alone).")
def auth(username, password, origin, clear_):
    """Answer HTTP authentication challenges (Basic, Digest…) on this Agent's tabs with USERNAME
    and PASSWORD ('-' reads it from stdin). Never echoed or logged; gone with 'bp disconnect'.
    Without credentials a challenge proceeds as usual (the page gets its 401); wrong credentials
    are tried once per request.

    \b
    Example:  printf %s "$PASSWORD" | bp auth alice - --origin https://intranet.example.com
    Example:  bp auth --clear
    """
    if clear_ or username is None:
        if username is not None or origin:
            raise click.UsageError("--clear takes no credentials.")
        send(protocol.OP_AUTH_CLEAR, {}, lambda r: "credentials cleared")
    if password is None:
        raise invalid_argument("password", "Give the password (or '-' to read it from stdin).")
    if password == "-":
        password = secret_from_stdin("password", MAX_PASSWORD)
    if len(password) > MAX_PASSWORD:
        raise invalid_argument("password", f"At most {MAX_PASSWORD} characters.")
    args = given({"username": username, "password": password}, origin=origin)
    send(protocol.OP_AUTH_SET, args, lambda r: "credentials set")


@click.command()
@click.option("-l", "--limit", type=click.IntRange(1, 500), default=50, show_default=True, help="The latest N messages.")
@click.option("--level", type=click.Choice(["debug", "info", "warning", "error"]), help="This level and above.")
def console(limit, level):
    """Console messages (console.log/info/warn/error…) of this Agent's tabs, oldest first.

    Console capture starts for a tab with the first 'bp console' or 'bp errors' (the browser
    replays what it kept for the current document); up to 500 per Agent.

    \b
    Example:  bp console --level warning
    """
    args = given({"limit": limit}, level=level)
    send(protocol.OP_CONSOLE, args, lambda r: "\n".join(
        f"[{m['level']}] {escape(m['text'])}" for m in r["messages"]) or "(no messages)")


@click.command()
@click.option("-l", "--limit", type=click.IntRange(1, 500), default=50, show_default=True, help="The latest N errors.")
def errors(limit):
    """Uncaught page errors (exceptions, unhandled rejections) of this Agent's tabs, oldest first.

    \b
    Example:  bp errors
    """
    send(protocol.OP_ERRORS, {"limit": limit}, lambda r: "\n".join(
        f"{escape(e['message'])} ({escape(e.get('url', ''))}:{e.get('line', '?')})" for e in r["errors"]) or "(no errors)")
