"""Command modules, one per family. What several of them share lives here."""

import click

from cli import client, signals


def call_long(op, args, awaited=None):
    """One long-running broker call for the current command (SIGINT/SIGTERM cancel it).
    `awaited` names what it waits for, for the progress line on a terminal (cli/progress.py)."""
    signals.install()
    settings = click.get_current_context().obj
    if awaited:
        from cli import progress

        progress.expect(awaited, settings.timeout_ms)
    return client.call(settings, op, args)


class ListingGroup(click.Group):
    """A group whose bare form lists (`bp net`, `bp cookies DOMAIN`): arguments that are not a
    subcommand go to the hidden `list` subcommand, whose options are shown as the group's own."""

    def parse_args(self, ctx, args):
        if ctx.resilient_parsing:  # shell completion: offer the subcommands, not the hidden listing
            return super().parse_args(ctx, args)
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["list", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx):
        return [name for name in self.commands if name != "list"]

    def format_options(self, ctx, formatter):
        lister = self.commands["list"]
        lister.format_options(click.Context(lister, info_name=ctx.info_name, parent=ctx), formatter)
        self.format_commands(ctx, formatter)
