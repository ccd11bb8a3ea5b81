"""The click-free fast path (cli/fast.py) serves a subset of what the click commands accept and
sends exactly the request they would send: checked argv by argv against the real click
application, with the broker call replaced by a recorder (nothing here is about the wire)."""

import os
import pytest
from hypothesis import given, settings, strategies as st

from bp import protocol
from cli import client, fast, signals, table


class Sent(Exception):
    pass


def click_request(argv, monkeypatch):
    """What the click application would send for argv: (settings, op, args) or None when
    click refuses the argv (a usage error)."""
    import click

    from bp.errors import BPError
    from cli.main import cli

    recorded = {}

    def record(settings, op, args, *, installation=None):
        recorded.update(fields={"client_key": settings.client_key, "request_id": settings.request_id,
                                "timeout_ms": settings.timeout_ms}, op=op, args=args)
        raise Sent()

    monkeypatch.setattr(client, "call", record)
    monkeypatch.setattr(client, "broker_running", lambda home_dir: True)
    monkeypatch.setattr(signals, "install", lambda: None)
    try:
        cli.main(args=list(argv), prog_name="bp", standalone_mode=False)
    except Sent:
        return recorded["fields"], recorded["op"], recorded["args"]
    except click.UsageError:
        return None
    except click.exceptions.Exit:
        return None
    except BPError:  # refused by the command itself (e.g. wait without a condition)
        return None
    raise AssertionError(f"click neither sent nor refused {argv!r}")


