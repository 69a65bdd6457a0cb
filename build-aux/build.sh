#!/bin/sh
# Configures (once) and builds Sightline in _build/ (or $SIGHTLINE_BUILD_DIR);
# arguments go to the first `meson setup`.
set -eu
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
builddir=${SIGHTLINE_BUILD_DIR:-_build}
[ -f "$builddir/build.ninja" ] || meson setup "$builddir" "$@"
meson compile -C "$builddir"
