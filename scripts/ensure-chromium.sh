#!/usr/bin/env bash
# Make sure a Chromium/Chrome exists: use BROWSER_PILOT_CHROME or one on PATH, else install
# Debian's `chromium` when this user can install packages. Idempotent.
set -euo pipefail
if [ -n "${BROWSER_PILOT_CHROME:-}" ] && [ -x "${BROWSER_PILOT_CHROME}" ]; then exit 0; fi
for name in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$name" >/dev/null 2>&1; then exit 0; fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "No Chromium/Chrome found and no apt-get: install Chromium or Chrome, or set BROWSER_PILOT_CHROME." >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "No Chromium/Chrome found and no permission to install it: run 'sudo apt-get install chromium'." >&2
    exit 1
  fi
fi
echo "Installing Debian's chromium ..." >&2
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
