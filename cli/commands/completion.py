"""bp completion: the shell completion script, from click's own completion machinery.

No broker call. The script calls `bp` back with `_BP_COMPLETE` set; cli/fast.py hands that
to click untouched, and click answers with the commands and options that fit.
"""

import click

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_BP_COMPLETE"


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell):
    """Print the completion script for SHELL (bash, zsh or fish).

    Tab then completes commands and their options. Install it once (bash needs 4.4 or newer):

    \b
      bash:  echo 'eval "$(bp completion bash)"' >> ~/.bashrc
      zsh:   echo 'eval "$(bp completion zsh)"' >> ~/.zshrc
      fish:  bp completion fish > ~/.config/fish/completions/bp.fish

    The script itself is printed, also when piped (with --json: {"ok": true, "shell", "script"}).

    \b
    Example:  bp completion bash
    """
    from click.shell_completion import get_completion_class

    from cli.main import cli
    from cli.output import Mode, finish

    script = get_completion_class(shell)(cli, {}, "bp", COMPLETE_VAR).source()
    if Mode.forced == "json":
        finish({"ok": True, "shell": shell, "script": script})
    click.echo(script, nl=not script.endswith("\n"))
