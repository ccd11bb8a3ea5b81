"""Handlers by command family; importing this package registers them all."""

from broker.handlers import actions, observe, setup, tabs  # noqa: F401
