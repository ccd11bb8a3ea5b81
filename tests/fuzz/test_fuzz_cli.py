"""CLI argument parsing of every command (the real `bp`, no broker running): whatever argv holds
(undecodable bytes, lone surrogates, controls, Unicode digits, huge values, unknown options),
the answer is one JSON envelope on stdout, never a traceback, and exit 1 on failure."""

import json
import os
import subprocess

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.main import COMMANDS, cli
from tests import helpers

# `connect` would start a broker and `launch` a browser: their arguments are fuzzed in-process
# by the broker-side tests; here only commands that cannot start anything.
SIDE_EFFECTS = {"connect", "launch"}


def _command_paths():
    ctx = click.Context(cli)
    paths = []
    for name in sorted(set(COMMANDS) - SIDE_EFFECTS):
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            paths.extend((name, sub) for sub in command.list_commands(ctx))
        paths.append((name,))
    return paths


def _options(path):
    ctx = click.Context(cli)
    command = cli
    for part in path:
        command = command.get_command(ctx, part)
    return sorted(opt for param in command.params for opt in getattr(param, "opts", []) if opt not in ("-h", "--help"))


PATHS = _command_paths()
OPTIONS = {path: _options(path) for path in PATHS}

ARG_BYTES = st.one_of(
    st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b),
    st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogateescape")).filter(lambda b: b"\0" not in b),
    st.sampled_from(["\u0661", "\uff11", "1e9", "-1", "99999999999999999999", "*" * 60 + "x", "\\", "-", "--",
                     "tab-000000000000", "javascript:x", "a=b;c=d", "X-A: b\r\nX-B: c", "[[["]).map(str.encode),
    st.integers(min_value=1, max_value=100_000).map(lambda n: b"x" * n),  # one argv string is < 128 KiB
)


@pytest.fixture(scope="module")
def empty_home():
    with helpers.scratch_dir("bpf-") as path:
        yield path


def _is_help(argv):
    return any(a in (b"-h", b"--help") for a in argv)


@settings(max_examples=30)
@given(st.sampled_from(PATHS).flatmap(lambda path: st.tuples(
    st.just(path), st.lists(st.one_of(ARG_BYTES, st.sampled_from(OPTIONS[path] or ["--x"]).map(str.encode)),
                            max_size=4))))
def test_every_command_answers_one_envelope(empty_home, case):
    path, args = case
    argv = [helpers.BP.encode(), *(p.encode() for p in path), *args]
    if _is_help(argv):
        return
    env = {k: v for k, v in helpers.bp_env(empty_home).items()}
    proc = subprocess.run(argv, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert b"Traceback" not in proc.stderr and b"Traceback" not in proc.stdout, proc
    lines = proc.stdout.decode("utf-8").splitlines()  # strict UTF-8
    assert len(lines) == 1, proc
    envelope = json.loads(lines[0])
    if envelope["ok"]:
        assert proc.returncode == 0, proc
    else:
        assert proc.returncode == 1, proc
        # `bp download NAME` answers a NAME that is neither an index nor a download id as the
        # contract's unknown download (artifact_not_found, field selector) without asking the
        # service: no download of this Agent's can have that name.
        cli_side = envelope["code"] == "artifact_not_found" and path == ("download",) \
            and envelope["context"] == {"field": "selector"}
        assert cli_side or envelope["code"] in ("invalid_argument", "browser_disconnected", "not_initialized"), envelope
    assert not os.path.exists(os.path.join(empty_home, "broker-locator.json"))  # nothing was started
