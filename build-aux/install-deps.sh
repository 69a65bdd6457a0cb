#!/bin/sh
# Installs the Debian packages of build-aux/debian-packages.txt that are missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
missing=""
for pkg in $(grep -v '^#' "$here/debian-packages.txt"); do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
    missing="$missing $pkg"
done
# Node and npm install the page libraries below; a machine that has them from
# elsewhere keeps its own.
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
  echo "Installing:$missing"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

# npm packages pinned by a package-lock.json: the JavaScript libraries injected
# into pages (src/runner/js), and @playwright/test, which the export test runs
# on Debian's Chromium (tests/playwright; no browser download).
for js in "$here/../src/runner/js" "$here/../tests/playwright"; do
  if [ ! -f "$js/node_modules/.package-lock.json" ] ||
     [ "$js/package-lock.json" -nt "$js/node_modules/.package-lock.json" ]; then
    (cd "$js" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  fi
done
