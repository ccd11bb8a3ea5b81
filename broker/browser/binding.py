"""The broker's browser: which candidate it is bound to, the live connection, the generation.

Only an explicit connect opens a WebSocket; concurrent connects share one in-flight attempt; a
failed or dropped connection is never retried on a timer.
"""

import logging
import threading

from bp import discovery, settings
from bp.errors import BPError, disconnected, remediation
from broker.browser.connection import BrowserConnection
from broker.browser.targets import Targets

log = logging.getLogger("broker.browser")



class Browser:
    def __init__(self, ctx, home_dir, run_dir, on_target_gone=None, on_void=None):
        self.ctx = ctx
        self.home_dir = home_dir
        self.run_dir = run_dir
        # The tab workers are the broker's (broker/server.py), not this binding's: it reports a
        # target gone, and every tab void at once (a new connection attempt, the broker's end).
        self.on_target_gone = on_target_gone or (lambda raw: None)
        self.on_void = on_void or (lambda: None)
        # Features that follow tab sessions register here (broker/server.py start_services):
        # called with each newly attached TabSession, and with a session on each later use.
        self.session_hooks = []
        self.session_use_hooks = []
        self.targets = Targets()
        self.identities = {}  # browserContextId -> verified profile identity, this generation
        self.generation = 0
        self.connection: BrowserConnection | None = None  # the latest one (ready, connecting, lost, failed)
        self.overlay = {}  # candidate id -> (state, authorizationState) learnt from explicit connects
        self._lock = threading.Lock()

    # --- state --------------------------------------------------------------------------------

    @property
    def ready(self):
        return self.connection is not None and self.connection.alive

    def require(self):
        """The live connection, or browser_disconnected for browser commands."""
        conn = self.connection
        if conn is None or not conn.alive:
            reason = None if conn is None else (conn.failure or {}).get("reason")
            raise disconnected("Browser Pilot is not connected to a browser." if conn is None or conn.state != "lost"
                               else "The browser connection was lost.",
                               context={"reason": reason} if reason else None)
        return conn

    def candidates(self, browser_filter=None):
        overlay = dict(self.overlay)
        conn = self.connection
        if conn is not None and conn.alive:  # self.ready, on one read of the connection
            overlay[conn.candidate["id"]] = ("ready", "authorized")
        return discovery.discover(self.home_dir, browser_filter, overlay=overlay)

    def summary(self):
        conn = self.connection
        if conn is None:
            return {"state": "disconnected"}
        state = {"ready": "ready", "connecting": "connecting"}.get(conn.state, "disconnected")
        out = {"id": conn.candidate["id"], "product": conn.candidate["product"], "channel": conn.candidate["channel"],
               "state": state, "connectionGeneration": self.generation}
        if conn.product:
            out["version"] = conn.product
        if conn.failure and state == "disconnected":
            out["reason"] = conn.failure.get("reason")
        return out

    # --- connect ------------------------------------------------------------------------------

    def connect(self, browser_filter, wait_s):
        """Join or start the one connection attempt; returns the ready connection."""
        with self._lock:
            conn = self.connection
            if conn is not None and conn.state in ("ready", "connecting"):
                if browser_filter and not _matches(conn.candidate, browser_filter):
                    raise BPError("browser_not_found", "Browser Pilot is connected to another browser.",
                                  context={"connectedBrowser": conn.candidate["id"], "browser": browser_filter},
                                  remediation=remediation("select_running_browser_pilot"))
            else:
                conn = self._start_attempt(browser_filter)
        if not conn.wait_settled(wait_s):
            raise BPError("browser_not_authorized",
                          "The browser has not accepted the connection yet; Chrome may be showing its 'Allow' dialog.",
                          retryable=True, context={"browserId": conn.candidate["id"], "state": "authorization_pending"},
                          remediation=remediation("allow_remote_debugging"))
        if conn.state == "ready":
            if not conn.reconciled:
                # Existing targets also arrive as targetCreated events; this closes any gap.
                self.targets.load(conn.cdp("Target.getTargets", timeout_s=10.0).get("targetInfos", []))
                self._take_over(conn)
                conn.reconciled = True
            return conn
        raise self._failure_error(conn)

    def _start_attempt(self, browser_filter):
        found = discovery.discover(self.home_dir, browser_filter, overlay=self.overlay)
        if not found:
            raise BPError("browser_not_found",
                          "No supported browser matches." if browser_filter else "No supported browser was found.",
                          context={"browser": browser_filter} if browser_filter else None,
                          remediation=remediation("select_supported_browser"))
        viable = discovery.viable(found)
        if not viable:
            best = found[0][0]
            raise BPError("browser_disconnected", f"{best['product']} ({best['channel']}) cannot be connected: {best['state']}.",
                          context={"browserId": best["id"], "product": best["product"], "browserState": best["state"],
                                   "candidates": [c["id"] for c, _ in found][:16]},
                          remediation=best.get("remediation"))
        if len(viable) > 1:
            raise BPError("browser_selection_required", "Several browsers can be connected; choose one with --browser.",
                          context={"field": "browser",
                                   "candidates": [{"id": c["id"], "product": c["product"], "channel": c["channel"],
                                                   "userDataRoot": c["userDataRoot"]} for c, _ in viable][:16]},
                          remediation=remediation("select_browser"))
        candidate, endpoint = viable[0]
        # The attempt's generation becomes the browser's only once it is ready (BR-12): a failed
        # or refused attempt leaves it where the last real connection put it.
        generation = self.generation + 1
        # Every old tab worker, session, target and profile id is void: the old connection is gone.
        self.on_void()
        self.identities = {}
        self.targets = Targets()
        self.targets.on_destroyed.append(self._target_gone)
        conn = BrowserConnection(self.ctx, self.run_dir, candidate, discovery.endpoint_url(endpoint),
                                 generation, settings.current().handshake_timeout_s, on_event=self.targets.on_event)
        conn.on_ready = self._connected
        previous, self.connection = self.connection, conn
        if previous is not None:
            # What the previous janitor owned (and what it had inherited but not yet closed):
            # if that janitor died, nobody would close these tabs; the new one takes them over.
            conn.orphans = previous.owned() | previous.orphans
        if previous is not None:
            threading.Thread(target=previous.close, name="janitor-retire", daemon=True).start()
        log.info("connecting to %s (generation %d once ready)", candidate["id"], generation)
        conn.start()
        return conn

    def _connected(self, conn):
        if conn is self.connection:
            self.generation = conn.generation

    def _take_over(self, conn):
        """Hand the previous janitor's tabs still open to the new one, which owns and closes
        them: a new generation voids them, so they must neither stay open unowned nor look
        managed (the Agent gets a fresh managed tab)."""
        alive = [raw for raw in conn.orphans if self.targets.info(raw) is not None]
        if alive:
            try:
                taken = conn.janitor_call("takeover", {"targetIds": alive}, timeout_s=10.0).get("closing", [])
            except BPError as exc:
                log.warning("could not take over the previous janitor's tabs: %s", exc.message)
                return
            log.info("took over %d tab(s) of the previous janitor to close them", len(taken))
        conn.orphans = set()
        for raw in alive:
            self.targets.apply("Target.targetDestroyed", {"targetId": raw})  # void for Agents now

    def _target_gone(self, raw):
        conn = self.connection
        if conn is not None:
            conn.owned_popups.pop(raw, None)
            conn.created.discard(raw)
        self.on_target_gone(raw)

    def popups(self):
        conn = self.connection
        return conn.owned_popups if conn is not None else {}

    def _failure_error(self, conn):
        failure = conn.failure or {}
        reason = failure.get("reason")
        context = {"browserId": conn.candidate["id"], "reason": reason}
        if reason == "refused":
            self.overlay.pop(conn.candidate["id"], None)
            return BPError("browser_disconnected", "The browser's debugging port refused the connection; its DevToolsActivePort is stale.",
                           context=context, remediation=remediation("restart_remote_debugging"))
        if reason in ("timeout", "rejected"):
            self.overlay[conn.candidate["id"]] = ("authorization_required", "required")
            return BPError("browser_not_authorized", failure.get("message") or "The browser did not authorize the connection.",
                           context=context, remediation=remediation("allow_remote_debugging"))
        return BPError("browser_disconnected", failure.get("message") or "The browser connection failed.",
                       context=context, remediation=remediation("connect_browser"))

    def close(self):
        self.on_void()
        conn, self.connection = self.connection, None
        if conn is not None:
            conn.close()


def _matches(candidate, needle):
    needle = needle.lower()
    return any(needle in str(candidate.get(k, "")).lower() for k in ("id", "product", "channel"))
