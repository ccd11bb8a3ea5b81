"""The Browser Pilot broker: a per-user daemon holding every Agent's state in memory.
Started as `python -m broker` by the first `bp connect`; never through a public command."""
