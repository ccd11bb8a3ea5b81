"""Browser Pilot's isolated worlds: how a script reaches a document, and the one retry rule.

Every Browser Pilot script runs in its own isolated world of a document (never the page's
world: the page cannot see or patch it), as one expression with the in-page library
(scripts/lib.js) in scope. A document replaced between finding its world and using it is the
browser's CDPError `context_gone`; `once_more_if_replaced` is the only place that retries it.
"""

import json
from importlib import resources
from typing import Any

from bp import text as page_text
from bp.errors import BPError, invalid_argument
from broker.browser.connection import CDPError

WORLD_NAME = "browser-pilot"

_SCRIPTS = {}
# The scripts of scripts/ that make up the in-page library, with helpers.js (its small entry
# points, helper()); reveal.js is called on an object, alone.
LIBRARY_ENTRIES = ("observe.js", "resolve.js", "page.js", "focus.js", "select.js", "scroll.js")
_ENTRY_OF = {}  # script(name) text -> name, for a library entry
# Where a world keeps the library: its own global object, which the page cannot see.
KEPT = "globalThis.__browserPilotLibrary"
MISSING = '{"__browserPilotMissing": true}'
_LIBRARY = None


def _folder():
    return resources.files("broker").joinpath("scripts")


def _with_lib(expression):
    """`expression` (JavaScript) evaluated with scripts/lib.js in its scope, as one expression."""
    return '(function () {\n"use strict";\n' + _folder().joinpath("lib.js").read_text() + f"\nreturn {expression};\n}})()"


def script(name):
    """scripts/<name> as one expression, with the in-page library (scripts/lib.js) in its scope.
    Sent to a world through call_in_world, a library entry is called by name in the world's
    library instead (library())."""
    if name not in _SCRIPTS:
        # In parentheses: the script starts with comment lines, which a bare `return` would end at.
        _SCRIPTS[name] = _with_lib("(\n" + _folder().joinpath(name).read_text() + "\n)")
        if name in LIBRARY_ENTRIES:
            _ENTRY_OF[_SCRIPTS[name]] = name
    return _SCRIPTS[name]


def helper(name):
    """The function `name` of scripts/helpers.js (the library's small entry points), as one
    expression with lib.js in scope; sent through call_in_world, the world's library entry."""
    key = f"helpers.js/{name}"
    if key not in _SCRIPTS:
        _SCRIPTS[key] = _with_lib("(\n" + _folder().joinpath("helpers.js").read_text() + f"\n)[{json.dumps(name)}]")
        _ENTRY_OF[_SCRIPTS[key]] = key
    return _SCRIPTS[key]


def _entry(name):
    """The expression naming library entry `name` in the world's library L."""
    return "L" + "".join(f"[{json.dumps(part)}]" for part in name.split("/"))


def library():
    """The in-page library: one object per world, made once per document, its entry points named
    after their scripts (scripts/lib.js shared by all). Each call starts with fresh per-call state
    (lib.js caches what one walk measures: never across calls, the page changes in between)."""
    global _LIBRARY
    if _LIBRARY is None:
        for name in LIBRARY_ENTRIES:
            script(name)
        entries = ",\n".join([f"{json.dumps(name)}: entry(\n{_folder().joinpath(name).read_text()}\n)"
                               for name in LIBRARY_ENTRIES]
                              + ['"helpers.js": Object.fromEntries(Object.entries(\n'
                                 + _folder().joinpath("helpers.js").read_text() + "\n).map(([k, f]) => [k, entry(f)]))"])
        # Each call starts with lib.js's per-walk caches empty.
        _LIBRARY = _with_lib("((entry) => ({\n" + entries + "\n}))((run) => function () { LAYOUT = null; "
                             "BOX_FACTS.clear(); return run.apply(this, arguments); })")
    return _LIBRARY


