#!/usr/bin/env bash
# Install the test dependencies (Chromium, the venv, the package with its test extras) and run
# the whole suite on real headless Chromium, two workers. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-chromium.sh
scripts/ensure-venv.sh test
if ! command -v npm >/dev/null; then
  # The real-app suite and the editor tests install their pinned npm packages with it.
  SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
fi
scripts/ensure-realapps.sh
if ! command -v Xvfb >/dev/null || ! command -v xdotool >/dev/null; then
  # The person tier (tests/person/): the person's headful Chromium on a virtual X display.
  SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq xvfb xdotool >/dev/null
fi
exec .venv/bin/python -m pytest -n 2 --dist worksteal -q -p no:cacheprovider --durations=20 tests "$@"
