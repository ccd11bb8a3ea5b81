"""The `bp` of the self-contained archive (PyInstaller one-folder): the CLI, and on the private
command lines the broker and the janitor.

In a normal install the CLI starts the broker as `sys.executable -m broker` and the broker starts
the janitor as `sys.executable -m janitor ...`. Frozen, `sys.executable` is this very `bp`, so the
same command lines reach it here and are dispatched to the same `__main__` modules: the spawn
code stays one code path, and every process keeps the command line that `bp doctor`, `bp status`
and the tests recognise the roles by (`... -m broker`, `... -m janitor`). `-m` is no `bp` option,
so an Agent's own command line never takes these branches.
"""

import runpy
import sys

PRIVATE = ("broker", "janitor")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "-m" and sys.argv[2] in PRIVATE:
        module = sys.argv[2]
        sys.argv = [sys.argv[0]] + sys.argv[3:]  # what `python -m janitor ARGS` leaves in sys.argv
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    from cli.fast import main as cli_main

    sys.exit(cli_main())


if __name__ == "__main__":
    main()
