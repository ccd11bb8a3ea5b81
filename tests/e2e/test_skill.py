"""The skill cannot drift from the CLI: every `bp …` it shows parses with the real `bp`, every
flag it uses is in that command's own --help, every command is in the reference, every error
code has recovery guidance, and the compatibility file matches the package."""

import glob
import json
import os
import re
import shlex
import subprocess

import pytest

from tests import helpers

SKILL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "skill")
GLOBAL_WITH_VALUE = {"--client-key", "--request-id", "--timeout"}
GLOBAL_FLAGS = {"--json", "--human", "-V", "--version", "-h", "--help"}
OPERATORS = {"&&", "||", "|", ";"}


def _markdown_files():
    files = sorted(glob.glob(os.path.join(SKILL, "**", "*.md"), recursive=True))
    assert files, "the skill has no markdown files"
    return files


def _visible(text):
    """The markdown without HTML comments (the pending-commands list lives in one)."""
    return re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)


def _snippets(text):
    """Shell lines of fenced code blocks, and inline code spans, that run `bp`."""
    text = _visible(text)
    lines = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE):
        lines += [line.strip() for line in block.splitlines()]
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    lines += re.findall(r"`([^`\n]+)`", prose)
    return [line for line in lines if re.search(r"(^|[|;&]\s*)bp\s", line) or line == "bp"]


def _bp_calls(line):
    """Each `bp` invocation of a shell line, as its argument list (shell operators split)."""
    calls, current = [], None
    for token in shlex.split(line.lstrip("$ ")):
        if token in OPERATORS:
            current = None
            continue
        if current is None:
            if token == "bp":
                current = []
                calls.append(current)
            continue
        current.append(token)
    return calls


def _split(args):
    """(global options, command, the command's arguments)."""
    i, globals_ = 0, []
    while i < len(args) and args[i].startswith("-"):
        globals_.append(args[i])
        i += 2 if args[i] in GLOBAL_WITH_VALUE else 1
    return globals_, (args[i] if i < len(args) else None), args[i + 1:]


def _flags(tokens):
    found = set()
    for token in tokens:
        found.update(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])", token))
    return found


def _own_options(help_text):
    """The command's own Options section (not the epilog that lists the global options)."""
    section = help_text.split("\nOptions:\n", 1)[1] if "\nOptions:\n" in help_text else ""
    return section.split("Global options", 1)[0]


def _all_calls():
    calls = []
    for path in _markdown_files():
        with open(path, encoding="utf-8") as fh:
            for line in _snippets(fh.read()):
                for args in _bp_calls(line):
                    calls.append((os.path.relpath(path, SKILL), line, args))
    return calls


# Parses every argument list with the installed CLI's own click application, in one child
# interpreter (-I: the installed package, as the `bp` executable loads it), appending --help:
# an unknown command or a misplaced/unknown option fails the parse; a known one prints help.
_BATCH = r"""
import contextlib, io, json, sys
import click
from cli.main import cli
out = []
for args in json.load(sys.stdin):
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            code = cli.main(args=args + ["--help"], prog_name="bp", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:
        code, buf = 1, io.StringIO(exc.format_message())
    out.append({"rc": code or 0, "stdout": buf.getvalue()})
print(json.dumps(out))
"""