def check_same(argv, monkeypatch, environ=None):
    environ = environ or {}
    for name in ("BROWSER_PILOT_CLIENT_KEY", "BROWSER_PILOT_REQUEST_ID"):
        if name in environ:
            monkeypatch.setenv(name, environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    planned = fast.plan(list(argv), environ)
    if planned is None:
        return None
    assert click_request(argv, monkeypatch) == planned, argv
    return planned


@pytest.mark.parametrize("argv", [
    ["snapshot"], ["snapshot", "--limit", "100"], ["snapshot", "-l", "7", "--diff"], ["snapshot", "--limit=3"],
    ["click", "3"], ["click", "--limit", "5", "12"], ["click", "3", "--double"], ["click", "3", "--right"],
    ["hover", "9"], ["type", "4", "Ada Lovelace", "--clear", "-s"], ["type", "1", ""], ["press", "Shift+Tab"],
    ["tabs"], ["status"], ["--json", "--timeout", "5000", "click", "2"],
    ["--client-key", "agent-7", "--request-id", "r1", "type", "2", "x"], ["--client-key=agent-x", "snapshot"],
    ["scroll"], ["scroll", "up"], ["scroll", "down", "--amount", "400", "--unit", "pixels"], ["scroll", "--to", "end"],
    ["scroll", "--to-text", "Terms of service", "--exact"], ["scroll", "--selector", "#results", "--to", "start"],
    ["scroll", "right", "--ref", "4", "--amount=0.5", "-l", "9"],
    ["select", "4", "Canada"], ["select", "#size", "m", "--by", "value"], ["select", "select[name=c]", "Ca", "--contains"],
    ["select", "2", "3", "--by=index", "--limit", "10"],
    ["open", "example.com"], ["open", "--new", "http://127.0.0.1:8000/"], ["open", "-n", "a.test", "--profile", "Work"],
    ["open", "about:blank", "-l", "20"],
    ["wait", "--url", "*/dashboard*"], ["wait", "--text", "Order confirmed"], ["wait", "--selector", "#r li", "--interval", "500"],
    ["wait", "--dialog"], ["wait", "--popup"], ["wait", "--download"], ["--timeout", "10000", "wait", "--url=*x*"],
    ["wait", "--text", "x", "--timeout", "500"], ["--timeout", "9000", "wait", "--popup", "--timeout=800"],
    ["read"], ["read", "--limit", "8000"], ["read", "#results"], ["read", "--from-anchor", "#installation"],
    ["find", "a.result"], ["find", "a", "--attributes", "href,title", "--limit", "50"], ["find", "p", "--no-shadow"],
    ["search", "free shipping", "--whole-word"], ["search", "x", "--selector", "main", "--case-sensitive", "-l", "200"],
    ["keyboard", "hello"], ["keyboard", "hello", "--click", "#editor", "--delay", "20"], ["keyboard", "x", "-c", "-s"],
    ["keyboard", "", "-d", "0", "--click", ""],
    ["snapshot", "--grep", "Delete"], ["snapshot", "--grep=row 2", "--role", "button", "-l", "3"],
    ["snapshot", "--role=link"], ["click", "10001"], ["hover", "999999"], ["click", "--xy", "1,2"],
    ["click", "--xy=0,100000", "--double"],
])
def test_common_steps_take_the_fast_path_and_send_what_click_sends(argv, monkeypatch):
    assert check_same(argv, monkeypatch) is not None


@pytest.mark.parametrize("argv", [
    ["--human", "snapshot"], ["--help"], ["snapshot", "--help"], ["click", "--xy", "1;2"], ["type", "3", "-"],
    ["click", "١"], ["snapshot", "--limit", "１"], ["snapshot", "--limit", "0"], ["click", "3", "--double", "--right"],
    ["click"], ["snapshot", "-l5"], ["close", "--all"], ["press", "Hyper+x"], ["--timeout", "0", "tabs"],
    ["snapshot", "--", "x"], ["type", "3", "-x"], ["click", "3", "--limit", "5", "--limit", "6"],
    ["scroll", "up", "--to", "end"], ["scroll", "--ref", "1", "--selector", "x"], ["scroll", "--to", "end", "--amount", "2"],
    ["scroll", "--exact"], ["scroll", "--to-text", ""], ["scroll", "--amount", "0"], ["scroll", "--amount", "1e3"],
    ["scroll", "sideways"], ["scroll", "--unit", "Pixels"], ["select", "0", "x"], ["select", " ", "x"],
    ["select", "4", "x", "--by", "text"], ["open", "javascript:alert(1)"], ["open", ""], ["open", "chrome://settings"],
    ["wait"], ["wait", "--url", "x", "--text", "y"], ["wait", "--text", " "], ["wait", "--dialog", "--interval", "50"],
    ["read", "--limit", "1000001"], ["read", "a", "b"], ["find"], ["find", "a", "--attributes", "1bad"],
    ["find", "a", "--attributes", ","], ["search", "x", "--limit", "201"], ["keyboard", "-"], ["keyboard", "x", "-d", "1001"],
    ["click", "--xy", "1,100001"], ["click", "3", "--xy", "1,2"], ["scroll", "--to-text", "x" * 1001], ["select", "1", "x" * 4097],
    ["snapshot", "--grep", "x", "--diff"], ["snapshot", "--role", "heading"], ["snapshot", "--grep", " "],
    ["snapshot", "--grep", "x", "--grep", "y"], ["click", "1000001"],
])
def test_everything_else_goes_to_click(argv, monkeypatch):
    assert fast.plan(argv, {}) is None


def test_the_environment_supplies_the_key_and_request_id_as_in_click(monkeypatch):
    planned = check_same(["snapshot"], monkeypatch,
                         {"BROWSER_PILOT_CLIENT_KEY": "agent-env", "BROWSER_PILOT_REQUEST_ID": "step-9"})
    assert planned[0]["client_key"] == "agent-env" and planned[0]["request_id"] == "step-9"
    assert fast.plan(["snapshot"], {"BROWSER_PILOT_CLIENT_KEY": "x"}) is None  # invalid: click reports it


TOKENS = ["--grep", "--role", "button", "heading", "--grep=Row", "--role=link", "snapshot", "click", "hover", "type", "press", "tabs", "status", "--limit", "-l", "--diff", "--double",
          "--right", "--clear", "-c", "--submit", "-s", "--json", "--timeout", "--client-key", "--request-id",
          "1", "3", "50", "10000", "10001", "0", "-1", "007", "+5", "٣", "abc", "Enter", "Control+a", "x",
          "--limit=2", "--timeout=100", "agent-1", "-", "--", "", " 5", "300000", "300001"]
HOT_TOKENS = ["scroll", "select", "open", "wait", "read", "find", "search", "keyboard", "up", "down", "left", "right",
              "--amount", "--unit", "pixels", "viewport", "--ref", "--selector", "--to", "start", "end", "--to-text",
              "--exact", "--by", "label", "value", "index", "--contains", "-n", "--new", "--profile", "example.com",
              "javascript:x", "about:blank", "--url", "--text", "--dialog", "--download", "--popup", "--interval",
              "100", "99", "5000", "5001", "--from-anchor", "#", "#top", "--attributes", "href,title", "a b", "1x",
              "--no-shadow", "--case-sensitive", "--whole-word", "200", "201", "-d", "--delay", "1000", "--click",
              "--timeout", "--timeout=300000", "300001",
              "0.5", "1e3", "1000000", "1000001", "#id", " ", "-l", "1", "3", "x", "", "-", "--limit", "--json"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=6))
