"""The broker's commands: one module per command family, each mapping its operations (bp/ops.py)
to handlers (broker/registry.py `@handler`). The top layer: nothing below imports it; it reads
and drives the engine (browser, tabs, observe, actions, network, ...)."""