def _expression(session, context_id, source, opts_json, fn):
    """The expression that runs source(opts[, fn]) in the world `context_id`, and what to note
    once it ran. The library crosses the pipe and the browser's parser once per world (about
    100 kB): later calls name their entry points in it. A world that lost it (never seen) answers
    MISSING and is sent it whole."""
    sent = getattr(session, "scripts_sent", None)
    name, fn_name = _ENTRY_OF.get(source), _ENTRY_OF.get(fn) if fn else None
    if sent is None or (name is None and fn_name is None):
        return f"({source})({opts_json}{', ' + fn if fn else ''})", None
    call = (f"({_entry(name)} || 0)" if name else f"({source})") + f"({opts_json}"
    if fn:
        call += f", {_entry(fn_name)})" if fn_name else f", {fn})"
    else:
        call += ")"
    kept = (sent, context_id)
    if context_id in sent:
        return f"((L) => L ? {call} : ({MISSING}))({KEPT})", kept
    return f"((L) => {call})({KEPT} = {KEPT} || {library()})", kept


def world_key(agent_key):
    """The key under which the world stores this Agent's handles (not the raw client key)."""
    import hashlib

    return "a" + hashlib.sha256(agent_key.encode()).hexdigest()[:16]


def call_in_world(session, context_id, source, opts, timeout_s=15.0, fn=None, await_promise=False,
                  as_text=False) -> Any:
    """source(opts[, fn]) in the world `context_id`, its value returned as JSON. With as_text,
    the value crosses CDP as one JSON string (JSON.stringify in the page), for a big plain
    value: the browser turns 10,000 objects into a protocol value far slower (~40 ms) than
    into a string (~10 ms), and the broker decodes the string as fast as the reply around it."""
    return send_in_world(session, context_id, source, opts, timeout_s, fn, await_promise, as_text, later=False).value()


def send_in_world(session, context_id, source, opts, timeout_s=15.0, fn=None, await_promise=False, as_text=False,
                  later=True):
    """call_in_world, sent now (on a session that can) and answered by .value() later: its round
    trip overlaps what the caller sends next, in order (scripts run in the order sent)."""
    return InWorld(session, context_id, source, (json.dumps(opts), fn), timeout_s, await_promise, as_text, later)


class InWorld:
    """A script sent to a world (send_in_world): value() waits for its answer, drop() forgets it."""

    def __init__(self, session, context_id, source, args, timeout_s, await_promise, as_text, later):
        self.session, self.context_id, self.source, self.args = session, context_id, source, args
        self.timeout_s, self.await_promise, self.as_text = timeout_s, await_promise, as_text
        self.expression, self.kept = _expression(session, context_id, source, *args)
        call_later = getattr(session, "call_later", None) if later else None
        self.sent = call_later("Runtime.evaluate", self._params()) if call_later else None

    def _params(self):
        expression = f"JSON.stringify({self.expression})" if self.as_text else self.expression
        return {"expression": expression, "contextId": self.context_id, "returnByValue": True,
                "awaitPromise": self.await_promise}

    def _answer(self):
        # A JavaScript dialog that opens meanwhile blocks every world of the page: stop waiting.
        dialog_open = getattr(self.session, "dialog_open", None)
        sent, self.sent = self.sent, None
        if sent is not None:
            reply = sent.result(timeout_s=self.timeout_s, abort=dialog_open)
        else:
            reply = self.session.call("Runtime.evaluate", self._params(), timeout_s=self.timeout_s, abort=dialog_open)
        return _value(self.session, reply, self.as_text)

    def value(self):
        value = self._answer()
        if self.kept is not None:
            sent, context_id = self.kept
            if isinstance(value, dict) and value.get("__browserPilotMissing"):
                sent.discard(context_id)
                self.expression, self.kept = _expression(self.session, context_id, self.source, *self.args)
                value = self._answer()
            sent.add(context_id)
        return value

    def drop(self):
        if self.sent is not None:
            self.sent.drop()
            self.sent = None


def _value(session, reply, as_text):
    """The value of a Runtime.evaluate reply of a Browser Pilot script (its failure as a BPError)."""
    if reply is None:
        raise BPError("action_not_verified", "A JavaScript dialog is open in this tab and blocks the page.",
                      retryable=True, context=session.dialog_context())
    if reply.get("exceptionDetails"):
        details = reply["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text") or "script failed"
        if "is not a valid selector" in text:  # the Agent's --selector, not the script, is wrong
            raise invalid_argument("selector", "The selector is not valid CSS.", reason="invalid_selector")
        raise BPError("internal_error", "A Browser Pilot script failed in the page.",
                      context={"detail": text.splitlines()[0][:200]})
    value = (reply.get("result") or {}).get("value")
    if as_text and isinstance(value, str):
        # Lone surrogates: JSON.stringify escapes them, and text.loads makes them U+FFFD as it
        # does in any CDP reply. Bytes, so that the fast decoder reads them.
        return page_text.loads(value.encode("utf-8", "surrogatepass"))
    return value


