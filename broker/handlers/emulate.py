"""Emulation family: bp emulate (cli/commands/emulate.py). Logic: broker/emulation.py."""

from bp import protocol
from broker import emulation
from broker.registry import handler

handler(protocol.OP_EMULATE)(emulation.emulate)
