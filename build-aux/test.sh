#!/bin/sh
# README command (b): installs what is missing, builds, and runs every test under
# a virtual display (the tests drive a real WebKitGTK).
#
#   build-aux/test.sh [MESON-TEST-ARGS...]             in _build/
#   build-aux/test.sh --sanitize [MESON-TEST-ARGS...]  the same suite built with
#       AddressSanitizer and UndefinedBehaviorSanitizer, in _asan/ (CI runs both)
set -eu
cd "$(dirname "$0")/.."

builddir=_build
multiplier=1
if [ "${1:-}" = "--sanitize" ]; then
  shift
  builddir=_asan
  multiplier=3
  # Leak checking is off: GTK, WebKitGTK and fontconfig keep caches for the
  # life of the process, which LeakSanitizer reports at exit. The small
  # quarantine keeps the memory-bound checks meaningful; link order: the test
  # of the MCP client starts children through stdbuf (an LD_PRELOAD).
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:quarantine_size_mb=8:verify_asan_link_order=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  SIGHTLINE_BUILD_DIR=$builddir build-aux/build.sh -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbench=false
else
  build-aux/build.sh
fi

# One session bus for the whole run, started outside the virtual display. On a
# display with no session bus, the first program to want one autolaunches it
# with that program's environment; the accessibility bus it then starts writes
# its socket's address (inside that test's temporary folder) onto the display,
# and every later web process on the display fails to start once the folder is
# gone. A bus of our own keeps its address off the display and its runtime
# files in one folder that lives as long as the run.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  XDG_RUNTIME_DIR=$(mktemp -d)
  export XDG_RUNTIME_DIR
  trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
fi
dbus-run-session -- xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp" \
  meson test -C "$builddir" --print-errorlogs --num-processes 2 \
  --timeout-multiplier "$multiplier" "$@"
