"""What the commands' request builders share. Click-free: the fast path runs the builders.

Each hot command declares, beside its click declaration, one pure function from its parameter
values to its request's arguments (`click_request` in cli/commands/actions.py, …). The click
command calls it (cli.commands.built), and the fast path (cli/fast.py) calls it too, on the
values it reads from the same declaration (cli/declare.py). So both parsers send the same
request from the same code, and a flag is added in one command, not twice.
"""


class Refused(Exception):
    """A value or combination the command refuses, in click's words: a usage error, or a bad
    value of the parameter `param_hint` names. The click command reports it; the fast path hands
    the argv to click, which does."""

    def __init__(self, message, param_hint=None):
        super().__init__(message)
        self.message, self.param_hint = message, param_hint


MAX_SELECTOR = 4096


def ref_or_selector(value, hint="TARGET"):
    """{"ref": N} for a bare number (a ref of the latest snapshot), else {"selector": CSS}."""
    from bp import protocol

    if value.isascii() and value.isdigit():  # "١" is a CSS selector, not ref 1
        ref = int(value)
        if not 1 <= ref <= protocol.MAX_REF:
            raise Refused(f"a ref is 1-{protocol.MAX_REF}", param_hint=hint)
        return {"ref": ref}
    if not value.strip() or len(value) > MAX_SELECTOR:
        raise Refused(f"a CSS selector of 1-{MAX_SELECTOR} characters", param_hint=hint)
    return {"selector": value}


def given(args, **fields):
    """`args` with each field the person gave: a flag that is on, an option with a value. What is
    left out (off, None, empty, 0) is the broker's default, so it is not sent."""
    args.update((field, value) for field, value in fields.items() if value)
    return args


class Values(dict):
    """A command's parameter values that remember which ones its builder read: a value the
    builder never read is an option the request leaves out (a flag declared on the command but
    not built into its request), which must not pass unnoticed."""

    def __init__(self, values=(), given=None):
        super().__init__(values)
        self.given = frozenset(self if given is None else given)
        self.read = set()

    def __getitem__(self, name):
        self.read.add(name)
        return super().__getitem__(name)

    def unread(self):
        return self.given - self.read
