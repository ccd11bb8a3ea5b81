"""Policy family: policy, audit.

Broker side: broker/commands/policy.py. The policy is the person's file (docs/policy.md): no
command changes it.
"""

import click

from bp import protocol
from cli import client
from cli.output import escape, finish


def _render_policy(r):
    p = r["policy"]
    if not p["inForce"]:
        return f"no policy ({escape(p['path'])} absent): {p['default']}"
    lines = [f"policy {escape(p['path'])}  {p['digest']}"]
    if p.get("deniedForThisKey"):
        lines.append("denied for this key: " + ", ".join(p["deniedForThisKey"]))
    origins = (p.get("rules") or {}).get("origins") or {}
    for name in ("allow", "block"):
        if name in origins:
            lines.append(f"origins.{name}: " + (", ".join(escape(o) for o in origins[name]) or "(none)"))
    return "\n".join(lines)


@click.command()
def policy():
    """Show the policy in force (path and digest) and what it denies this Agent.

    The policy is a file the person owns (BROWSER_PILOT_POLICY or <home>/policy.json), read
    when the service starts; no command changes it (docs/policy.md).

    \b
    Example:  bp policy
    """
    finish(client.call(click.get_current_context().obj, protocol.OP_POLICY, {}), _render_policy)


def _render_audit(r):
    if "audit" in r:
        a = r["audit"]
        head = f"{'verified' if a['verified'] else 'NOT verified'}: {a['lines']} lines"
        return "\n".join([head] + [f"  {p.get('reason')} at line {p.get('line', '-')}" for p in a["problems"]])
    lines = [f"{e['cursor']}  {e['outcome']:<18} {e['operation']:<16} {escape(e.get('origin') or '-')}"
             for e in r["entries"]]
    return "\n".join(lines) or "(no entries)"


@click.command()
@click.option("-l", "--limit", type=click.IntRange(1, 1000), default=50, show_default=True,
              help="Most entries to show (the newest, or the first after --after).")
@click.option("--after", metavar="CURSOR", help="Only entries after this cursor (audit-N, from an earlier listing).")
@click.option("--verify", is_flag=True, help="Check the journal's hash chain (an edited, removed or cut line fails).")
def audit(limit, after, verify):
    """Show this Agent's own entries in the audit journal (mutating commands, accepted or denied).

    \b
    Example:  bp audit --limit 20
    """
    args = {"verify": True} if verify else {"limit": limit}
    if after and not verify:
        args["after"] = after
    finish(client.call(click.get_current_context().obj, protocol.OP_AUDIT, args), _render_audit)
