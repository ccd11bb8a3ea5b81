"""Handlers by command family; importing this package registers them all."""

from broker.handlers import setup, tabs  # noqa: F401
