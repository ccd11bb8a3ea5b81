"""The `bp` of the self-contained archive (PyInstaller one-folder): the CLI, and on the private
command lines the broker, the janitor and the launched browser's pipe holder.

In a normal install the CLI starts the broker as `sys.executable -m broker` and the broker starts
the janitor as `sys.executable -m janitor ...`. Frozen, `sys.executable` is this very `bp`, so the
same command lines reach it here and are dispatched to the same `__main__` modules: the spawn
code stays one code path, and every process keeps the command line that `bp doctor`, `bp status`
and the tests recognise the roles by (`... -m broker`, `... -m janitor`). `-m` is no `bp` option,
so an Agent's own command line never takes these branches.
"""

import os
import runpy
import sys

PRIVATE = ("broker", "janitor", "janitor.pipe_holder")  # the pipe holder: `bp launch`


def restore_environment(environ=os.environ):
    """Give every child the environment this `bp` was started with.

    PyInstaller's bootloader puts `_internal/` first on LD_LIBRARY_PATH and re-executes itself,
    and marks the environment (`_PYI_*`) so that a child running the same executable inherits
    its set-up. The dynamic loader of this process read LD_LIBRARY_PATH when it started, so
    taking it out of os.environ changes nothing here; it keeps the browser that `bp launch`
    starts (and any other program) off the archive's copies of libstdc++, libssl, zlib, ….
    Without the markers, the broker and the janitor (this executable again) start as a fresh
    `bp` does: the bootloader sets up its library path for them itself.
    """
    original = environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        environ["LD_LIBRARY_PATH"] = original
    else:
        environ.pop("LD_LIBRARY_PATH", None)
    for name in [n for n in environ if n.startswith("_PYI_")]:
        del environ[name]


def main():
    if getattr(sys, "frozen", False):
        restore_environment()
    if len(sys.argv) >= 3 and sys.argv[1] == "-m" and sys.argv[2] in PRIVATE:
        module = sys.argv[2]
        sys.argv = [sys.argv[0]] + sys.argv[3:]  # what `python -m janitor ARGS` leaves in sys.argv
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    from cli.fast import main as cli_main

    sys.exit(cli_main())


if __name__ == "__main__":
    main()
