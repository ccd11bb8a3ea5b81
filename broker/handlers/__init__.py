"""Handlers by command family; importing this package registers them all."""

from broker.handlers import actions, commands, files, forms, network, observe, page, policy, setup, tabs, waits  # noqa: F401
