"""The command reference (docs/commands.md) cannot drift from the CLI: every command of
`bp --help` has a row, every row names a real command, and every option a row shows is in that
command's (or its subcommand's) own --help. Parsed by the installed CLI, like the skill's test."""

import os
import re

from tests.e2e.test_skill import _cli_commands, _flags, _own_options, _parse_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE = os.path.join(ROOT, "docs", "commands.md")


def _forms():
    """Each `bp …` form of the table's first column, as its words (escaped pipes are alternatives)."""
    with open(REFERENCE, encoding="utf-8") as fh:
        text = fh.read()
    forms = []
    for line in text.splitlines():
        if not line.startswith("| `bp"):
            continue
        first = re.split(r"(?<!\\)\|", line)[1]
        for span in re.findall(r"`([^`]+)`", first):
            if span.startswith("bp"):
                forms.append(span.replace("\\|", "|").split())
    assert len(forms) > 50, "the drift test found too few rows in docs/commands.md"
    return forms


def _help_calls(words):
    """The arg lists whose --help covers a form: the command, and each bare subcommand word."""
    command = words[1]
    calls = [[command]]
    if len(words) > 2 and re.fullmatch(r"[a-z]+(\|[a-z]+)*", words[2]):
        calls += [[command, sub] for sub in words[2].split("|")]
    return calls


def test_every_cli_command_has_a_row_and_every_row_a_command():
    commands = _cli_commands()
    shown = {words[1] for words in _forms() if not words[1].startswith("-")}
    assert sorted(set(commands) - shown) == [], "add these commands to docs/commands.md"
    assert sorted(shown - set(commands)) == [], "docs/commands.md shows commands the CLI does not have"


def test_every_option_a_row_shows_is_in_that_commands_help():
    forms = _forms()
    calls = sorted({tuple(call) for words in forms if not words[1].startswith("-") for call in _help_calls(words)})
    results = dict(zip(calls, _parse_all([list(c) for c in calls] + [[]])))
    top = _parse_all([[]])[0]["stdout"]
    problems = []
    for words in forms:
        if words[1].startswith("-"):  # a global option row (`bp --version`)
            missing = _flags(words[1:]) - _flags([top])
        else:
            helps = [results[tuple(c)] for c in _help_calls(words)]
            assert helps[0]["rc"] == 0, (words, helps[0])
            own = _flags([_own_options(h["stdout"]) for h in helps if h["rc"] == 0])
            missing = _flags(words[2:]) - own
        if missing:
            problems.append(f"`{' '.join(words)}` shows {sorted(missing)}, not in its --help")
    assert not problems, "\n".join(problems)
