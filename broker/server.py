"""The broker daemon: one ROUTER front socket, a registry of handlers, and in-memory state.

The front loop (`serve`) reads a request, bounds and validates it, and either answers at once
(inline handlers) or hands it to a request thread; request threads send their replies back to
the loop over inproc, and the loop alone writes to the ROUTER socket. Every exception becomes a
structured failure: a CLI never sees a traceback, the log does.
"""

import fcntl
import json
import logging
import os
import signal
import socket
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, cast

import zmq
from marshmallow import ValidationError

import bp
from bp import fastjson, identity, locator, ops, paths, policy, protocol, schemas, settings, text
from bp.errors import BPError, failure, invalid_argument
from broker import handlers  # noqa: F401  (registers the handlers)
from broker.policy import audit, bounds
from broker.records import phases, store
from broker.agents import Agents
from broker.browser.binding import Browser
from broker.registry import HANDLERS, Request, check_complete
from broker.tabs.session import Workers

if TYPE_CHECKING:
    from broker.emulate.emulation import Emulations
    from broker.files.artifacts import Store
    from broker.files.downloads import Tracker
    from broker.network.journal import Hub
    from broker.trace.book import Traces

log = logging.getLogger("broker")

POLL_MS = 200
SWEEP_INTERVAL_S = 1.0
REQUEST_THREADS = 64  # waits hold one each while they poll; dialog answers must still get one
# Operations that are not browser commands of an Agent: no command record (bp/ops.py, recorded).
UNRECORDED = frozenset(ops.OPS) - ops.RECORDED
check_complete()  # every declared operation has a handler, and (bp.schemas) an argument schema


