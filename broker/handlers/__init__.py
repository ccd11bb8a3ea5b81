"""Handlers by command family; importing this package registers them all."""

from broker.handlers import (  # noqa: F401
    actions, batch, commands, emulate, files, forms, network, observe, page, policy, setup, tabs, waits)
