#!/usr/bin/env bash
# The main job on the embedded default: a private headless Chromium, connected through the
# broker -> janitor process tree; open the bundled demo page (its snapshot is printed), click
# the counter and the checkbox (each prints the fresh snapshot and the evidence), show the
# status, then clean up. Installs what is missing first. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-chromium.sh
scripts/ensure-venv.sh
export PATH="$PWD/.venv/bin:$PATH"
export BROWSER_PILOT_CLIENT_KEY="${BROWSER_PILOT_CLIENT_KEY:-quickstart-agent}"
step() { printf '\n$ %s\n' "$*"; "$@"; }
DEMO="file://$PWD/demo/index.html"
step bp launch --headless
step bp connect --browser launched
step bp --human open "$DEMO"
step bp --human click 3
step bp --human click 2
step bp --human status
step bp disconnect
step bp launch --stop
