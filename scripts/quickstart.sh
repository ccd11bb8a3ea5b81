#!/usr/bin/env bash
# The main job on the embedded default: a private headless Chromium, connected through the
# broker -> janitor process tree, then cleaned up. Installs what is missing first. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-chromium.sh
scripts/ensure-venv.sh
export PATH="$PWD/.venv/bin:$PATH"
export BROWSER_PILOT_CLIENT_KEY="${BROWSER_PILOT_CLIENT_KEY:-quickstart-agent}"
step() { printf '\n$ %s\n' "$*"; "$@"; }
step bp launch --headless
step bp connect --browser launched
step bp --human status
step bp disconnect
step bp launch --stop
