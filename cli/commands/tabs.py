"""Tabs family: tabs, tab, open, close, profiles, profile.

Broker side: broker/commands/tabs.py (same operation names, from bp.protocol).
"""

from typing import Any

from bp import protocol
from cli import render
from cli.build import given
from cli.commands import built, send
from cli.declare import IntRange, argument, command, option
from cli.output import escape


def _render_tabs(r):
    if not r["tabs"]:
        return "(no tabs)"
    lines = []
    for t in r["tabs"]:
        mark = "*" if t["selected"] else " "
        lines.append(f"{mark} {t['index']:>2}  [{t['origin']}, {t['controlState']}]  {escape(t['url'])}  {escape(t['title'])}")
    return "\n".join(lines)


@command()
def tabs():
    """List every tab this Agent may use, in every live profile.

    origin is managed (opened by Browser Pilot for this Agent), managed_popup (a popup of one)
    or user_tab; controlState is available, controlled (by this Agent) or busy (another Agent).

    \b
    Example:  bp tabs
    """
    send(protocol.OP_TABS, built(tabs_request, {}), _render_tabs)


def tabs_request(v):
    return {}


@command()
@argument("target", metavar="INDEX|release")
@argument("release_target", metavar="[INDEX]", required=False)
def tab(target, release_target):
    """Select a tab by its index from 'bp tabs' (or its targetId), taking control of it.

    Another Agent's tab answers target_busy and is never taken. 'bp tab release [INDEX]' hands
    control of the selected (or given) tab back. Selecting another tab releases the previously
    selected user tab.

    \b
    Example:  bp tab 2
    Example:  bp tab release
    """
    if target == "release":
        args: dict[str, Any] = {"release": True}
        if release_target is not None:
            args.update(_selector(release_target, "index"))
    else:
        if release_target is not None:
            import click

            raise click.UsageError("Got unexpected extra argument (" + release_target + ")")
        args = _selector(target, "index")
    send(protocol.OP_TAB, args, lambda r: (f"released tab {r.get('index')}" if r.get("released")
                                            else f"* {r['index']}  {escape(r['url'])}  {escape(r['title'])}"))


def _selector(value: str, field: str) -> dict[str, Any]:
    if value.startswith("tab-"):
        return {"targetId": value}
    if value.isascii() and value.isdigit() and int(value) >= 1:
        return {"index": int(value)}
    import click

    raise click.BadParameter("must be a 1-based tab index or a targetId from 'bp tabs'",
                             param=click.Argument([field]))


@command(name="open")
@argument("url")
@option("-n", "--new", "new", is_flag=True, help="Open in a new managed tab (in the background).")
@option("--profile", metavar="SELECTOR", help="With --new: the profile for the new tab (see 'bp profiles').")
@option("-l", "--limit", type=IntRange(1, 10000), default=50, show_default=True,
              help="Most elements in the returned observation.")
def open_url(**values):
    """Open URL in the selected tab, or in a new managed tab with --new.

    A URL without a scheme gets https://. javascript: and browser-internal URLs are refused.
    Without a tab yet, a managed tab is created in this Agent's Pilot window.

    \b
    Example:  bp open example.com
    Example:  bp open --new http://127.0.0.1:8000/
    """
    send(protocol.OP_OPEN, built(open_request, values), render.observation)


def open_request(v):
    from bp import urls

    args = given({"url": urls.normalize(v["url"]), "limit": v["limit"]}, new=v["new"])
    if v["profile"] is not None:
        args["profile"] = v["profile"]
    return args


@command()
@option("-a", "--all", "close_all", is_flag=True, help="Close all of this Agent's managed tabs and popups.")
def close(close_all):
    """Close the selected tab, or with --all every tab Browser Pilot opened for this Agent.

    --all never closes a user tab; a user tab closes only when selected and closed explicitly.

    \b
    Example:  bp close --all
    """
    send(protocol.OP_CLOSE, {"all": True} if close_all else {},
          lambda r: f"closed {r['closed']}, {r['remaining']} tab(s) remain")


def _render_profiles(r):
    lines = []
    for p in r["profiles"]:
        mark = "*" if p["selected"] else " "
        name = p.get("displayName") or p["label"]
        lines.append(f"{mark} {p['index']}  {escape(name)}  ({p['eligibleTabCount']} tab(s), {p['identityStatus']})")
        for t in p["representativeTabs"]:
            lines.append(f"      {escape(t['url'])}  {escape(t['title'])}")
    return "\n".join(lines) or "(no live profiles)"


@command()
@option("--identify", is_flag=True,
              help="Identify profiles: briefly opens one chrome://version page in each unidentified profile.")
@option("--refresh", is_flag=True, help="Identify again, forgetting earlier results (implies --identify).")
def profiles(identify, refresh):
    """List the live browser profiles, from the open tabs alone (passive).

    \b
    Example:  bp profiles
    Example:  bp profiles --identify
    """
    send(protocol.OP_PROFILES, given({}, identify=identify, refresh=refresh), _render_profiles)


@command()
@argument("selector")
def profile(selector):
    """Choose the profile for this Agent's new tabs: id, index, or a unique name/label/email.

    \b
    Example:  bp profile 2
    """
    send(protocol.OP_PROFILE, {"selector": selector},
          lambda r: f"selected {escape(r.get('displayName') or r['label'])} ({r['profileContextId']})")
