"""Commands declared once, read by both parsers: click's decorators, recorded instead of applied.

A command module that holds a hot command (one the fast path serves, cli/fast.py) declares its
commands with `command`, `argument` and `option` from here: the same names and arguments as
click's, but nothing imports click. cli/main.py turns a declaration into the click command when
it runs one (`Declared.click_command`); the fast path reads the very same parameters
(`Declared.params`) and runs the command's request builder beside it. So there is one
declaration per command, and no generated copy to keep in step.

Types are click's, by name (`IntRange`, `FloatRange`, `Choice`; a plain string when none is
given): each knows its click type and how the fast path reads a value (`take`, ASCII only, None
for a value it leaves to click). A callback is click's `(ctx, param, value)`; it refuses a value
by raising cli.build.Refused, which click reports as a bad parameter and the fast path leaves to
click. Stdlib only: this is on the fast path.
"""

from cli.build import Refused


def _digits(text, most):
    """1 to `most` ASCII digits: '١', '１', '+5', ' 5', '1e3' are click's to judge. (No regular
    expression: compiling one costs the fast path more than this check.)"""
    return 0 < len(text) <= most and text.isascii() and text.isdigit()


class Text:
    """A parameter without a type: any string."""

    def click(self, click):
        return click.STRING

    def take(self, text):
        return text


class IntRange:
    def __init__(self, min=None, max=None):
        self.min, self.max = min, max

    def click(self, click):
        return click.IntRange(self.min, self.max)

    def take(self, text):
        if not _digits(text, 7):
            return None
        value = int(text)
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            return None
        return value


class FloatRange:
    def __init__(self, min=None, max=None, min_open=False, max_open=False):
        self.min, self.max, self.min_open, self.max_open = min, max, min_open, max_open

    def click(self, click):
        return click.FloatRange(self.min, self.max, min_open=self.min_open, max_open=self.max_open)

    def take(self, text):
        whole, point, fraction = text.partition(".")
        if not _digits(whole, 7) or (point and not _digits(fraction, 6)):
            return None
        value = float(text)
        if self.min is not None and (value <= self.min if self.min_open else value < self.min):
            return None
        if self.max is not None and (value >= self.max if self.max_open else value > self.max):
            return None
        return value


class Choice:
    def __init__(self, choices):
        self.choices = tuple(choices)

    def click(self, click):
        return click.Choice(self.choices)

    def take(self, text):
        return text if text in self.choices else None


_NOT_FAST = {"multiple", "nargs", "count", "flag_value", "envvar", "is_eager", "expose_value", "secondary"}


class Param:
    """One `argument` or `option` as declared: click's `decls` and `attrs`, and what the fast path
    reads of them (click's own rules for the name, the default and whether it is required)."""

    def __init__(self, kind, decls, attrs):
        self.kind, self.decls, self.attrs = kind, decls, attrs
        self.type = attrs.get("type") or Text()
        self.callback = attrs.get("callback")
        self.is_flag = bool(attrs.get("is_flag"))
        if kind == "argument":
            self.name = decls[0].replace("-", "_").lower()
            self.spellings = ()
            self.required = attrs.get("required", "default" not in attrs)
        else:
            names = [decl for decl in decls if decl.isidentifier()]
            spellings = [part for decl in decls if not decl.isidentifier() for part in decl.split("/")]
            longest = sorted(spellings, key=lambda s: -len(s) + len(s.lstrip("-")))[0]
            self.name = names[0] if names else longest.lstrip("-").replace("-", "_").lower()
            self.spellings = tuple(spellings)
            self.required = attrs.get("required", False)
        self.default = attrs.get("default", False if self.is_flag else None)
        # What the fast path reads as click does: one value (or an on-flag), no environment.
        # Anything else (a repeated or counted option, nargs, a flag value, an --x/--no-x pair,
        # an environment variable) sends the command's every argv to click.
        self.fast = not (_NOT_FAST & set(attrs)) and not any("/" in decl for decl in decls)

    def click(self, click):
        """This parameter's click decorator."""
        attrs = dict(self.attrs)
        if "type" in attrs:
            attrs["type"] = self.type.click(click)
        if self.callback is not None:
            attrs["callback"] = _reported(self.callback, click)
        return (click.argument if self.kind == "argument" else click.option)(*self.decls, **attrs)


def _reported(callback, click):
    def checked(ctx, param, value):
        try:
            return callback(ctx, param, value)
        except Refused as exc:
            raise click.BadParameter(exc.message) from None

    return checked


class Declared:
    """A command as declared: its function, click's `command` attributes and its parameters in
    declaration order. The click command is made once, when click runs it."""

    def __init__(self, function, attrs, params):
        self.function, self.attrs, self.params = function, attrs, tuple(params)
        self.__doc__ = function.__doc__
        self._click = None

    def click_command(self):
        if self._click is None:
            import click

            function = self.function
            for param in reversed(self.params):
                function = param.click(click)(function)
            self._click = click.command(**self.attrs)(function)
        return self._click


def command(**attrs):
    """click.command(), recorded."""

    def declare(function):
        params = reversed(function.__dict__.pop("__declared_params__", []))  # decorators apply bottom-up
        return Declared(function, attrs, params)

    return declare


def _param(kind, decls, attrs):
    def declare(function):
        function.__dict__.setdefault("__declared_params__", []).append(Param(kind, decls, attrs))
        return function

    return declare


def argument(*decls, **attrs):
    """click.argument(), recorded."""
    return _param("argument", decls, attrs)


def option(*decls, **attrs):
    """click.option(), recorded."""
    return _param("option", decls, attrs)


def command_settings():
    """The running command's client.Settings (the click context's object: only click runs a
    command's body)."""
    import click

    return click.get_current_context().obj
