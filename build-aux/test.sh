#!/bin/sh
# README command (b): installs what is missing, builds, and runs every test under
# a virtual display (the tests drive a real WebKitGTK).
set -eu
cd "$(dirname "$0")/.."
build-aux/build.sh
exec xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp" \
  meson test -C _build --print-errorlogs --num-processes 2 "$@"
