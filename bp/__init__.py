"""Browser Pilot shared core: the messages, codes and file rules that cli, broker and janitor share.

Kept import-free on purpose: `bp status` imports this package on every Agent step.
"""

__version__ = "0.5.0"