def test_any_argv_the_fast_path_takes_is_one_click_takes_the_same_way(monkeypatch_argv):
    argv = monkeypatch_argv
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same(argv, monkeypatch)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["--json", "--timeout", "5000", "--timeout=7", "--client-key", "agent-1"]), max_size=2),
       st.sampled_from(["scroll", "select", "open", "wait", "read", "find", "search", "keyboard"]),
       st.lists(st.sampled_from(HOT_TOKENS), max_size=6))
def test_the_remaining_hot_commands_agree_with_click_on_any_argv(globals_, command, rest):
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same([*globals_, command, *rest], monkeypatch)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["--timeout", "5000", "--timeout=7"]), max_size=2),
       st.lists(st.sampled_from(["--url", "--text", "--selector", "--dialog", "--popup", "--download", "*x*", "a",
                                 "--interval", "100", "--timeout", "800", "--timeout=300000", "0"]), max_size=5))
def test_wait_takes_its_deadline_as_click_does(globals_, rest):
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same([*globals_, "wait", *rest], monkeypatch)


def test_both_parsers_read_one_declaration():
    """Each hot command is declared once (cli/declare.py); click's command is made from the same
    parameters the fast path reads, and each has a type and callback the fast path can read."""
    import click

    from cli import declare
    from cli.main import cli

    assert table.HOT
    for name in table.HOT:
        row = table.COMMANDS[name]
        module = __import__(row.module, fromlist=[row.function])
        declared = getattr(module, row.function)
        assert isinstance(declared, declare.Declared), name
        assert callable(getattr(module, row.request)), name
        made = cli.get_command(click.Context(cli), name)
        assert made is declared.click_command()
        assert [(p.name, tuple(p.opts) + tuple(p.secondary_opts) if p.param_type_name == "option" else ())
                for p in made.params] == [(p.name, p.spellings) for p in declared.params], name
        context = click.Context(made)
        for param, clicks in zip(declared.params, made.params):
            assert isinstance(param.type, (declare.Text, declare.IntRange, declare.FloatRange, declare.Choice))
            assert (param.required, param.is_flag) == (clicks.required, getattr(clicks, "is_flag", False)), param.name
            if "default" in param.attrs or param.is_flag:  # else click passes None, as the fast path does
                assert param.default == clicks.get_default(context, call=False), param.name
            else:
                assert param.default is None


def test_the_global_options_are_the_click_groups():
    from cli.main import cli

    spellings = {spelling: param.name for param in cli.params for spelling in param.opts}
    assert {spelling: spellings[spelling] for spelling in fast._GLOBALS} == {
        "--client-key": "client_key", "--request-id": "request_id", "--timeout": "timeout_ms"}
    assert "--json" in spellings


HEAVY = ('click', 'zmq', 'marshmallow', 'psutil', 'orjson', 'json', 're', 'enum', 'socket', 'typing')


