"""Setup family: ping, status, browsers, connect, disconnect (cli/commands/setup.py)."""

import logging
import time
from typing import Any

import psutil

import bp
from bp import discovery, protocol
from bp.errors import BPError
from broker.tabs import routing
from broker.registry import Request, handler

log = logging.getLogger("broker.setup")

_process_cache: dict[int, psutil.Process] = {}


@handler(protocol.OP_PING)
def ping(broker, request: Request) -> dict[str, Any]:
    return {"service": {"state": "running", "version": bp.__version__, "pid": broker.process["pid"],
                        "startTime": broker.process["startTime"], "protocol": protocol.PROTOCOL_RANGE}}


def _process_row(role: str, pid: int) -> dict[str, Any]:
    proc = _process_cache.get(pid)
    try:
        if proc is None:
            proc = _process_cache[pid] = psutil.Process(pid)
            proc.cpu_percent(None)  # first call primes the CPU counter
        with proc.oneshot():
            started = proc.create_time()
            return {"role": role, "pid": pid, "startTime": round(started, 2),
                    "uptimeMs": int((time.time() - started) * 1000), "rssBytes": proc.memory_info().rss,
                    "cpuPercent": proc.cpu_percent(None)}
    except psutil.Error:
        _process_cache.pop(pid, None)
        return {"role": role, "pid": pid, "state": "gone"}


@handler(protocol.OP_STATUS)
def status(broker, request: Request) -> dict[str, Any]:
    """Passive: never opens a connection, never creates Agent state."""
    processes = [_process_row("broker", broker.process["pid"])]
    conn = broker.browser.connection
    if conn is not None and conn.process is not None and conn.process.poll() is None:
        processes.append(_process_row("janitor", conn.process.pid))
    for pid in set(_process_cache) - {p["pid"] for p in processes}:
        _process_cache.pop(pid, None)  # janitors of earlier connections
    agent = broker.agents.get(request.client)
    result = {
        "service": {"state": "running", "version": bp.__version__, "pid": broker.process["pid"],
                    "startedAt": int(broker.started_at * 1000), "uptimeMs": int((time.time() - broker.started_at) * 1000),
                    "protocol": protocol.PROTOCOL_RANGE, "agents": len(broker.agents)},
        "processes": processes,
        "browser": broker.browser.summary(),
        "session": _session(broker, agent),
        "commands": _recovery_commands(broker, request.client),
        "policy": broker.policy.describe(),  # the person's launch-time policy (bp policy)
    }
    if broker.browser.ready:
        result["recovery"] = _command_recovery(result["commands"])
        result["crashedTabs"] = _crashed_tabs(broker, agent)
    else:
        candidates = broker.browser.candidates()
        result["browsers"] = [c for c, _ in candidates]
        result["recovery"] = discovery.recovery(candidates)
        uncertain = _command_recovery(result["commands"])
        if uncertain.get("required"):
            result["recovery"]["commands"] = uncertain
    return result


def _session(broker, agent) -> dict[str, Any]:
    """This Agent's session with its selected `profile` (as `bp profiles` lists it) and `target`
    tab `{index, title, url, origin, profileContextId}`, each null when there is none. Read
    only: no lease renewal, no tab ids minted."""
    if agent is None:
        return {"state": "none", "profile": None, "target": None}
    out: dict[str, Any] = dict(agent.summary(), profile=None, target=None)
    if not broker.browser.ready or agent.generation != broker.browser.generation:
        return out
    targets = broker.browser.targets
    if agent.selected_profile is not None:
        row = next((row for context, row in routing.profiles(broker, agent) if context == agent.selected_profile), None)
        out["profile"] = row
    if agent.selected is not None and targets.info(agent.selected) is not None:
        targets.refresh(broker.browser.connection)  # the title the page has now
        for index, (raw, info) in enumerate(targets.pages(), start=1):
            if raw == agent.selected:
                origin, _ = routing._control_state(broker, agent, raw)
                profile = targets.profile(info.get("browserContextId"))
                out["target"] = {"index": index, "title": (info.get("title") or "")[:4096],
                                 "url": (info.get("url") or "")[:8192], "origin": origin,
                                 "profileContextId": profile[0] if profile else None}
                break
    return out


def _crashed_tabs(broker, agent) -> dict[str, Any]:
    """Tabs whose renderer crashed or went silent (commands on them answer target_crashed): the
    Agent's own ids; without Agent state, only how many."""
    crashed = dict(broker.browser.targets.crashed)
    if agent is None:
        return {"count": len(crashed)}
    from broker.tabs import routing

    rows = [row for raw, row in routing.inventory(broker, agent) if raw in crashed]
    return {"count": len(crashed), "tabs": [{"targetId": r["targetId"], "url": r["url"], **r["crashed"]} for r in rows]}


