"""A click group whose bare form lists (bp net, bp cookies)."""

import click


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
