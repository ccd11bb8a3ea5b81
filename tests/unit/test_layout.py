"""The tree's shape: no import cycle, no lower layer reaching up, and CDP errors that carry
the browser's own code instead of being classified by their wording."""

import ast
import pathlib

import pytest

from bp.errors import BPError
from broker.browser.connection import CDPError
from broker.observe import worlds

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("bp", "broker", "cli", "janitor")


def _modules():
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _import_graph():
    """module -> the tree's modules it imports, at the top or inside a function alike (a lazy
    import is still a dependency: it only hides a cycle until the call)."""
    modules = _modules()

    def resolve(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(resolve(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps.update(resolve(f"{node.module}.{alias.name}") for alias in node.names)
        deps.discard(None)
        deps.discard(name)
        graph[name] = deps
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_tree_has_no_import_cycle():
    assert _cycles(_import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("lower, upper", [
    ("broker.browser.connection", "broker.records"),  # the transport knows nothing of command records
    ("broker.tabs", "broker.network"),  # a tab session offers hooks; features attach to it
    ("broker.tabs", "broker.files"),
    ("broker.tabs", "broker.emulate"),
    ("broker.observe.worlds", "broker.observe.snapshot"),
    ("broker.observe.frames", "broker.observe.snapshot"),
    ("bp", "broker"),
    ("bp", "cli"),
    ("cli", "broker"),
    ("janitor", "broker"),
    ("janitor", "cli"),
])
def test_no_lower_layer_imports_an_upper_one(lower, upper):
    graph = _import_graph()
    offenders = {m: sorted(d for d in deps if d == upper or d.startswith(upper + "."))
                 for m, deps in graph.items() if m == lower or m.startswith(lower + ".")}
    assert {m: d for m, d in offenders.items() if d} == {}


# Package-level layers, as Playwright's DEPS.list: each package of the tree and what it may
# import. broker/commands/ is the top layer (one module per command family); the engine below it
# never imports it. An arrow not listed here fails: add it only if it points down.
LAYERS = {
    "bp": set(),
    "janitor": {"bp"},
    "cli": {"bp", "cli.commands"},
    "cli.commands": {"bp", "cli"},
    "broker": set(),
    "broker.__main__": {"broker.server"},
    "broker.server": {"bp", "broker.agents", "broker.browser", "broker.emulate", "broker.files", "broker.handlers",
                      "broker.network", "broker.policy", "broker.records", "broker.registry", "broker.tabs",
                      "broker.trace"},
    "broker.handlers": {"broker.commands"},
    "broker.commands": {"bp", "broker.actions", "broker.browser", "broker.emulate", "broker.files", "broker.forms",
                        "broker.network", "broker.observe", "broker.page", "broker.policy", "broker.records",
                        "broker.registry", "broker.tabs", "broker.trace", "broker.waits"},
    # The handler scaffold; an acting command runs through broker/actions/pipeline.py.
    "broker.registry": {"bp", "broker.actions", "broker.tabs"},
    "broker.trace": {"bp", "broker.files"},
    "broker.files": {"bp", "broker.observe", "broker.page"},
    "broker.emulate": {"bp", "broker.browser", "broker.records"},
    "broker.network": {"bp", "broker.policy"},
    "broker.forms": {"bp", "broker.actions", "broker.observe", "broker.records"},
    "broker.actions": {"bp", "broker.observe", "broker.records"},
    "broker.waits": {"bp", "broker.actions", "broker.browser", "broker.page", "broker.policy", "broker.tabs"},
    "broker.observe": {"bp", "broker.browser", "broker.tabs"},
    "broker.page": {"bp", "broker.browser", "broker.observe", "broker.records", "broker.tabs"},
    "broker.policy": {"bp", "broker.tabs"},
    "broker.tabs": {"bp", "broker.agents", "broker.browser", "broker.records"},
    "broker.browser": {"bp"},
    "broker.records": {"bp"},
    "broker.agents": {"bp"},
}
# Package cycles still to break (issue 28 item 2); a new one fails, and so does one that is gone
# (take it off the list, so it cannot come back unnoticed).
KNOWN_PACKAGE_CYCLES = [
    ["cli", "cli.commands"],  # parent and child: commands use the client, the group loads commands lazily
]


def _package(module):
    parts = module.split(".")
    if parts[0] == "broker" and len(parts) > 1:
        return "broker." + parts[1]
    if parts[:2] == ["cli", "commands"]:
        return "cli.commands"
    return parts[0]


def _package_graph():
    graph = {}
    for module, deps in _import_graph().items():
        arrows = graph.setdefault(_package(module), set())
        arrows.update(_package(d) for d in deps if _package(d) != _package(module))
    return graph


def test_every_package_arrow_is_a_declared_layer():
    graph = _package_graph()
    assert sorted(graph) == sorted(LAYERS), "a package came or went: declare it in LAYERS"
    undeclared = {package: sorted(arrows - LAYERS[package]) for package, arrows in graph.items()
                  if arrows - LAYERS[package]}
    assert undeclared == {}


def test_the_engine_never_imports_the_commands():
    graph = _import_graph()
    reaching_up = {m: sorted(d for d in deps if d.startswith("broker.commands")) for m, deps in graph.items()
                   if m.startswith("broker.") and not m.startswith("broker.commands") and m != "broker.handlers"}
    assert {m: d for m, d in reaching_up.items() if d} == {}


# The broker's services (broker/server.py start_services) and their Broker attribute names.
SERVICES = ("artifact_store", "download_tracker", "network_hub", "emulations", "traces")


def test_services_are_handed_to_the_features_never_fetched_from_the_broker():
    """Only the broker's wiring (broker/server.py) and the handlers (broker/commands/) read a
    service off the Broker; they hand it on (a constructor argument, a function argument, or a
    tab session's slot set by the service's own session hook). A feature that reached for one
    through the Broker would depend on the whole broker again."""
    import re

    reach = re.compile(r"\b(?:broker|self\.broker|tab\.broker)\.(" + "|".join(SERVICES) + r")\b"
                       r"|getattr\((?:broker|self\.broker), [\"'](" + "|".join(SERVICES) + r")[\"']")
    found = []
    for path in sorted((ROOT / "broker").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "broker/server.py" or rel.startswith("broker/commands/"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if reach.search(line):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert found == []
    assert reach.search("    store = broker.artifact_store") and reach.search('getattr(broker, "network_hub", None)')


def test_package_cycles_are_only_the_known_ones():
    assert sorted(_cycles(_package_graph())) == sorted(KNOWN_PACKAGE_CYCLES)


def test_a_cdp_error_keeps_the_protocols_code_and_names_the_cases_callers_act_on():
    gone = CDPError("Runtime.evaluate", {"code": -32000, "message": "Cannot find context with specified id"})
    assert isinstance(gone, BPError) and gone.code == "internal_error" and gone.cdp_code == -32000
    assert gone.context_gone and not gone.invalid_url and gone.context == {"method": "Runtime.evaluate"}
    assert CDPError("Runtime.callFunctionOn", {"code": -32000, "message": "Execution context was destroyed."}).context_gone
    assert CDPError("Page.navigate", {"code": -32000, "message": "Cannot navigate to invalid URL"}).invalid_url
    assert CDPError("Runtime.evaluate", {"code": -32000, "message": "Object reference chain is too long"}).not_serializable
    assert CDPError("Network.setCookie", {"code": -32602, "message": "Sanitizing cookie failed"}).cookie_refused
    long = CDPError("X.y", {"message": "m" * 5000})
    assert len(long.message) < 300  # the browser's text is bounded in what an Agent sees
    assert not CDPError("X.y", {}).context_gone  # no message at all is not a match


class _Session:
    def __init__(self):
        self.context = 1
        self.forgotten = 0

    def world(self, name):
        assert name == worlds.WORLD_NAME
        return self.context, None

    def forget_world(self):
        self.forgotten += 1
        self.context += 1


def test_a_replaced_document_is_tried_once_more_and_only_once():
    session, tried = _Session(), []

    def run():
        tried.append(session.world(worlds.WORLD_NAME)[0])
        if len(tried) == 1:
            raise CDPError("Runtime.evaluate", {"message": "Cannot find context with specified id"})
        return "answer"

    assert worlds.once_more_if_replaced(run, session.forget_world) == "answer"
    assert tried == [1, 2] and session.forgotten == 1

    def always_gone():
        raise CDPError("Runtime.evaluate", {"message": "Execution context was destroyed."})

    with pytest.raises(CDPError):
        worlds.once_more_if_replaced(always_gone, session.forget_world)
    assert session.forgotten == 2  # forgotten once, then the second failure is the caller's


def test_other_failures_are_never_retried():
    session, calls = _Session(), []

    def refused():
        calls.append(1)
        raise CDPError("Runtime.evaluate", {"message": "Invalid parameters"})

    with pytest.raises(CDPError):
        worlds.once_more_if_replaced(refused, session.forget_world)
    with pytest.raises(BPError):
        worlds.once_more_if_replaced(lambda: (_ for _ in ()).throw(BPError("target_crashed", "x")),
                                     session.forget_world)
    assert calls == [1] and session.forgotten == 0
