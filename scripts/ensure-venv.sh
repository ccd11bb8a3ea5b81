#!/usr/bin/env bash
# Create .venv (if missing) and install the package into it, as users install it (a regular,
# non-editable install: an editable one slows every interpreter start). Idempotent.
# Usage: scripts/ensure-venv.sh [extras]     e.g. scripts/ensure-venv.sh test
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
spec="."
if [ -n "${1:-}" ]; then spec=".[$1]"; fi
# pip, quiet but never silent about a failure (this machine's pip prints harmless location warnings).
pip_quiet() {
  local out
  if ! out=$(.venv/bin/python -m pip install -q --disable-pip-version-check "$@" 2>&1); then
    printf '%s\n' "$out" | grep -v "^WARNING: Location" >&2
    return 1
  fi
  printf '%s\n' "$out" | grep -v "^WARNING: Location" | grep . >&2 || true
}
pip_quiet --upgrade "$spec"
# Same version number, newer checkout: reinstall the package itself so the venv runs this tree.
pip_quiet --force-reinstall --no-deps .
.venv/bin/bp --version >/dev/null
