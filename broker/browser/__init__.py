"""The browser: which Chrome the broker is bound to, the janitor connection, targets."""
