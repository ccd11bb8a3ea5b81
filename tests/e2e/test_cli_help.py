"""Runtime discovery: `bp --help`, every command's --help and `bp --version`, as the contract
and the skill promise them; no removed adapter command exists."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import bp

GLOBAL_OPTIONS = ("--client-key", "--request-id", "--timeout", "--json", "--human")


def _commands(home):
    out = bp(home, "--help").stdout
    section = out.split("\nCommands:\n", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and not line.startswith("   ")]


def test_top_level_help_lists_global_options_status_and_doctor(home):
    result = bp(home, "--help")
    assert result.rc == 0
    for option in GLOBAL_OPTIONS + ("--version",):
        assert option in result.stdout
    assert {"status", "doctor", "connect", "disconnect"} <= set(_commands(home))


def test_every_command_help_shows_the_global_options(home):
    commands = _commands(home)
    assert len(commands) >= 20
    with ThreadPoolExecutor(4) as pool:
        results = dict(zip(commands, pool.map(lambda c: bp(home, c, "--help"), commands)))
    for command, result in results.items():
        assert result.rc == 0, (command, result)
        assert result.stdout.startswith(f"Usage: bp {command} "), command
        epilog = result.stdout.split("Global options", 1)
        assert len(epilog) == 2, f"bp {command} --help does not list the global options"
        for option in GLOBAL_OPTIONS:
            assert option in epilog[1], (command, option)


@pytest.mark.parametrize("args", [["bridge"], ["bridge", "--stdio"], ["tool", "list"], ["broker", "serve"],
                                  ["broker"], ["artifact", "export"], ["mcp"]])
def test_no_removed_adapter_command_exists(home, args):
    result = bp(home, *args)
    assert result.rc == 1
    assert result.code == "invalid_argument"
    assert result.json["context"]["parserCode"] == "unknown_command"


def test_version_is_plain_when_piped_and_carries_the_protocol_in_json(home):
    import bp as package
    from bp import protocol

    assert bp(home, "--version").stdout == f"{package.__version__}\n"
    assert bp(home, "-V").stdout == f"{package.__version__}\n"
    for args in (["--json", "--version"], ["--version", "--json"]):
        result = bp(home, *args)
        assert result.rc == 0
        assert json.loads(result.stdout) == {"ok": True, "version": package.__version__,
                                             "protocol": protocol.PROTOCOL_RANGE}
    human = bp(home, "--human", "--version")
    assert human.stdout.startswith(f"bp {package.__version__} (protocol 1.")
