"""Every family's handlers (broker/commands/); importing this module registers them all."""

from broker.commands import (  # noqa: F401
    actions, batch, browser, emulate, files, forms, network, observe, page, policy, records, tabs, trace, waits)
