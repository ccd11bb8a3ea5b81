"""Action family: click, type, hover, drag (cli/commands/actions.py); keyboard, press
(cli/commands/keys.py). Each acts on the selected tab through the action pipeline
(observe_after: broker/actions/pipeline.py settles it, checks its evidence, observes the tab
afresh, runs the no-progress watchdog). Each arms its settle right before its dispatch and waits
for it right after (settles: broker/actions/settle.py)."""

from bp import protocol
from broker.actions import drag
from broker.actions import inputs
from broker.actions import keyboard
from broker.registry import handler

ACTIONS = {
    protocol.OP_CLICK: inputs.click,
    protocol.OP_TYPE: inputs.type_text,
    protocol.OP_HOVER: inputs.hover,
    protocol.OP_DRAG: drag.drag,
    protocol.OP_KEYBOARD: keyboard.keyboard,
    protocol.OP_PRESS: keyboard.press,
}

for _op, _action in ACTIONS.items():
    handler(_op, observe_after=True, settles=True)(lambda tab, action=_action: action(*tab.parts()))
