"""bp emulate: viewport, device, user agent, geolocation, time zone, locale, color scheme and
offline on the selected tab, when it is one of Browser Pilot's own.

Broker side: broker/commands/emulate.py and broker/emulate/emulation.py (same operation name, from bp.protocol).
"""

import click

from bp import protocol
from cli.commands import send
from cli.output import escape

DEVICE_NAMES = ("iphone-se", "iphone-14", "iphone-15-pro-max", "pixel-7", "galaxy-s23", "ipad-mini", "ipad-air",
                "ipad-pro-12.9", "galaxy-tab-s9")  # broker/emulate/emulation.py DEVICES holds their metrics


def _pair(kind, cast, separator, hint):
    def parse(ctx, param, value):
        if value is None:
            return None
        try:
            first, second = (cast(v.strip()) for v in value.lower().split(separator))
        except ValueError:
            raise click.BadParameter(f"must be {hint}") from None
        return first, second

    return parse


def _render(r):
    shown = r.get("emulation") or {}
    if not shown:
        return "no emulation"
    return "emulating " + ", ".join(f"{k}={escape(v)}" for k, v in shown.items())


@click.command()
@click.option("--viewport", callback=_pair("viewport", int, "x", "WIDTHxHEIGHT, e.g. 390x844"), metavar="WxH",
              help="Viewport size in CSS pixels.")
@click.option("--device", type=click.Choice(DEVICE_NAMES, case_sensitive=False), metavar="NAME",
              help=f"A phone or tablet: its viewport, scale, touch and user agent ({', '.join(DEVICE_NAMES)}).")
@click.option("--scale", type=click.FloatRange(0.1, 10), metavar="N", help="Device scale factor (devicePixelRatio).")
@click.option("--mobile", is_flag=True, default=None, help="Mobile viewport and touch.")
@click.option("--user-agent", "user_agent", metavar="UA", help="The user agent the page and its requests see.")
@click.option("--geolocation", callback=_pair("geolocation", float, ",", "LAT,LON, e.g. 48.85,2.35"),
              metavar="LAT,LON", help="The position navigator.geolocation reports (the page still needs permission).")
@click.option("--timezone", metavar="TZ", help="An IANA time zone, e.g. Asia/Tokyo.")
@click.option("--locale", metavar="L", help="A locale, e.g. de-DE (Intl and Accept-Language).")
@click.option("--color-scheme", "color_scheme", type=click.Choice(("light", "dark")),
              help="prefers-color-scheme.")
@click.option("--offline", is_flag=True, default=None, help="No network for the tab.")
@click.option("--reset", is_flag=True, help="Clear every emulation of the tab.")
def emulate(viewport, device, scale, mobile, user_agent, geolocation, timezone, locale, color_scheme, offline, reset):
    """Make the selected tab look like another device or place. Only on Browser Pilot's own tabs
    (opened with 'bp open --new' and their popups): on a user's tab it is refused with
    target_not_owned (reason user_tab), since it would change what the person sees.

    Settings add up (each call changes what it names); --device sets viewport, scale, touch and
    user agent at once. 'bp tabs' shows a tab's emulation; --reset, 'bp tab release',
    'bp disconnect' and the end of the lease clear it.

    \b
    Example:  bp emulate --device iphone-14
    Example:  bp emulate --viewport 1280x720 --timezone Europe/Paris --color-scheme dark
    Example:  bp emulate --reset
    """
    args = {}
    if viewport is not None:
        args["width"], args["height"] = viewport
    if geolocation is not None:
        args["latitude"], args["longitude"] = geolocation
    for name, value in (("device", device), ("scale", scale), ("mobile", mobile), ("userAgent", user_agent),
                        ("timezone", timezone), ("locale", locale), ("colorScheme", color_scheme),
                        ("offline", offline), ("reset", reset or None)):
        if value is not None:
            args[name] = value.lower() if name == "device" else value
    send(protocol.OP_EMULATE, args, _render)
