"""Emulation on Browser Pilot's own tabs (`bp emulate`): viewport, device, user agent,
geolocation, time zone, locale, color scheme, offline.

Only on a managed tab or a popup of one: on a user's own tab it would change what the person
sees, so it is refused (`target_not_owned`, reason `user_tab`). Overrides live in the tab's CDP
session, so they end with it; the broker also keeps what it set per tab (shown in `bp tabs`)
and clears it on `bp emulate --reset`, `bp tab release`, `bp disconnect` and the lease's end. A
popup of an emulated tab gets the same settings when its session is attached (its first
command). Settings add up: each `bp emulate` changes only what it names.
"""

import logging
import threading

from bp.errors import BPError, invalid_argument
from broker.browser.connection import CDPError

log = logging.getLogger("broker.emulation")

_IPHONE_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
              "Version/17.0 Mobile/15E148 Safari/604.1")
_IPAD_UA = ("Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.0 Mobile/15E148 Safari/604.1")
_ANDROID_UA = ("Mozilla/5.0 (Linux; Android 14; {model}) AppleWebKit/537.36 (KHTML, like Gecko) "
               "Chrome/120.0.0.0 Mobile Safari/537.36")
_ANDROID_TABLET_UA = ("Mozilla/5.0 (Linux; Android 14; {model}) AppleWebKit/537.36 (KHTML, like Gecko) "
                      "Chrome/120.0.0.0 Safari/537.36")

# name -> (width, height, device scale factor, mobile, user agent): CSS pixels in portrait.
DEVICES = {
    "iphone-se": (375, 667, 2.0, True, _IPHONE_UA),
    "iphone-14": (390, 844, 3.0, True, _IPHONE_UA),
    "iphone-15-pro-max": (430, 932, 3.0, True, _IPHONE_UA),
    "pixel-7": (412, 915, 2.625, True, _ANDROID_UA.format(model="Pixel 7")),
    "galaxy-s23": (360, 780, 3.0, True, _ANDROID_UA.format(model="SM-S911B")),
    "ipad-mini": (768, 1024, 2.0, True, _IPAD_UA),
    "ipad-air": (820, 1180, 2.0, True, _IPAD_UA),
    "ipad-pro-12.9": (1024, 1366, 2.0, True, _IPAD_UA),
    "galaxy-tab-s9": (800, 1280, 2.0, True, _ANDROID_TABLET_UA.format(model="SM-X710")),
}

# The order `bp tabs` shows them in.
FIELDS = ("device", "width", "height", "scale", "mobile", "userAgent", "latitude", "longitude", "timezone", "locale",
          "colorScheme", "offline")


class Emulations:
    """raw target id -> the settings Browser Pilot applied to that tab. Built by the broker
    (broker/server.py start_services); its on_session is a tab-session hook."""

    def __init__(self, browser, workers):
        self.browser = browser
        self.workers = workers
        self.lock = threading.Lock()
        self.by_tab = {}

    def get(self, raw):
        with self.lock:
            found = self.by_tab.get(raw)
            return dict(found) if found else None

    def shown(self, raw):
        """The tab's emulation for `bp tabs`, or None."""
        settings = self.get(raw)
        if not settings:
            return None
        return {k: settings[k] for k in FIELDS if k in settings}

    def on_session(self, session):
        """A newly attached session: a popup of an emulated tab gets its opener's settings."""
        if not self.by_tab:
            return
        popups = self.browser.popups()
        current, depth = popups.get(session.raw_id), 0
        while current is not None and depth < 16:
            settings = self.get(current)
            if settings:
                try:
                    apply(session, settings, 5.0)
                    with self.lock:
                        self.by_tab[session.raw_id] = settings
                except BPError:
                    log.info("a popup's emulation could not be applied")
                return
            current, depth = popups.get(current), depth + 1

    def clear(self, raws):
        """Clear the emulation of these tabs (release, disconnect, lease end): best effort, the
        session may already be gone."""
        sessions = dict(self.workers.sessions()) if raws else {}
        for raw in raws:
            with self.lock:
                previous = self.by_tab.pop(raw, None)
            session = sessions.get(raw)
            if previous and session is not None and session.alive:
                try:
                    apply(session, {}, 5.0, previous)
                except BPError:
                    pass

    def release_key(self, agent):
        """Everything this Agent emulated: its managed tabs and their popups (before its holdings go)."""
        if agent is None:
            return
        popups, mine = self.browser.popups(), {raw for raw, _ in agent.managed_tabs()}
        raws = []
        with self.lock:
            for raw in self.by_tab:
                current, depth = raw, 0
                while current is not None and current not in mine and depth < 16:
                    current, depth = popups.get(current), depth + 1
                if current in mine:
                    raws.append(raw)
        self.clear(raws)


