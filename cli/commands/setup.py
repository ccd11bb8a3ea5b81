"""Setup family: status, browsers, connect, disconnect, launch.

Broker side: broker/commands/browser.py (same operation names, from bp.protocol).
"""

import time

from bp import protocol
from bp.errors import BPError
from cli import client, signals
from cli.declare import command, command_settings, option
from cli.output import escape, finish


def _finish_if_failed(reply):
    """A failure reply is the answer: print it and leave."""
    if not reply.get("ok"):
        finish(reply)
    return reply


# --- status ------------------------------------------------------------------------------------

def _passive_status(service_state, extra_recovery=None):
    import bp
    from bp import discovery, paths

    candidates = discovery.discover(paths.home())
    recovery = extra_recovery or discovery.recovery(candidates)
    return {"ok": True, "service": {"state": service_state, "version": bp.__version__},
            "browser": {"state": "disconnected"}, "browsers": [c for c, _ in candidates],
            "session": {"state": "unavailable"}, "commands": {"active": [], "uncertain": []}, "recovery": recovery}


def _render_status(r):
    svc = r["service"]
    lines = [f"service: {svc['state']} (version {svc.get('version')})"]
    for proc in r.get("processes", []):
        if "rssBytes" in proc:
            lines.append(f"  {proc['role']}: pid {proc['pid']}, up {proc['uptimeMs'] / 1000:.1f}s, "
                         f"rss {proc['rssBytes'] / 1048576:.1f} MiB, cpu {proc['cpuPercent']:.1f}%")
        else:
            lines.append(f"  {proc['role']}: pid {proc['pid']} ({proc.get('state')})")
    b = r["browser"]
    if b.get("id"):
        lines.append(f"browser: {b.get('product')} ({b.get('channel')}) {b['state']}, generation {b.get('connectionGeneration')}")
    else:
        lines.append(f"browser: {b['state']}")
    s = r.get("session", {})
    lines.append(f"session: {s.get('state')}" + (f", {s['managedTabs']} managed tab(s)" if "managedTabs" in s else ""))
    policy = r.get("policy")
    if policy:
        lines.append(f"policy: {escape(policy['path'])} {policy['digest']}" if policy.get("inForce")
                     else "policy: none (everything allowed)")
    rec = r.get("recovery", {})
    if rec.get("required"):
        lines.append(f"next: {escape(rec.get('action') or rec.get('remediation', {}).get('message'))}")
    return "\n".join(lines)


def status_request(v):
    return {}


@command()
def status():
    """Show the service, the browser connection and this Agent's session.

    Passive: never starts the service and never asks the browser for authorization.

    \b
    Example:  bp status
    """
    report_status(command_settings())


def report_status(settings, failure=None):
    """Print the status; `failure` is the running broker's failed answer when the caller (the
    fast path, cli/fast.py) already asked it."""
    from bp import paths

    if failure is None:
        if client.broker_running(paths.home()) is False:
            finish(_passive_status("stopped"), _render_status)
        try:
            finish(client.call(settings, protocol.OP_STATUS, status_request({})), _render_status)
        except BPError as exc:
            failure = exc
    if failure.code != "browser_disconnected":
        raise failure
    if (failure.context or {}).get("reason") == "not_running":
        finish(_passive_status("stopped"), _render_status)
    assert failure.remediation is not None  # cli/client.py's disconnected errors always carry one
    recovery = {"required": True, "code": "browser_disconnected", "action": failure.remediation["message"],
                "remediation": failure.remediation}
    # A service that runs but does not answer: "unavailable" (the contract's word); why, and
    # what to do, is the remediation (restart_unresponsive_broker, inspect_broker_state).
    finish(_passive_status("unavailable", recovery), _render_status)


# --- browsers ----------------------------------------------------------------------------------

def _render_browsers(r):
    if not r["browsers"]:
        return "(no supported browser found)"
    lines = []
    for c in r["browsers"]:
        lines.append(f"{c['product']} ({c['channel']}): {c['state']}")
        lines.append(f"  id: {c['id']}")
        lines.append(f"  data: {escape(c['userDataRoot'])}")
        lines.append(f"  process: {c['processState']}, remote debugging: {c['remoteDebuggingState']}, "
                     f"authorization: {c['authorizationState']}")
        if c.get("remediation"):
            lines.append(f"  action: {c['remediation']['message']}")
    return "\n".join(lines)


@command()
@option("-b", "--browser", "browser_filter", metavar="FILTER",
              help="Only browsers whose id, product or channel contains FILTER (case-insensitive).")
