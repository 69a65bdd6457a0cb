#!/bin/sh
# Configures (once) and builds Sightline in _build/.
set -eu
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
[ -f _build/build.ninja ] || meson setup _build "$@"
meson compile -C _build