class Broker:
    # The services every family uses, built once by start_services (after the owner lock:
    # building the artifact store wipes what a killed broker left in its directory).
    artifact_store: "Store"  # private copies: screenshots, uploads, downloads (broker/files/artifacts.py)
    download_tracker: "Tracker"  # downloads of every tab (broker/files/downloads.py)
    network_hub: "Hub"  # journals, rules, credentials, navigation bounds (broker/network/journal.py, broker/policy/bounds.py)
    emulations: "Emulations"  # what each managed tab pretends to be (broker/emulate/emulation.py)
    traces: "Traces"  # bp trace: each key's record of its commands (broker/trace/book.py)

    def __init__(self, home_dir: str, run_dir: str, policy_in_force: "policy.Policy | None" = None):
        self.home_dir = home_dir
        self.run_dir = run_dir
        # The person's launch-time policy (bp/policy.py): fixed for the broker's life.
        self.policy = policy_in_force or policy.Policy.none()
        self.journal: audit.Journal | None = None  # the audit journal (broker/policy/audit.py), opened by main()
        self.ctx = zmq.Context()
        self.started_at = time.time()
        self.process = identity.own_identity()
        self.installation = identity.installation_identity()
        self.endpoint = paths.socket_path(home_dir)
        self.agents = Agents()
        self.commands = store.CommandBook()
        # One worker thread per tab session (broker/tabs/session.py): the broker's, stopped when the
        # browser reports a target gone or every tab void.
        self.workers = Workers()
        self.browser = Browser(self.ctx, home_dir, run_dir, on_target_gone=self._target_gone,
                               on_void=self.workers.stop_all)
        self.stopping = threading.Event()
        # A byte here wakes the front loop's poll at once when the broker is told to stop.
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_write.setblocking(False)
        self._replies_address = "inproc://replies"
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=REQUEST_THREADS, thread_name_prefix="request")
        self._owner_lock_fd: int | None = None

    def stop(self):
        """Stop serving: the front loop ends at once (not at its next poll timeout)."""
        self.stopping.set()
        try:
            self._wake_write.send(b"x")
        except OSError:
            pass  # full (a stop is already waking it) or closed (stopped already)

    def _target_gone(self, raw):
        self.workers.stop(raw)
        self.agents.forget_target(raw)

    def start_services(self):
        """Build the services and hook them to every tab session the browser attaches."""
        from broker.emulate.emulation import Emulations
        from broker.files.artifacts import Store
        from broker.files.downloads import Tracker
        from broker.network.journal import Hub
        from broker.trace.book import Traces

        self.artifact_store = Store(self.home_dir, self.agents)
        self.traces = Traces(self.artifact_store, self.agents, self.browser, self.workers)
        self.download_tracker = Tracker(self.browser, self.agents, self.artifact_store)
        self.network_hub = Hub(self.policy, self.agents, self.browser, self.workers)
        self.emulations = Emulations(self.browser, self.workers)
        self.browser.session_hooks.extend([
            self.download_tracker.on_session,  # download events, once per generation and profile
            self.network_hub.attach,  # network journal; rules if the holder has some
            self.emulations.on_session,  # a popup of an emulated tab is emulated alike
        ])
        self.browser.session_use_hooks.append(self.network_hub.on_use)  # rules follow the tab's holder

    def release_key_services(self, key):
        """A released key (disconnect, lease end): its copies, downloads, journals, rules and credentials go."""
        self.artifact_store.release_key(key)
        self.download_tracker.forget_key(key)
        self.network_hub.release_key(key)
        self.traces.release_key(key)

    # --- start / stop ---------------------------------------------------------------------------

    def claim_ownership(self):
        """Hold an exclusive lock for the broker's whole life. The kernel releases it however
        the broker dies, so a second broker can never unlink a live broker's socket."""
        path = os.path.join(self.home_dir, paths.OWNER_LOCK_NAME)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        deadline = time.monotonic() + 2.0
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    return False
                time.sleep(0.01)  # a CLI's passive probe holds a shared lock for microseconds
        self._owner_lock_fd = fd
        self._owner_lock_stat = os.fstat(fd)
        return True

    def keep_owner_lock(self):
        """A deleted (or replaced) broker.lock would make this live broker look gone to every
        CLI: put a locked one back. The old file's lock stays held until the new one is ours."""
        path = os.path.join(self.home_dir, paths.OWNER_LOCK_NAME)
        try:
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) == (self._owner_lock_stat.st_dev, self._owner_lock_stat.st_ino):
                return
        except FileNotFoundError:
            pass
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as exc:
            log.warning("could not restore the owner lock: %s", type(exc).__name__)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # a CLI probe at this instant (or another broker's): try again next sweep
            return
        if self._owner_lock_fd is not None:
            os.close(self._owner_lock_fd)
        self._owner_lock_fd, self._owner_lock_stat = fd, os.fstat(fd)
        log.warning("the owner lock file was deleted or replaced; restored it")

    def keep_endpoint(self, front):
        """A deleted socket file would lock every Agent out of a live broker: bind it again
        (on the front loop's thread, which owns the socket). Unbind first: ZeroMQ unlinks the
        path of an ipc endpoint it unbinds."""
        if os.path.lexists(self.endpoint):
            return
        address = f"ipc://{self.endpoint}"
        try:
            front.unbind(address)
        except zmq.ZMQError:
            pass
        try:
            front.bind(address)
            os.chmod(self.endpoint, 0o600)
            log.warning("the broker's socket file was deleted; bound it again")
        except (zmq.ZMQError, OSError) as exc:
            log.warning("could not bind the broker's socket again: %s", type(exc).__name__)

    def remove_stale_janitor_sockets(self):
        """janitor-<pid>-<n>.sock files of brokers that died without cleaning up: we hold the
        owner lock, so no other broker of this home is alive to use them."""
        prefix, mine = "janitor-", f"janitor-{os.getpid()}-"
        try:
            names = os.listdir(self.run_dir)
        except OSError:
            return
        for name in names:
            if name.startswith(prefix) and name.endswith(".sock") and not name.startswith(mine):
                path = os.path.join(self.run_dir, name)
                try:
                    if stat.S_ISSOCK(os.lstat(path).st_mode):
                        os.unlink(path)
                except OSError:
                    pass

    def publish(self, front):
        try:
            os.unlink(self.endpoint)  # we own the lock: any socket file here is a dead broker's
        except FileNotFoundError:
            pass
        front.bind(f"ipc://{self.endpoint}")
        os.chmod(self.endpoint, 0o600)
        locator.write_locator(self.home_dir, {
            "schemaVersion": locator.LOCATOR_SCHEMA, "pid": self.process["pid"], "startTime": self.process["startTime"],
            "startedAt": int(self.started_at * 1000), "endpoint": self.endpoint, "transport": "zmq-ipc",
            "serviceVersion": bp.__version__, "installation": self.installation, "protocol": protocol.PROTOCOL_RANGE,
        })

    def unpublish(self):
        locator.remove_locator_if_mine(self.home_dir, self.process["pid"], self.process["startTime"])
        try:
            os.unlink(self.endpoint)
        except FileNotFoundError:
            pass

    # --- the front loop -------------------------------------------------------------------------

    def serve(self):
        front = self.ctx.socket(zmq.ROUTER)
        front.setsockopt(zmq.LINGER, 500)
        front.setsockopt(zmq.MAXMSGSIZE, protocol.MAX_REQUEST_FRAME)
        replies = self.ctx.socket(zmq.PULL)
        replies.bind(self._replies_address)
        self.publish(front)
        log.info("broker %s serving on %s", bp.__version__, self.endpoint)
        poller = zmq.Poller()
        poller.register(front, zmq.POLLIN)
        poller.register(replies, zmq.POLLIN)
        poller.register(self._wake_read, zmq.POLLIN)
        next_sweep = time.monotonic() + SWEEP_INTERVAL_S
        try:
            while not self.stopping.is_set():
                ready = dict(poller.poll(POLL_MS))
                if front in ready:
                    frames = front.recv_multipart()
                    try:
                        self.dispatch(front, frames)
                    except Exception:  # whatever a frame holds, it must not stop the broker
                        log.exception("request dispatch failed")
                        self._answer_crash(front, frames)
                while replies.poll(0):
                    front.send_multipart(replies.recv_multipart())
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + SWEEP_INTERVAL_S
                    try:
                        self.sweep()
                        self.keep_endpoint(front)
                    except Exception:  # housekeeping must not stop the service either
                        log.exception("housekeeping failed")
            # Let replies already computed (e.g. the disconnect that asked us to stop) go out.
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and replies.poll(50):
                front.send_multipart(replies.recv_multipart())
        finally:
            log.info("broker stopping")
            self.unpublish()
            from broker.files import artifacts

            artifacts.shutdown(getattr(self, "artifact_store", None), self.home_dir)  # private copies (screenshots, uploads, downloads) go with the broker
            self.browser.close()  # EOF to the janitor: it closes the managed tabs
            self._pool.shutdown(wait=False, cancel_futures=True)
            front.close(linger=500)
            replies.close(linger=0)
            self.ctx.destroy(linger=0)
            self._wake_read.close()
            self._wake_write.close()  # a later stop() meets the closed socket and lets it be

    def _answer_crash(self, front, frames):
        if len(frames) < 3 or frames[-2] != b"":
            return
        try:
            front.send_multipart(frames[:-1] + [self.encode(
                failure("internal_error", "The Browser Pilot service failed on this request; see its log."))])
        except zmq.ZMQError:
            log.exception("could not answer a failed request")

    def dispatch(self, front, frames):
        if len(frames) < 3 or frames[-2] != b"":
            return  # not a REQ envelope: nobody to answer
        route, payload = frames[:-1], frames[-1]
        try:
            request = self.parse(payload)
            entry = HANDLERS[request.op]
            self.check_policy(request)
            if request.op in ops.AUDITED and self.journal is not None:
                self.journal.ready()  # fails closed: no audited command runs whose line cannot be written
        except BPError as exc:
            front.send_multipart(route + [self.encode(exc.envelope())])
            return
        if request.op not in UNRECORDED and not entry.inline:
            try:
                known = self.accept(request)
            except BPError as exc:
                known = exc.envelope()
                self.audit(request, known)
            if known is not None:
                front.send_multipart(route + [self.encode(known)])
                return
        if request.op in ops.AUDITED and self.journal is not None:
            request.audit_origin = self._target_origin(request)  # where it aimed, before it ran
        if entry.inline:
            reply = self.run(entry.fn, request)
            self.audit(request, reply)
            front.send_multipart(route + [self.encode(reply)])
            self._after_reply(request)
        else:
            self._pool.submit(self._run_threaded, route, entry.fn, request)

    def check_policy(self, request):
        """capability_denied, before anything reaches the browser, for an operation the person's
        policy removes (for every key, or for keys matching a pattern); a bp open to an origin
        outside the navigation bounds likewise. Both are journaled when the op is mutating."""
        rules = self.policy
        if not rules.in_force:
            return
        denied_by = rules.denied(request.client, request.op)
        error = None
        if denied_by is not None:
            error = policy.capability_denied(request.op, denied_by)
        else:
            error = bounds.check_open(rules, request)
        if error is not None:
            self.audit(request, error.envelope())
            self.trace(request, error.envelope())
            raise error

    def audit(self, request, reply):
        """One journal line for a mutating command's outcome (accepted and finished, or denied)."""
        if self.journal is None or request.op not in ops.AUDITED:
            return
        origin = None
        if request.op == ops.OP_TAB and reply.get("url"):
            origin = policy.origin_of(reply["url"])  # the tab taken, not the one selected before
        self.journal.append(key=request.client, operation=request.op, capability=ops.OPS[request.op].capability,
                            origin=origin or request.audit_origin or self._target_origin(request),
                            command_id=request.command_id,
                            outcome="ok" if reply.get("ok") else str(reply.get("code")))

    def trace(self, request, reply):
        """A step of the key's trace, if it records one (bp trace; in memory, never fails)."""
        traces = getattr(self, "traces", None)  # (None before start_services)
        if traces is not None:
            traces.record(request, reply)

    def _target_origin(self, request):
        """The origin the command aimed at: bp open's URL, else the Agent's selected tab (origin
        only, never the URL's path, query or credentials)."""
        url = request.args.get("url") if request.op == ops.OP_OPEN else None
        if url is None and ops.OPS[request.op].runs != ops.TAB and request.op not in (ops.OP_CLOSE, ops.OP_UPLOAD):
            return None  # not aimed at a tab (connect, net rules, auth)
        if url is None:
            agent = self.agents.get(request.client)
            raw = agent.selected if agent is not None else None
            info = self.browser.targets.info(raw) if raw else None
            url = (info or {}).get("url")
        return policy.origin_of(url) if url else None

    def accept(self, request):
        """Create the command record; or, for a --request-id seen before, answer from its record
        (returns that reply) without running anything again."""
        book = self.commands.for_key(request.client)
        agent = self.agents.get(request.client)
        target = agent.opaque_of(agent.selected) if agent is not None and agent.selected else None
        digest = None
        if request.request_id:
            digest = store.digest(request.client, request.request_id, request.op, request.args, target)
            known = book.by_request(request.request_id)
            if known is not None:
                if known.digest != digest:
                    raise BPError("invalid_argument", "This --request-id was already used for a different call.",
                                  context={"field": "requestId", "reason": "request_id_reused", "commandId": known.id})
                if known.reply is not None:
                    return dict(known.reply, commandId=known.id, recovered=True)
                return failure("command_in_progress", "The command with this --request-id is still running; it is not sent twice.",
                               context={"commandId": known.id, "status": known.status},
                               hint=f"Run 'bp command {known.id}' to follow it.")
        request.record = store.Record(request.command_id, request.op, request.op in protocol.MUTATING,
                                         request.timeout_ms / 1000.0, self.browser.generation, digest,
                                         request.request_id, target, self.browser)
        book.add(request.record)
        return None

    def _run_threaded(self, route, fn, request):
        record = request.record
        try:
            if record is not None and record.status == "cancelled":
                reply = failure("command_cancelled", "The command was cancelled before it started.",
                                context={"commandId": record.id})
            else:
                reply = self.run(fn, request)  # the handler finds the record on the request
            if record is not None:
                reply = record.finish(reply)
        except Exception:  # a reply is always sent: a dropped one reads as a dead broker to the CLI
            log.exception("request %s failed after its handler", request.op)
            reply = failure("internal_error", "The Browser Pilot service failed on this request; see its log.")
        if not reply.get("recovered"):
            self.audit(request, reply)
            self.trace(request, reply)
        known = record.encoded if record is not None else None
        reply = self.encode(reply, known[1] if known is not None and known[0] is reply else None)
        if record is not None:
            record.encoded = None
        push = getattr(self._local, "push", None)
        if push is None:
            push = self._local.push = self.ctx.socket(zmq.PUSH)
            push.connect(self._replies_address)
        push.send_multipart(route + [reply])
        if record is not None and record.marks is not None:
            phases.write(self.home_dir, record)
        self._after_reply(request)

    @staticmethod
    def _after_reply(request):
        for callback in request.after_reply:
            try:
                callback()
            except Exception:  # the reply is already out: log, never answer twice
                log.exception("a step after the reply of %s failed", request.op)

    def parse(self, payload):
        if len(payload) > protocol.MAX_REQUEST_BYTES:
            raise BPError("invalid_argument", f"Request larger than {protocol.MAX_REQUEST_BYTES} bytes.",
                          context={"field": "request", "maxBytes": protocol.MAX_REQUEST_BYTES})
        try:
            data = json.loads(payload)
        except RecursionError:
            raise _too_deep() from None
        except ValueError:
            raise invalid_argument("request", "The request is not valid JSON.") from None
        if not isinstance(data, dict):
            raise invalid_argument("request", "The request must be a JSON object.")
        data = _as_data(data, 0)
        version = data.get("v")
        if isinstance(version, list) and len(version) == 2 and all(isinstance(x, int) for x in version) \
                and not protocol.compatible(version):
            raise BPError("protocol_incompatible", "The running Browser Pilot service speaks another protocol version.",
                          context={"requestedProtocol": version, "protocol": protocol.PROTOCOL_RANGE,
                                   "serviceVersion": bp.__version__},
                          remediation={"code": "stop_incompatible_broker_or_isolate", "actionRequired": True,
                                       "message": "Stop the running service with its own 'bp disconnect', or set BROWSER_PILOT_HOME to isolate this installation."})
        data = _load(schemas.REQUEST, data)
        if data["op"] not in HANDLERS:
            raise invalid_argument("op", f"Unknown operation {data['op'][:64]!r}.")
        data["args"] = _load(schemas.ARGS_SCHEMAS[data["op"]], data["args"], "args.")
        if "installation" in data:
            data["installation"] = _load(schemas.INSTALLATION, data["installation"], "installation.")
        return Request(op=data["op"], client=data["client"], args=data["args"], timeout_ms=data["timeoutMs"],
                       command_id=data["commandId"], request_id=data.get("requestId"),
                       installation=data.get("installation"))

    def run(self, fn, request):
        try:
            result = fn(self, request)
            return {"ok": True, **result}
        except BPError as exc:
            return exc.envelope()
        except Exception:
            log.exception("handler %s failed", request.op)
            return failure("internal_error", "The Browser Pilot service failed on this request; see its log.")

    @staticmethod
    def encode(reply, data=None):
        """The reply's bytes; never raises. Lone surrogates (page text, say) become U+FFFD.
        `data`: the reply already encoded (the record measured it: a big observation is not
        encoded twice)."""
        try:
            errors = schemas.REPLY.validate(reply)
            if errors:
                log.error("refusing to send a malformed reply: %s", errors)
                reply, data = failure("internal_error", "The service produced a malformed reply."), None
            try:
                data = data if data is not None else fastjson.compact(reply)
            except UnicodeEncodeError:  # lone surrogates (page text, say): U+FFFD instead
                data = text.clean(json.dumps(reply, separators=(",", ":"), ensure_ascii=False)).encode()
        except Exception:  # too deep, or not JSON at all
            log.exception("refusing to send a reply that does not encode")
            data = json.dumps(failure("internal_error", "The service produced a reply it cannot encode; see its log.")).encode()
        if len(data) > protocol.MAX_REPLY_BYTES:  # the CLI's socket would drop it unread
            data = json.dumps(failure("result_too_large", f"The reply is larger than {protocol.MAX_REPLY_BYTES} bytes.",
                                      context={"maxBytes": protocol.MAX_REPLY_BYTES})).encode()
        return data

    # --- housekeeping ----------------------------------------------------------------------------

    def sweep(self):
        self.keep_owner_lock()
        for agent in self.agents.expired():
            log.info("lease of an agent expired; releasing its state")
            self.release_key_services(agent.key)  # its copies, downloads, journals, rules and credentials
            self._pool.submit(self.release_agent_tabs, agent)

    def release_agent_tabs(self, agent):
        """Close the managed tabs and managed popups an Agent opened in the current generation.
        Never a user tab: only tabs created for this Agent, or popups of them, qualify."""
        from broker.tabs import routing

        self.emulations.release_key(agent)  # what it emulated on its tabs (and their popups)
        conn = self.browser.connection
        if conn is None or not conn.alive or agent.generation != self.browser.generation:
            return 0
        raws = routing.agent_managed_tabs(self, agent)
        closed, _ = routing.close_targets(self, list(reversed(raws)), timeout_s=5.0)
        return closed