def test_the_fast_path_does_not_import_click_or_zmq():
    import subprocess
    import sys

    code = ("import sys; from cli import fast; fast.plan(['click', '3'], {});"
            f"from cli import client; print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__)))).stdout
    assert out.strip() == "[]"
    assert protocol.OP_CLICK == "click"


def test_the_bp_script_itself_imports_nothing_heavy():
    """bin/bp (the installed `bp`) up to the request: pip's console-script wrapper imported re."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    code = ("import sys; sys.argv = ['bp', 'click', '3']; from cli import fast;"
            f"fast.run = lambda *planned: print(sorted(m for m in {HEAVY!r} if m in sys.modules)) or 0;"
            "exec(compile(open('bin/bp').read(), 'bin/bp', 'exec'), {'__name__': '__main__'})")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_shell_completion_reaches_click_untouched(monkeypatch):
    import sys

    import cli.main

    called = []
    monkeypatch.setenv("_BP_COMPLETE", "bash_complete")
    monkeypatch.setattr(sys, "argv", ["bp", "snapshot"])  # a form the fast path would serve
    monkeypatch.setattr(cli.main, "main", lambda: called.append(True))
    monkeypatch.setattr(fast, "run", lambda *planned: called.append("fast"))
    fast.main()
    assert called == [True]


# --- argv drawn from the click declarations themselves: a new option is covered the day it exists --

def _samples(param):
    """Values of one click parameter's type, edges included, plus a few it refuses."""
    import click

    kind = param.type
    if isinstance(kind, click.IntRange):
        low, high = kind.min if kind.min is not None else 0, kind.max if kind.max is not None else 10 ** 6
        return [str(v) for v in (low, high, low - 1, high + 1, (low + high) // 2)] + ["x", "٣"]
    if isinstance(kind, click.FloatRange):
        return ["0", "0.5", "1", "400", "1e3", "-1"]
    if isinstance(kind, click.Choice):
        return list(kind.choices) + [str(kind.choices[0]).upper(), "nope"]
    return ["x", "a b", "", "-", " ", "#top", "3", "*x*", "example.com", "href,title", "Enter"]


def _argv_strategy(name):
    """Hypothesis argv for one hot command, from its click parameters: any subset of its options
    (each spelling, `--opt=value` too) in any order, and its arguments."""
    import click

    from cli.main import cli

    command = cli.get_command(click.Context(cli), name)
    parts = []
    for param in command.params:
        if param.param_type_name == "argument":
            parts.append(st.sampled_from(_samples(param)).map(lambda v: [v]))
            continue
        spellings = list(param.opts) + list(param.secondary_opts)
        if param.is_flag:
            parts.append(st.sampled_from(spellings).map(lambda s: [s]))
            continue
        values = _samples(param)
        parts.append(st.tuples(st.sampled_from(spellings), st.sampled_from(values), st.booleans()).map(
            lambda t: [f"{t[0]}={t[1]}"] if t[2] and t[0].startswith("--") else [t[0], t[1]]))
    if not parts:
        return st.just([])
    return st.lists(st.sampled_from(range(len(parts))), max_size=len(parts) + 1).flatmap(
        lambda picks: st.tuples(*[parts[i] for i in picks])).map(lambda chunks: [t for c in chunks for t in c])


@pytest.mark.parametrize("name", table.HOT)
def test_every_declared_option_of_a_hot_command_agrees_with_click(name):
    @settings(max_examples=60, deadline=None)
    @given(_argv_strategy(name))
    def check(rest):
        with pytest.MonkeyPatch.context() as monkeypatch:
            check_same([name, *rest], monkeypatch)

    check()


def test_a_flag_added_to_click_is_never_dropped_by_the_fast_path(monkeypatch):
    """The drift the fast path once had: add `--force` to `bp click` (and regenerate its table),
    and the fast path parsed the flag and sent the request without it. Now both parsers read the
    one declaration and run the command's one builder, and a flag it does not read is never
    dropped silently: the fast path hands the argv to click, and click's path stops at the
    unread value (a bug, caught here)."""
    from cli import declare
    from cli.commands import actions

    declared = actions.click_ref
    force = declare.Param("option", ("--force",), {"is_flag": True, "help": "A flag the builder knows nothing of."})
    monkeypatch.setattr(actions, "click_ref", declare.Declared(declared.function, declared.attrs,
                                                               [*declared.params, force]))
    assert any(p.name == "force" for p in actions.click_ref.params)  # both parsers see the flag
    assert fast.plan(["click", "3", "--force"], {}) is None  # so click gets the argv, flag and all
    assert fast.plan(["click", "3"], {}) is not None  # and the flag's default changes nothing there
    with pytest.raises(AssertionError, match=r"click_request does not read \['force'\]"):
        click_request(["click", "3", "--force"], monkeypatch)


@pytest.mark.parametrize("attrs", [{"multiple": True}, {"nargs": 2}, {"count": True}, {"envvar": "BP_X"},
                                   {"is_flag": True, "flag_value": "x"}])
def test_a_parameter_the_fast_path_does_not_model_sends_the_command_to_click(attrs, monkeypatch):
    """Repeated, counted or multi-value options, flag values and environment variables read
    differently from one value: the fast path leaves the command to click rather than guess."""
    from cli import declare
    from cli.commands import actions

    declared = actions.click_ref
    extra = declare.Param("option", ("--extra",), dict(attrs))
    monkeypatch.setattr(actions, "click_ref", declare.Declared(declared.function, declared.attrs,
                                                               [*declared.params, extra]))
    assert fast.plan(["click", "3"], {}) is None
    assert declare.Param("option", ("--on/--off",), {}).fast is False
