"""Handlers by command family; importing this package registers them all."""

from broker.handlers import setup  # noqa: F401
