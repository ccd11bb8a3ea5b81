"""Emulation family: bp emulate (cli/commands/emulate.py). Logic: broker/emulate/emulation.py."""

from bp import protocol
from broker.emulate import emulation
from broker.registry import handler

handler(protocol.OP_EMULATE)(lambda tab: emulation.emulate(tab, tab.broker.emulations))