STARTUP_ERROR_NAME = "startup-error.json"


def _startup_failed(home_dir, exc):
    """Leave the reason the service did not start for the CLI that started it (cli/startup.py)."""
    try:
        paths.replace_private_file(os.path.join(home_dir, "logs", STARTUP_ERROR_NAME),
                                   json.dumps(exc.envelope()).encode())
    except OSError:
        log.exception("could not record why the service did not start")


def _too_deep():
    return invalid_argument("request", f"The request nests deeper than {protocol.MAX_REQUEST_DEPTH} levels.",
                            maxDepth=protocol.MAX_REQUEST_DEPTH)


def _as_data(value: Any, depth: int) -> Any:
    """The decoded request with its depth bounded and lone surrogates in every string (keys
    included) replaced, so nothing downstream (errors echoing a key, records, rules) holds text
    that cannot be encoded."""
    if depth > protocol.MAX_REQUEST_DEPTH:
        raise _too_deep()
    if isinstance(value, str):
        return text.clean(value)
    if isinstance(value, dict):
        return {text.clean(k): _as_data(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_data(v, depth + 1) for v in value]
    return value


def _load(schema, data, prefix="") -> dict[str, Any]:
    try:
        return cast(dict, schema.load(data))  # the schemas here load objects
    except ValidationError as exc:
        field, message = schemas.first_error(exc.messages, prefix)
        field = field[:128]  # a field name is the caller's text: bounded in the reply
        raise invalid_argument(field, f"Invalid request: {field}: {str(message)[:512]}") from None


def main():
    os.umask(0o077)
    settings.load()  # the private settings for tests, once (bp/settings.py)
    home_dir, run_dir = paths.ensure_home()
    from bp.logs import setup_broker_logging

    setup_broker_logging(home_dir)
    try:
        # Fail closed: a policy file that is there but unsafe or invalid stops the service; the
        # `bp connect` that started it reports this error (cli/startup.py reads it back).
        rules = policy.load(home_dir)
    except BPError as exc:
        log.error("refusing to start: the policy file is unusable (%s)", exc.code)
        _startup_failed(home_dir, exc)
        logging.shutdown()
        return 4
    except OSError as exc:
        log.error("refusing to start: the policy file cannot be read (%s)", type(exc).__name__)
        _startup_failed(home_dir, BPError("unsafe_state", "The policy file cannot be read.",
                                          context={"path": policy.path_for(home_dir)[0], "reason": type(exc).__name__}))
        logging.shutdown()
        return 4
    broker = Broker(home_dir, run_dir, rules)
    if not broker.claim_ownership():
        log.error("another broker holds the owner lock; exiting")
        return 3
    try:
        broker.journal = audit.Journal(home_dir)
    except (BPError, OSError) as exc:
        log.error("refusing to start: the audit journal cannot be opened (%s)", getattr(exc, "code", type(exc).__name__))
        _startup_failed(home_dir, exc if isinstance(exc, BPError) else BPError(
            "unsafe_state", "The audit journal cannot be opened.", context={"path": os.path.join(home_dir, audit.DIR_NAME)}))
        logging.shutdown()
        return 4
    try:
        broker.start_services()
    except (BPError, OSError) as exc:
        log.error("refusing to start: the private artifact directory is unusable (%s)",
                  getattr(exc, "code", type(exc).__name__))
        _startup_failed(home_dir, exc if isinstance(exc, BPError) else BPError(
            "unsafe_state", "The private artifact directory cannot be used.", context={"path": home_dir}))
        logging.shutdown()
        return 4
    if rules.in_force:
        log.info("policy in force: %s (%s)", rules.path, rules.digest)
    broker.remove_stale_janitor_sockets()
    # A logout or a closing terminal (SIGHUP) stops the broker the orderly way too: its
    # janitor, which ignores these signals, closes the managed tabs on the pipe's EOF.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: broker.stop())
    try:
        broker.serve()
    except Exception:
        log.exception("broker crashed")
        return 1
    finally:
        logging.shutdown()
    return 0
