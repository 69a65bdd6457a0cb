#!/bin/sh
# README command (a): installs what is missing, builds, and runs the main job:
# serves the bundled demo site, takes a screenshot of it headless and, where a
# display exists, opens the app on it.
set -eu
cd "$(dirname "$0")/.."
build-aux/build.sh
bin=_build/app/sightline
out=${SIGHTLINE_OUT:-sightline-output}
mkdir -p "$out"

port_file=$(mktemp)
"$bin" demo-site --port 0 --port-file "$port_file" &
site=$!
trap 'kill $site 2>/dev/null || true; rm -f "$port_file"' EXIT INT TERM
i=0
while [ ! -s "$port_file" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url="http://127.0.0.1:$(cat "$port_file")/"
echo "Demo site: $url"

"$bin" screenshot "$url" --output "$out/demo-site.png"
echo "Screenshot: $out/demo-site.png"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -z "${CI:-}" ]; then
  GSETTINGS_SCHEMA_DIR=_build/data "$bin" "$url"
fi
