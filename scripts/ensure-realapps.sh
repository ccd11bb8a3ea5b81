#!/usr/bin/env bash
# Install the third-party apps of the real-app suite (tests/realapps/) at pinned versions, from
# the package registries only: PyPI into .realapps/venv (apart from the test venv, so their
# dependencies never mix with ours), npm into .realapps/npm, Debian's python3-doc with apt; then
# build the small MkDocs-Material site and bundle the component-library pages (React apps in
# tests/realapps/apps/components/*.jsx, with esbuild from npm, into .realapps/bundles). The tests
# download nothing themselves. Idempotent: a stamp of the pins and sources skips a finished install.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="${BROWSER_PILOT_REALAPPS:-$PWD/.realapps}"
PYPI_PINS=(datasette==0.65.5 flask==3.1.3 mkdocs==1.6.1 mkdocs-material==9.8.1
           nicegui==3.18.0 dash==4.4.1)
NPM_PINS=(todomvc@0.1.1 swagger-ui-dist@5.35.0 quill@2.0.3 tom-select@2.6.2
          esbuild@0.28.2 react@19.3.1 react-dom@19.3.1 react-aria-components@1.22.1 @internationalized/date@3.12.4
          @mui/material@9.6.0 @emotion/react@11.14.0 @emotion/styled@11.14.1 @mui/x-date-pickers@9.17.0
          @mui/x-tree-view@9.14.0 @mui/x-data-grid@9.17.0 dayjs@1.11.23 bootstrap@5.3.9
          jquery@3.7.1 jquery-ui@1.14.2 @szhsin/react-menu@4.5.2 choices.js@11.2.4 tabulator-tables@6.5.3 sortablejs@1.15.7)
COMPONENTS=tests/realapps/apps/components
DEBIAN_PIN="python3-doc=3.11.2-1"
STAMP="$ROOT/installed"
want="${PYPI_PINS[*]} ${NPM_PINS[*]} $DEBIAN_PIN $(sha256sum tests/realapps/apps/mkdocs/mkdocs.yml tests/realapps/apps/mkdocs/docs/* "$COMPONENTS"/* | sha256sum)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exit 0; fi
mkdir -p "$ROOT"

if [ ! -x "$ROOT/venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$ROOT/venv"
fi
"$ROOT/venv/bin/python" -m pip install -q --disable-pip-version-check "${PYPI_PINS[@]}" 2>&1 \
  | { grep -v "^WARNING: Location" || true; } >&2

npm install --prefix "$ROOT/npm" --no-save --no-audit --no-fund --ignore-scripts --omit=dev --loglevel=error \
  "${NPM_PINS[@]}" >/dev/null

if [ ! -f /usr/share/doc/python3/html/library/json.html ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  export DEBIAN_FRONTEND=noninteractive
  # The pinned version when the archive still has it; Debian replaces a package's version on a
  # point release, and the tasks read stable parts of the docs, so the current one is accepted then.
  if ! $SUDO apt-get install -y -qq "$DEBIAN_PIN" >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "$DEBIAN_PIN" >/dev/null 2>&1 || $SUDO apt-get install -y -qq python3-doc >/dev/null
  fi
fi

rm -rf "$ROOT/mkdocs-site"
NO_MKDOCS_2_WARNING=1 "$ROOT/venv/bin/mkdocs" build -q -f tests/realapps/apps/mkdocs/mkdocs.yml -d "$ROOT/mkdocs-site"
# One bundle per page, production React; NODE_PATH lets the sources here import the packages there.
rm -rf "$ROOT/bundles"
mkdir -p "$ROOT/bundles"
for src in "$COMPONENTS"/*.jsx; do
  NODE_PATH="$ROOT/npm/node_modules" "$ROOT/npm/node_modules/.bin/esbuild" "$src" --bundle --minify --jsx=automatic \
    --define:process.env.NODE_ENV='"production"' --log-level=warning --outfile="$ROOT/bundles/$(basename "$src" .jsx).js"
done
printf '%s' "$want" > "$STAMP"
