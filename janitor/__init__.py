"""The janitor: the only owner of the browser-level CDP WebSocket, and Browser Pilot's crash
boundary. Started by the broker as `python -m janitor`; never by a public command."""