def _settings(current, args):
    settings = dict(current or {})
    if args.get("device"):
        name = args["device"].lower()
        if name not in DEVICES:
            raise invalid_argument("device", f"Unknown device {args['device'][:64]!r}; one of: {', '.join(DEVICES)}.",
                                   devices=list(DEVICES))
        width, height, scale, mobile, agent = DEVICES[name]
        settings.update(device=name, width=width, height=height, scale=scale, mobile=mobile, userAgent=agent)
    for name in FIELDS[1:]:
        if name in args:
            settings[name] = args[name]
    if "width" in args and "device" not in args:
        settings.pop("device", None)  # a viewport of its own is no longer that device
    return settings


def _metrics(settings):
    return {"width": settings.get("width", 0), "height": settings.get("height", 0),
            "deviceScaleFactor": settings.get("scale", 0), "mobile": bool(settings.get("mobile"))}


def _call(session, method, params, timeout_s, field):
    try:
        return session.call(method, params, timeout_s=timeout_s)
    except CDPError:  # the browser refused the value itself
        raise invalid_argument(field, f"The browser refused this {field}.") from None


def apply(session, settings, timeout_s, previous=None):
    """Send the overrides `settings` holds and clear those `previous` held that it does not."""
    previous = previous or {}
    t = max(1.0, min(10.0, timeout_s))
    had = lambda *names: any(n in previous for n in names)  # noqa: E731
    has = lambda *names: any(n in settings for n in names)  # noqa: E731
    if has("width", "height", "scale", "mobile"):
        _call(session, "Emulation.setDeviceMetricsOverride", _metrics(settings), t, "viewport")
        touch = {"enabled": True, "maxTouchPoints": 5} if settings.get("mobile") else {"enabled": False}
        _call(session, "Emulation.setTouchEmulationEnabled", touch, t, "mobile")
    elif had("width", "height", "scale", "mobile"):
        session.call("Emulation.clearDeviceMetricsOverride", {}, timeout_s=t)
        session.call("Emulation.setTouchEmulationEnabled", {"enabled": False}, timeout_s=t)
    if has("userAgent", "locale") or had("userAgent", "locale"):
        # An empty user agent is no override (Chromium keeps its own), and so is no accept-language.
        params = {"userAgent": settings.get("userAgent", "")}
        if settings.get("locale"):
            params["acceptLanguage"] = settings["locale"]
        _call(session, "Emulation.setUserAgentOverride", params, t, "userAgent")
    if has("latitude"):
        _call(session, "Emulation.setGeolocationOverride",
              {"latitude": settings["latitude"], "longitude": settings["longitude"], "accuracy": 1}, t, "geolocation")
    elif had("latitude"):
        session.call("Emulation.clearGeolocationOverride", {}, timeout_s=t)
    if has("timezone") or had("timezone"):
        _call(session, "Emulation.setTimezoneOverride", {"timezoneId": settings.get("timezone", "")}, t, "timezone")
    if has("locale") or had("locale"):
        _call(session, "Emulation.setLocaleOverride", {"locale": settings["locale"]} if "locale" in settings else {},
              t, "locale")
    if has("colorScheme") or had("colorScheme"):
        features = [{"name": "prefers-color-scheme", "value": settings["colorScheme"]}] if "colorScheme" in settings else []
        session.call("Emulation.setEmulatedMedia", {"features": features}, timeout_s=t)
    if has("offline") or had("offline"):
        offline = bool(settings.get("offline"))
        session.call("Network.emulateNetworkConditions", {"offline": offline, "latency": 0, "downloadThroughput": -1,
                                                          "uploadThroughput": -1}, timeout_s=t)


def emulate(tab, emulations):
    """`bp emulate` on the selected tab (its worker): refused on a user tab. `emulations`: the broker's
    Emulations, handed by the handler (broker/commands/emulate.py)."""

    broker, agent, raw, session, args = tab.broker, tab.agent, tab.raw, tab.session, tab.args
    key, origin = broker.agents.owner(raw, broker.browser.popups())
    if origin == "user_tab" or key != agent.key:
        raise BPError("target_not_owned", "Emulation is only for Browser Pilot's own tabs: on a user's tab it would "
                      "change what the person sees.", context={"reason": "user_tab", "origin": "user_tab"},
                      hint="Open a tab of your own with 'bp open --new URL' and emulate there.")
    with emulations.lock:  # tabs that are gone keep nothing
        for gone in [r for r in emulations.by_tab if broker.browser.targets.info(r) is None]:
            del emulations.by_tab[gone]
    previous = emulations.get(raw) or {}
    settings = {} if args.get("reset") else _settings(previous, args)
    session.dispatching()  # the overrides change the page from the first call on
    try:
        apply(session, settings, tab.remaining(floor=1.0), previous)
    except BPError:
        if not args.get("reset"):
            try:  # leave the tab as it was, not half changed
                apply(session, previous, tab.remaining(floor=1.0), settings)
            except BPError:
                pass
        raise
    with emulations.lock:
        if settings:
            emulations.by_tab[raw] = settings
        else:
            emulations.by_tab.pop(raw, None)
    return {"targetId": agent.opaque_id(raw), "emulation": emulations.shown(raw) or {}}
