"""The terminal: shell completion from click's own machinery, and the progress line a long
command draws on a terminal's stderr (and never on pipes)."""

import json
import os
import subprocess

import pytest

from tests import helpers
from tests.helpers import bp, ok


def _complete(home, shell, words, cword):
    """What the completion script's call back into `bp` answers (click's completion protocol)."""
    env = helpers.bp_env(home, COMP_WORDS=words, COMP_CWORD=cword, _BP_COMPLETE=f"{shell}_complete")
    proc = subprocess.run([helpers.BP], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc
    return proc.stdout


def _bash_completes(home, *words):
    """COMPREPLY of the real bash after sourcing `bp completion bash`, for the last word."""
    env = helpers.bp_env(home, PATH=helpers.BIN_DIR + os.pathsep + os.environ.get("PATH", ""))
    script = ('eval "$(bp completion bash)" && COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) '
              '&& _bp_completion bp && printf "%s\\n" "${COMPREPLY[@]}"')
    proc = subprocess.run(["bash", "-c", script, "bash", *words], env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc
    return proc.stdout.split()


def test_bash_completion_completes_a_command_and_an_option(home):
    assert _bash_completes(home, "bp", "snaps") == ["snapshot"]
    assert _bash_completes(home, "bp", "wait", "--ti") == ["--timeout"]
    assert _bash_completes(home, "bp", "--client") == ["--client-key"]
    assert _bash_completes(home, "bp", "completion", "") == ["bash", "zsh", "fish"]
    assert set(_bash_completes(home, "bp", "net", "")) >= {"show", "block", "mock", "remove"}
    assert "dialogs" in _bash_completes(home, "bp", "")


@pytest.mark.parametrize("shell,marker", [("bash", "complete -o nosort -F _bp_completion bp"),
                                          ("zsh", "#compdef bp"), ("fish", "complete --no-files --command bp")])
def test_completion_prints_the_script_for_each_shell_even_when_piped(home, shell, marker):
    result = bp(home, "completion", shell)
    assert result.rc == 0, result
    assert marker in result.stdout and f"_BP_COMPLETE={shell}_source" not in result.stdout
    assert f"_BP_COMPLETE={shell}_complete" in result.stdout  # the script calls bp back this way
    assert result.stderr == ""
    forced = bp(home, "--json", "completion", shell).json
    assert forced["ok"] is True and forced["shell"] == shell
    assert forced["script"].rstrip("\n") == result.stdout.rstrip("\n")


def test_zsh_and_fish_get_commands_and_options_with_their_help(home):
    zsh = _complete(home, "zsh", "bp wai", "1").splitlines()
    assert zsh[:2] == ["plain", "wait"] and zsh[2].startswith("Wait until one condition holds")
    fish = _complete(home, "fish", "bp wait --ti", "--ti").splitlines()
    assert len(fish) == 1 and fish[0].startswith("plain,--timeout\tHow long to wait")


def test_an_unknown_shell_is_invalid_argument(home):
    result = bp(home, "completion", "tcsh")
    assert result.code == "invalid_argument" and result.json["context"]["field"] == "shell", result


def _with_stderr_on_a_terminal(home, env, *args, timeout=60):
    """Run bp with stdout on a pipe and stderr on a pseudo-terminal: (rc, stdout, terminal text)."""
    import pty

    main, secondary = pty.openpty()
    try:
        proc = subprocess.Popen([helpers.BP, *args], env=env, stdout=subprocess.PIPE, stderr=secondary,
                                stdin=subprocess.DEVNULL)
    finally:
        os.close(secondary)
    out, seen = b"", b""
    import select

    while True:
        ready, _, _ = select.select([main], [], [], timeout)
        if not ready:
            proc.kill()
            raise AssertionError(f"bp {args} did not finish: {seen!r}")
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read()
    proc.wait(timeout)
    os.close(main)
    return proc.returncode, json.loads(out), seen.decode("utf-8", "replace")


def test_wait_shows_what_it_awaits_and_for_how_long_on_a_terminal_and_nothing_on_pipes(home, connected, pages):
    ok(home, connected, "open", pages.page("<p>nothing happens here</p>"))
    rc, reply, terminal = _with_stderr_on_a_terminal(home, connected, "wait", "--text", "never\x1b[31m", "--timeout",
                                                     "2500")
    assert rc == 1 and reply["code"] == "wait_timeout", reply
    assert "\r… waiting for --text 'never\\x1b[31m' (" in terminal, terminal
    assert " s of 2.5 s)" in terminal and "\x1b[31m" not in terminal
    assert terminal.endswith("\r\x1b[K"), terminal  # erased before the answer
    piped = bp(home, "wait", "--text", "never", "--timeout", "2500", env=connected)
    assert piped.code == "wait_timeout" and piped.stderr == "", piped


def test_connect_says_it_waits_for_the_allow_dialog_on_a_terminal(home, pending_browser):
    env = helpers.bp_env(home, BROWSER_PILOT_BROWSER_DATA_DIRS=pending_browser.root,
                         BROWSER_PILOT_HANDSHAKE_TIMEOUT_MS=20000)
    rc, reply, terminal = _with_stderr_on_a_terminal(home, env, "--timeout", "3000", "connect")
    assert reply["code"] == "browser_not_authorized", reply
    assert "\r… waiting for the browser to allow remote debugging (click Allow if asked) (" in terminal, terminal
    piped = bp(home, "--timeout", "3000", "connect", env=env)
    assert piped.code == "browser_not_authorized" and piped.stderr == "", piped