def once_more_if_replaced(run, forget):
    """The one retry rule for a script in a world: if the browser says the document (or world)
    is gone, `forget` the cached world and `run` once more in the new document; a second
    replacement is the caller's error (the page is navigating: never chase it)."""
    try:
        return run()
    except CDPError as exc:
        if not exc.context_gone:
            raise
    forget()
    return run()


def run_in_world(session, source, opts, timeout_s=15.0, fn=None, await_promise=False):
    """Run source(opts) in Browser Pilot's isolated world of the session's current document."""
    return once_more_if_replaced(
        lambda: call_in_world(session, session.world(WORLD_NAME)[0], source, opts, timeout_s, fn, await_promise),
        session.forget_world)


def context_gone(exc):
    """The document (or world) a script was to run in went away: the browser said so."""
    return isinstance(exc, CDPError) and exc.context_gone


# Elements Chrome names by backend node id (frame owners, listener targets) reach Browser
# Pilot's world as *positions*, never as objects: DOM.resolveNode into an isolated world can
# leave that world with two wrappers for one node (seen with Chromium 156 after several
# navigations in a tab), after which `===`, elementFromPoint and the walker's handles disagree.
# So nodes are resolved into a separate probe world, their paths below the document computed
# there with isSameNode (identity of the node, not of its wrapper), and followed again in
# Browser Pilot's world (lib.js fromPath).
PATH_OF = """function (...nodes) {
  const index = (parent, n) => { const kids = parent.children; for (let i = 0; i < kids.length; i++) if (kids[i].isSameNode(n)) return i; return -1; };
  return nodes.map((node) => {
    const steps = [];
    for (let n = node; n && !n.isSameNode(n.ownerDocument.documentElement); ) {
      const parent = n.parentNode;
      if (!parent || parent.nodeType === 9) return null;
      const i = index(parent, n);
      if (i < 0) return null;
      steps.push(i);
      if (parent.nodeType === 11) { if (!parent.host) return null; steps.push(-1); n = parent.host; } else n = parent;
    }
    return node && node.nodeType === 1 && node.ownerDocument === document ? steps.reverse() : null;
  });
}"""
PROBE_WORLD = "browser-pilot-probe"


def node_paths(session, backend_ids):
    """[path or None] of these backend nodes of the session's document (see above)."""
    if not backend_ids:
        return []
    probe = session.probe_world(PROBE_WORLD)
    objects = []
    for backend_id in backend_ids:
        try:
            node = session.call("DOM.resolveNode", {"backendNodeId": backend_id, "executionContextId": probe,
                                                    "objectGroup": PROBE_WORLD}, timeout_s=5.0)
            objects.append((node.get("object") or {}).get("objectId"))
        except BPError:
            objects.append(None)  # gone, or in another frame's document
    found = [o for o in objects if o]
    if not found:
        return [None] * len(backend_ids)
    reply = session.call("Runtime.callFunctionOn", {"functionDeclaration": PATH_OF, "objectId": found[0],
                                                    "arguments": [{"objectId": o} for o in found],
                                                    "returnByValue": True}, timeout_s=5.0)
    session.send_nowait("Runtime.releaseObjectGroup", {"objectGroup": PROBE_WORLD})
    paths = iter((reply.get("result") or {}).get("value") or [])
    return [next(paths, None) if o else None for o in objects]


def by_selector(session, source, opts, timeout_s=15.0, field="selector"):
    """Run `source` ((el, opts) => value) on the first match of opts["selector"] in the top
    document; a missing or invalid selector is invalid_argument (context.field `field`)."""
    answer = run_in_world(session, helper("bySelector"), opts, timeout_s, source)
    if isinstance(answer, dict) and (answer.get("missing") or answer.get("badSelector")):
        what = "is not a valid CSS selector" if answer.get("badSelector") else "did not match"
        raise BPError("invalid_argument", f"Selector \"{opts['selector'][:200]}\" {what}.",
                      context={"field": field})
    return answer
