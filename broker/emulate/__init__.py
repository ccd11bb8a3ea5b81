"""Emulation on Browser Pilot's own tabs: viewport, device, user agent, locale, time zone."""