def browsers(browser_filter):
    """List the browsers Browser Pilot can see, and what each needs before 'bp connect'.

    Passive: reads files and the process table only; never opens a connection.

    \b
    Example:  bp browsers --browser chrome
    """
    settings = command_settings()
    from bp import paths

    args = {"browser": browser_filter} if browser_filter else {}
    if client.broker_running(paths.home()) is not False:
        try:
            finish(client.call(settings, protocol.OP_BROWSERS, args), _render_browsers)
        except BPError as exc:
            if exc.code != "browser_disconnected":
                raise  # an unresponsive service must not block passive discovery: fall through
    from bp import discovery

    found = discovery.discover(paths.home(), browser_filter)
    finish({"ok": True, "browsers": [c for c, _ in found]}, _render_browsers)


# --- connect -----------------------------------------------------------------------------------

@command()
@option("-b", "--browser", "browser_filter", metavar="FILTER",
              help="Which browser to connect when several can be (id, product or channel substring).")
def connect(browser_filter):
    """Connect to a browser: the only command that asks the browser for authorization.

    Chrome may show an "Allow remote debugging?" dialog: tell the person at the browser to
    click Allow. Starts the Browser Pilot service if it is not running. Run it again to join
    a pending attempt; it is never retried on a timer.

    \b
    Example:  bp connect --browser launched
    """
    settings = command_settings()
    from cli import startup
    from cli.output import Mode

    if Mode.human():
        import click

        click.echo("Connecting; if the browser asks, click 'Allow' to permit remote debugging.", err=True)
    signals.install()
    startup.ensure_broker(settings)
    args = {"browser": browser_filter} if browser_filter else {}
    from cli import progress

    progress.expect("the browser to allow remote debugging (click Allow if asked)", settings.timeout_ms)
    reply = client.call(settings, protocol.OP_CONNECT, args)
    finish(reply, lambda r: f"connected to {r['browser']} ({r['browserId']}), generation {r['connectionGeneration']}")


# --- disconnect --------------------------------------------------------------------------------

BROKER_EXIT_WAIT_S = 15.0


@command()
def disconnect():
    """Release this Agent's state and close the tabs it opened.

    The service itself stops only when no other Agent is active and it was started by this
    same installation; otherwise it keeps running for the others.

    \b
    Example:  bp disconnect
    """
    settings = command_settings()
    from bp import identity, locator, paths

    home_dir = paths.home()
    if client.broker_running(home_dir) is False:
        finish({"ok": True, "released": False, "brokerStopped": False, "reason": "not_running"})
    record, _ = locator.read_locator(home_dir)
    expect = {"pid": record["pid"], "startTime": record.get("startTime")} if record and not record.get("corrupt") else None
    if expect is None:
        # No readable locator: the broker's own answer names it, so a broker that replaced it
        # between here and the disconnect is still never stopped by mistake.
        service = (client.ping(home_dir, settings, protocol.HEALTH_WAIT_MS) or {}).get("service") or {}
        if isinstance(service.get("pid"), int):
            expect = {"pid": service["pid"], "startTime": service.get("startTime")}
    signals.install()
    reply = _finish_if_failed(client.call(settings, protocol.OP_DISCONNECT, {"expectBroker": expect},
                                       installation=identity.installation_identity()))
    if reply.get("brokerStopped"):
        deadline = time.monotonic() + BROKER_EXIT_WAIT_S
        while client.broker_running(home_dir):
            if time.monotonic() > deadline:
                from bp.errors import remediation

                raise BPError("unknown_outcome", "The service accepted to stop but is still running.",
                              remediation=remediation("inspect_broker_state"))
            time.sleep(0.02)
    finish(reply, lambda r: "disconnected" + (" (service stopped)" if r.get("brokerStopped") else
                                              f" (service keeps running: {r.get('reason')})"))


# --- launch ------------------------------------------------------------------------------------

@command()
@option("--headless/--headed", default=None,
              help="Run without a window (default when no display is available) or with one.")
@option("--stop", is_flag=True, help="Stop the browser 'bp launch' started (and nothing else).")
def launch(headless, stop):
    """Start a private Chromium/Chrome for Browser Pilot, with its own profile under the home.

    Uses BROWSER_PILOT_CHROME or the first of chromium, chromium-browser, google-chrome on PATH.
    The browser is then a discovery candidate: connect with 'bp connect --browser launched'.

    \b
    Example:  bp launch --headless && bp connect --browser launched
    """
    from bp import launch as launcher
    from bp import paths

    home_dir, _ = paths.ensure_home()
    if stop:
        finish({"ok": True, **launcher.stop(home_dir)}, lambda r: "stopped" if r["stopped"] else "nothing to stop")
    if headless is None:
        headless = not launcher.has_display()
    result = launcher.launch(home_dir, headless)
    finish({"ok": True, **result}, lambda r: f"{r['browser']['product']} running (pid {r['browser']['pid']}); "
                                            f"next: bp connect --browser launched")
