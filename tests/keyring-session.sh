#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs a test inside its own D-Bus session with a fresh, unlocked GNOME
# keyring in a throwaway home, so libsecret's real path is exercised without
# touching anyone's keyring. Without dbus-run-session or
# gnome-keyring-daemon the test runs as is (its keyring checks then skip).
# Usage: keyring-session.sh PROGRAM ARGS…
set -eu
if ! command -v dbus-run-session >/dev/null || ! command -v gnome-keyring-daemon >/dev/null; then
  exec "$@"
fi
home=$(mktemp -d)
# GTK_A11Y: no accessibility bus in this session (its daemon talks on stdout).
export GTK_A11Y=none HOME="$home" XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" \
       XDG_CACHE_HOME="$home/cache" XDG_RUNTIME_DIR="$home/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# The daemons the session starts write to its stdout: only the test's own
# output goes to ours (fd 3), for TAP.
status=0
dbus-run-session -- sh -c '
  printf sightline-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 &&
    export SIGHTLINE_TEST_KEYRING=1
  exec "$@" >&3' keyring-session "$@" 3>&1 1>&2 || status=$?
rm -rf "$home" 2>/dev/null || true
exit $status
