"""Private, size-bounded, redacted logs (broker side; the janitor forwards records over its pipe).

Secrets are not log data (rule 13): log calls pass structured values, and the redaction filter
replaces anything under a sensitive key, and anything that looks like a credential, before a
record is formatted.
"""

import logging
import logging.handlers
import os
import re
from typing import Any

from bp import paths

LOG_MAX_BYTES = 1024 * 1024
LOG_BACKUPS = 3
MAX_MESSAGE_CHARS = 2000

SENSITIVE_KEYS = re.compile(
    r"pass(word)?|secret|token|cookie|auth|credential|header|body|postdata|text|value|expression|"
    r"prompt|typed|key(?!s?$)|session",
    re.IGNORECASE,
)
_INLINE_SECRET = re.compile(
    r"(?i)\b(authorization|cookie|set-cookie|password|passwd|token|secret)\b(\s*[:=]\s*)"
    r"((?:bearer|basic|digest|token)\s+)?([^\s,;'\"}]+)"
)
REDACTED = "[redacted]"


def redact(value: Any, depth: int = 0) -> Any:
    """A copy of value with sensitive fields masked; bounded in depth and size."""
    if depth > 6:
        return "[...]"
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and SENSITIVE_KEYS.search(k) else redact(v, depth + 1))
                for k, v in list(value.items())[:64]}
    if isinstance(value, (list, tuple)):
        return [redact(v, depth + 1) for v in list(value)[:64]]
    if isinstance(value, str):
        return _INLINE_SECRET.sub(lambda m: m.group(1) + m.group(2) + REDACTED, value)[:MAX_MESSAGE_CHARS]
    return value


MAX_TRACEBACK_CHARS = 16000


def redact_traceback(text):
    """A formatted traceback with inline secrets masked (its frames may quote a secret, and an
    exception's message often echoes the value it choked on)."""
    if len(text) > MAX_TRACEBACK_CHARS:
        text = text[:MAX_TRACEBACK_CHARS // 2] + "\n[...]\n" + text[-MAX_TRACEBACK_CHARS // 2:]
    return _INLINE_SECRET.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


class RedactionFilter(logging.Filter):
    _formatter = logging.Formatter()

    def filter(self, record):
        if record.exc_info and not record.exc_text:
            # Formatted here, redacted, and cached where every Formatter looks first.
            record.exc_text = redact_traceback(self._formatter.formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact_traceback(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_traceback(record.stack_info)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if record.args:
            if isinstance(record.args, dict):
                record.args = redact(record.args)
            else:
                record.args = tuple(redact(a) for a in record.args)
        return True


def setup_broker_logging(home_dir, level=logging.INFO):
    """Rotating 0600 log under <home>/logs, shared safely by the broker's threads and any
    multiprocessing children (multiprocessing-logging)."""
    log_dir = os.path.join(home_dir, "logs")
    paths.ensure_private_dir(log_dir)
    log_file = os.path.join(log_dir, "broker.log")
    old_umask = os.umask(0o077)
    try:
        # errors=: a lone surrogate in a message must not lose the record ("--- Logging error ---").
        handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS,
                                                       encoding="utf-8", errors="backslashreplace")
    finally:
        os.umask(old_umask)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(threadName)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    import multiprocessing_logging

    multiprocessing_logging.install_mp_handler(root)
    # The wrapping handler formats records before its queue; redact before that happens.
    for wrapped in root.handlers:
        wrapped.addFilter(RedactionFilter())
    return log_file