def _parse_all(arg_lists):
    proc = subprocess.run([os.path.join(helpers.BIN_DIR, "python"), "-I", "-c", _BATCH], input=json.dumps(arg_lists),
                          capture_output=True, text=True, env=helpers.bp_env("/nonexistent-bp-home"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _help(args):
    """The real executable, for the checks that must not trust the batch."""
    return subprocess.run([helpers.BP, *args, "--help"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env=helpers.bp_env("/nonexistent-bp-home"), timeout=60)


def test_every_bp_line_of_the_skill_parses_and_uses_only_existing_flags():
    calls = _all_calls()
    assert len(calls) > 60, "the drift test found too few bp calls in the skill"
    unique = sorted({tuple(args) for _, _, args in calls})
    commands = sorted({_split(list(args))[1] for args in unique} - {None})
    results = _parse_all([list(a) for a in unique] + [[c] for c in commands] + [[]])
    parsed = dict(zip(unique, results[:len(unique)]))
    helps = dict(zip(commands, results[len(unique):-1]))
    top = results[-1]["stdout"]
    problems = []
    for where, line, args in calls:
        result = parsed[tuple(args)]
        if result["rc"] != 0:
            problems.append(f"{where}: `{line}` does not parse: {result['stdout'].strip()[:300]}")
            continue
        globals_, command, rest = _split(args)
        for flag in _flags(globals_) - _flags([top]):
            problems.append(f"{where}: `{line}` uses global option {flag} that 'bp --help' does not list")
        if command is None:
            continue
        if helps[command]["rc"] != 0:
            problems.append(f"{where}: `{line}`: 'bp {command} --help' fails")
            continue
        # The call's own help covers subcommands (`bp net show ID --help` is the help of `net show`).
        own = _flags([_own_options(helps[command]["stdout"]), _own_options(result["stdout"])])
        for flag in sorted(_flags(rest) - own - {"-"}):
            problems.append(f"{where}: `{line}` uses {flag}, which 'bp {command} --help' does not list")
    assert not problems, "\n".join(problems)


def _cli_commands():
    out = subprocess.run([helpers.BP, "--help"], capture_output=True, text=True, env=helpers.bp_env("/nonexistent-bp-home"),
                         timeout=60).stdout
    section = out.split("\nCommands:\n", 1)[1]
    return sorted(line.split()[0] for line in section.splitlines() if line.startswith("  ") and not line.startswith("   "))


def test_the_command_reference_covers_every_command_of_the_cli():
    with open(os.path.join(SKILL, "references", "commands.md"), encoding="utf-8") as fh:
        text = fh.read()
    shown = {_split(args)[1] for line in _snippets(text) for args in _bp_calls(line)}
    missing = [c for c in _cli_commands() if c not in shown]
    assert not missing, f"add these commands to skill/references/commands.md (and SKILL.md if useful): {missing}"


def test_recovery_guidance_names_every_error_code():
    from bp.errors import ERROR_CODES

    with open(os.path.join(SKILL, "references", "recovery.md"), encoding="utf-8") as fh:
        text = fh.read()
    missing = [code for code in ERROR_CODES if f"| `{code}` |" not in text]
    assert not missing, f"skill/references/recovery.md has no row for {missing}"


def test_skill_front_matter_names_the_skill_and_its_trigger():
    with open(os.path.join(SKILL, "SKILL.md"), encoding="utf-8") as fh:
        text = fh.read()
    match = re.match(r"---\n(.*?)\n---\n", text, flags=re.DOTALL)
    assert match, "SKILL.md starts with YAML front matter"
    front = match.group(1)
    assert re.search(r"^name: browser-pilot$", front, flags=re.MULTILINE)
    assert re.search(r"^description: ", front, flags=re.MULTILINE)
    for link in re.findall(r"\]\((references/[^)#]+)(?:#[^)]*)?\)", text):
        assert os.path.isfile(os.path.join(SKILL, link)), link


def test_skill_warns_about_the_allow_dialog_before_connecting():
    with open(os.path.join(SKILL, "SKILL.md"), encoding="utf-8") as fh:
        text = _visible(fh.read())
    warning = text.index("Allow remote debugging")
    first_connect_block = re.search(r"^```[^\n]*\n(?:(?!^```).)*?^bp connect", text, flags=re.DOTALL | re.MULTILINE)
    assert warning < first_connect_block.end()
    assert text.index("**Before** running `bp connect`") < warning


def test_compatibility_declares_the_package_version_and_protocol():
    import bp
    from bp import protocol

    with open(os.path.join(SKILL, "compatibility.json"), encoding="utf-8") as fh:
        compat = json.load(fh)
    assert compat["skillVersion"] == bp.__version__
    cli = compat["browserPilotCli"]
    assert cli["testedVersion"] == bp.__version__
    assert cli["supportedVersionRange"] == ">=0.5.0 <1.0.0"
    assert compat["protocol"] == protocol.PROTOCOL_RANGE


@pytest.mark.parametrize("line,expected", [
    ("bp snapshot", [["snapshot"]]),
    ("printf '%s' \"$X\" | bp type 4 -", [["type", "4", "-"]]),
    ("bp launch --headless && bp connect --browser launched", [["launch", "--headless"], ["connect", "--browser", "launched"]]),
    ("bp scroll [up|down] [--amount N]", [["scroll", "[up|down]", "[--amount", "N]"]]),
])
def test_the_drift_parser_finds_each_bp_call(line, expected):
    assert _bp_calls(line) == expected


@pytest.mark.parametrize("args", [["snapshot", "--no-such-flag"], ["no-such-command"], ["status", "--json"],
                                  ["snapshot", "--limit", "5"], ["tab", "release", "2"], ["--timeout", "5000", "tabs"]])
def test_the_batch_parse_agrees_with_the_real_executable(args):
    (batch,) = _parse_all([args])
    assert (batch["rc"] == 0) == (_help(args).returncode == 0)


def test_the_drift_check_rejects_a_flag_that_does_not_exist():
    assert _parse_all([["snapshot", "--no-such-flag"]])[0]["rc"] != 0
    own = _flags([_own_options(_help(["snapshot"]).stdout)])
    assert "--limit" in own and "--json" not in own  # a global option after the command is not the command's


# --- names the skill shows in code must exist in the product --------------------------------

ROOT = os.path.dirname(SKILL)
NOT_PRODUCT_NAMES = {"browser_pilot"}  # the wheel's file name (embedding.md), not a value the CLI prints


def _product_literals():
    """Every quoted string and object key of the product's sources (and the skill's compatibility file)."""
    paths = [p for d in ("bp", "cli", "broker", "janitor") for p in glob.glob(os.path.join(ROOT, d, "**", "*.*"),
                                                                               recursive=True)
             if p.endswith((".py", ".js"))] + [os.path.join(SKILL, "compatibility.json")]
    found = set()
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        found.update(re.findall(r"""["']([A-Za-z_][A-Za-z0-9_.:-]*)["']""", source))
        # Reply fields written as JS object keys ({sameContextAs: …}) or keyword arguments (fileCount=…)
        found.update(re.findall(r"[{,(]\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:=][^=]", source))
    return found


def _prose_spans(text):
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", _visible(text), flags=re.DOTALL | re.MULTILINE)
    return re.findall(r"`([^`\n]+)`", prose)


def _names(span):
    """The identifiers of a code span that must be the product's own: snake_case codes, reasons
    and values, camelCase fields, BROWSER_PILOT_ variables, and each part of a dotted field
    (`context.commandId`)."""
    if re.search(r"(^|[|;&]\s*)bp(\s|$)", span) or "/" in span or "<" in span:
        return set()
    names = set()
    for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", span):
        if re.search(r"\.(json|md|html|png|pdf|txt|py)$", token):
            continue
        if "." in token:
            names.update(token.split("."))
        elif re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+|[a-z][a-z0-9]*([A-Z][a-z0-9]*)+|BROWSER_PILOT_[A-Z0-9_]+", token):
            names.add(token)
    return names - NOT_PRODUCT_NAMES


def test_every_code_reason_field_and_variable_the_skill_names_exists_in_the_product():
    literals = _product_literals()
    problems = []
    for path in _markdown_files():
        with open(path, encoding="utf-8") as fh:
            for span in _prose_spans(fh.read()):
                for name in sorted(_names(span) - literals):
                    problems.append(f"{os.path.relpath(path, SKILL)}: `{span}` names {name!r}, which no source file has")
    assert not problems, "\n".join(problems)


def test_the_name_check_rejects_an_invented_code():
    literals = _product_literals()
    assert {"target_crashed", "no_observable_effect", "commandId", "BROWSER_PILOT_CLIENT_KEY"} <= literals
    assert _names("context.commandIdentity") - literals == {"commandIdentity"}
    assert _names("tab_frozen") - literals == {"tab_frozen"}
    assert _names("bp open <url>") == set()


def _first_column_codes(path):
    with open(path, encoding="utf-8") as fh:
        return re.findall(r"^\| `([a-z_]+)` \|", _visible(fh.read()), flags=re.MULTILINE)


def test_every_code_in_a_recovery_table_is_an_error_code():
    from bp.errors import ERROR_CODES

    for page in ("SKILL.md", os.path.join("references", "recovery.md")):
        codes = _first_column_codes(os.path.join(SKILL, page))
        assert codes, page
        assert [c for c in codes if c not in ERROR_CODES] == [], page


def test_the_evidence_page_names_exactly_the_statuses_the_broker_gives():
    sources = ""
    for path in glob.glob(os.path.join(ROOT, "broker", "**", "*.*"), recursive=True):
        if path.endswith((".py", ".js")):
            with open(path, encoding="utf-8") as fh:
                sources += fh.read()
    given = set(re.findall(r"""status["'\]]*\s*[:=,(]?\s*\(?["'](verified|mismatch|unavailable)["']""", sources))
    given |= set(re.findall(r"""evidence\(["'](verified|mismatch|unavailable)["']""", sources))
    with open(os.path.join(SKILL, "references", "evidence.md"), encoding="utf-8") as fh:
        section = fh.read().split("## `evidence.status`", 1)[1].split("\n## ", 1)[0]
    statuses = re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert given == {"verified", "mismatch", "unavailable"}
    assert sorted(statuses) == sorted(given)


def test_flags_shown_with_a_command_in_prose_exist():
    """`screenshot --annotate`, `wait --timeout` … in running text: the flag is that command's."""
    commands = set(_cli_commands())
    shown = []
    for path in _markdown_files():
        with open(path, encoding="utf-8") as fh:
            for span in _prose_spans(fh.read()):
                words = span.split()
                if len(words) > 1 and words[0] in commands and words[1].startswith("-"):
                    shown.append((os.path.relpath(path, SKILL), span, words[0]))
    assert any(command == "screenshot" for _, _, command in shown)
    helps = dict(zip(sorted({c for _, _, c in shown}), _parse_all([[c] for c in sorted({c for _, _, c in shown})])))
    problems = [f"{where}: `{span}`: {flag} is not in 'bp {command} --help'"
                for where, span, command in shown
                for flag in sorted(_flags([span]) - _flags([_own_options(helps[command]["stdout"])]))]
    assert not problems, "\n".join(problems)
