"""Command modules, one per family. What several of them share lives here."""

from cli import client, signals
from cli.output import finish


def built(builder, values):
    """The request the command's pure builder makes of its values (cli/build.py); what it refuses
    is reported as click would. Every parameter must be read by the builder: one it leaves out is
    a flag declared but never sent (tests/unit/test_fast_path.py runs every option through here)."""
    from cli.build import Refused, Values

    values = Values(values)
    try:
        args = builder(values)
    except Refused as exc:
        import click

        if exc.param_hint:
            raise click.BadParameter(exc.message, param_hint=exc.param_hint) from None
        raise click.UsageError(exc.message) from None
    unread = values.unread()
    assert not unread, f"{builder.__name__} does not read {sorted(unread)}: add them to the request or drop them"
    return args


def regular_file(path, field, what):
    """lstat of a file the person names for Browser Pilot to read: it exists, is a regular file
    and not a symbolic link. `what` says which file in the errors ("The file to upload"), which
    never name the path."""
    import os
    import stat

    from bp.errors import invalid_argument

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise invalid_argument(field, f"{what} does not exist.", reason="not_found") from None
    except OSError:
        raise invalid_argument(field, f"{what} cannot be read.", reason="not_readable") from None
    if stat.S_ISLNK(info.st_mode):
        raise invalid_argument(field, f"{what} is a symbolic link; give the file itself.", reason="symlink")
    if not stat.S_ISREG(info.st_mode):
        raise invalid_argument(field, f"{what} is not a regular file.", reason="not_regular_file")
    return info


def send(op, args, render=None, awaited=None):
    """The current command's one broker call, its answer printed (with `render` for a person at
    a terminal). SIGINT/SIGTERM cancel it; `awaited` names what it waits for, for the progress
    line on a terminal (cli/progress.py)."""
    from cli import declare

    signals.install()
    settings = declare.command_settings()
    if awaited:
        from cli import progress

        progress.expect(awaited, settings.timeout_ms)
    finish(client.call(settings, op, args), render)
