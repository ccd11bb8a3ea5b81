#!/usr/bin/env bash
# Install the test dependencies (Chromium, the venv, the package with its test extras) and run
# the whole suite on real headless Chromium, two workers. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-chromium.sh
scripts/ensure-venv.sh test
scripts/ensure-realapps.sh
exec .venv/bin/python -m pytest -n 2 -q -p no:cacheprovider tests "$@"
