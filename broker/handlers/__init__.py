"""Handlers by command family; importing this package registers them all."""

from broker.handlers import actions, forms, observe, page, setup, tabs  # noqa: F401
