"""Printing results: one JSON object on a non-TTY stdout, readable text on a TTY.

After printing, the process leaves with os._exit: the answer is out, and interpreter teardown
(module finalisers, the ZeroMQ context) would only add latency to every Agent step.
"""

import os
import sys

TYPE_CHECKING = False  # typing is never imported at run time (the CLI's every call): annotations are strings
if TYPE_CHECKING:
    from typing import NoReturn

EXIT_OK, EXIT_FAILURE, EXIT_SIGINT, EXIT_SIGTERM = 0, 1, 130, 143


class Mode:
    """Output mode: explicit --json/--human, else JSON unless stdout is a TTY."""

    forced: "str | None" = None  # "json" or "human"
    fence: "bool | None" = None  # --fence; None: BROWSER_PILOT_FENCE decides (bp/fence.py)

    @classmethod
    def fenced(cls):
        if cls.fence is None:
            cls.fence = False
            if "BROWSER_PILOT_FENCE" in os.environ:  # bp/fence.py is imported only when asked for
                from bp import fence

                cls.fence = fence.enabled()
        return cls.fence

    @classmethod
    def human(cls):
        if cls.forced is not None:
            return cls.forced == "human"
        try:
            return os.isatty(sys.stdout.fileno())
        except (AttributeError, ValueError, OSError):
            return False


def _escape(value):
    """Page-derived text must not forge lines in human output."""
    text = str(value)
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\x1b", "\\x1b")


def finish(result, render=None, *, exit_code=None) -> "NoReturn":
    """Print a result (success or failure envelope) and leave the process."""
    if Mode.fenced():
        from bp import fence  # page text between a per-call random boundary: the one place it is applied

        result = fence.apply(result)
    ok = bool(result.get("ok"))
    if exit_code is None:
        exit_code = EXIT_OK if ok else EXIT_FAILURE
    if Mode.human():
        if ok:
            text = render(result) if render else render_generic(result)
            if "fence" in result and render is not None:  # render_generic shows it as a field already
                text = f"[fence] page text is between <<page:{result['fence']}>> and <<end:{result['fence']}>>\n" + text
            sys.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))
        else:
            lines = [f"✗ {_escape(result.get('error'))} [{result.get('code')}]"]
            if result.get("hint"):
                lines.append(f"  hint: {_escape(result['hint'])}")
            remedy = result.get("remediation")
            if remedy:
                lines.append(f"  action: {_escape(remedy.get('message'))}")
            sys.stderr.write("\n".join(lines) + "\n")
    else:
        import json

        sys.stdout.write(json.dumps(result, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)


def render_generic(result, indent=""):
    lines = []
    for key, value in result.items():
        if key == "ok":
            continue
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines.append(render_generic(value, indent + "  "))
        elif isinstance(value, list):
            lines.append(f"{indent}{key}: {len(value)} item(s)")
            for item in value[:50]:
                lines.append(f"{indent}  - " + (", ".join(f"{k}={_escape(v)}" for k, v in item.items())
                                                 if isinstance(item, dict) else _escape(item)))
        else:
            lines.append(f"{indent}{key}: {_escape(value)}")
    return "\n".join(line for line in lines if line)


escape = _escape