def _recovery_commands(broker, key: str) -> dict[str, Any]:
    """This key's commands in flight and those whose outcome is unknown (newest first)."""
    book = broker.commands.for_key(key, create=False)
    if book is None:
        return {"active": [], "uncertain": []}
    return {"active": [r.descriptor() for r in book.list({"accepted", "dispatched"}, limit=20)],
            "uncertain": [r.descriptor() for r in book.list({"unknown_outcome"}, limit=20)]}


def _command_recovery(commands: dict[str, Any]) -> dict[str, Any]:
    """What the Agent should do about its own commands before acting again."""
    if commands["uncertain"]:
        newest = commands["uncertain"][0]["id"]
        return {"required": True, "code": "inspect_uncertain_commands", "action": f"bp command {newest}",
                "commandIds": [c["id"] for c in commands["uncertain"]],
                "message": f"Some commands may or may not have happened: inspect the page ('bp snapshot') and "
                           f"'bp command {newest}' before retrying any of them."}
    return {"required": False}  # commands still running are listed in commands.active


@handler(protocol.OP_BROWSERS)
def browsers(broker, request: Request) -> dict[str, Any]:
    found = broker.browser.candidates(request.args.get("browser"))
    conn = broker.browser.connection
    bound = conn.candidate["id"] if conn is not None else None
    found.sort(key=lambda item: item[0]["id"] != bound)  # the bound browser first
    return {"browsers": [c for c, _ in found]}


@handler(protocol.OP_CONNECT)
def connect(broker, request: Request) -> dict[str, Any]:
    # Reaching for the browser starts at once: a cancel from here on cannot promise that nothing
    # happened; a failure to connect is still just that.
    request.attempting()
    broker.agents.touch(request.client, broker.browser.generation)
    conn = broker.browser.connect(request.args.get("browser"), wait_s=max(0.05, request.remaining() - 0.25))
    broker.network_hub.guard_popups(conn)  # navigation bounds reach popups of held tabs (policy origins)
    if request.record is not None:
        # The connection this command made is its own: its record follows it, not the one before.
        request.record.generation = conn.generation
    agent = routing.agent_for(broker, request)
    result = {"browser": conn.candidate["product"], "browserId": conn.candidate["id"],
              "browserVersion": conn.product, "connectionGeneration": conn.generation,
              "profileSelectionRequired": False}
    # Concurrent connects of one key: the first creates the tab, the others find it.
    if not agent.connect_lock.acquire(timeout=max(0.05, request.remaining())):
        raise BPError("command_in_progress", "Another 'bp connect' of this Agent is still opening its tab.")
    try:
        if routing.agent_managed_tabs(broker, agent):
            return result
        try:
            # The Agent's first managed tab, in its Pilot window, opened in the background.
            routing.create_managed(broker, agent, request, "about:blank", None)
        except BPError as exc:
            if exc.code != "profile_selection_required":
                raise
            result["profileSelectionRequired"] = True
            result["profiles"] = [row for _, row in routing.profiles(broker, agent)]
        return result
    finally:
        agent.connect_lock.release()


@handler(protocol.OP_DISCONNECT)
def disconnect(broker, request: Request) -> dict[str, Any]:
    """Release this Agent; stop the whole broker only for the same installation when no other
    Agent is active (compare-and-stop on the broker's process identity)."""
    request.attempting()  # it releases state from its first step
    agent = broker.agents.remove(request.client)
    broker.commands.forget(request.client)  # a released key keeps no command records
    broker.release_key_services(request.client)  # its copies, downloads, journals, rules and credentials go
    closed = broker.release_agent_tabs(agent) if agent else 0
    result = {"released": agent is not None, "closedTabs": closed, "brokerStopped": False}
    others = broker.agents.active_keys()
    expect = request.args.get("expectBroker")
    if others:
        result["reason"] = "other_agents_active"
    elif not request.installation or request.installation["identity"] != broker.installation["identity"]:
        result["reason"] = "other_installation"
    elif not expect:
        result["reason"] = "broker_identity_unknown"  # stop only the broker the caller named
    elif expect["pid"] != broker.process["pid"] or expect["startTime"] != broker.process["startTime"]:
        result["reason"] = "broker_identity_changed"
    else:
        result["brokerStopped"] = True
        request.after_reply.append(broker.stop)
        log.info("stopping on disconnect from the installation that started it")
    return result
