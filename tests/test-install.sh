#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the build into a temporary DESTDIR and uses the installed copy as a
# person would: its files are where the desktop looks for them, the installed
# `sightline` runs, speaks German from its installed catalogs, finds its
# settings schema and, where the command exists, takes a headless screenshot.
#
# Usage: test-install.sh BUILD_ROOT VERSION PREFIX BINDIR DATADIR LOCALEDIR MANDIR COMPLETIONSDIR
set -u
build=$1 version=$2 prefix=$3 bindir=$4 datadir=$5 localedir=$6 mandir=$7 completionsdir=$8
app_id=dev.sightline.Sightline

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sightline-install.XXXXXX")
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
status=0
n=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; status=1; }
check_file() { [ -s "$1" ] && pass "installed $2" || fail "missing $2 ($1)"; }

dest=$tmp/root
if ! meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$tmp/install.log" 2>&1; then
  sed 's/^/# /' "$tmp/install.log"
  fail "meson install --destdir"
  echo "1..$n"
  exit 1
fi
pass "meson install --destdir $dest"

D() { printf '%s%s' "$dest" "$1"; }
bin=$(D "$bindir")/sightline
[ -x "$bin" ] && pass "installed the sightline executable" || fail "no executable at $bin"
check_file "$(D "$datadir")/applications/$app_id.desktop" "the desktop entry"
check_file "$(D "$datadir")/metainfo/$app_id.metainfo.xml" "the AppStream metainfo"
check_file "$(D "$datadir")/glib-2.0/schemas/$app_id.gschema.xml" "the GSettings schema"
check_file "$(D "$datadir")/icons/hicolor/scalable/apps/$app_id.svg" "the scalable icon"
check_file "$(D "$datadir")/icons/hicolor/symbolic/apps/$app_id-symbolic.svg" "the symbolic icon"
for lang in $(grep -v '^#' "$(dirname "$0")/../po/LINGUAS"); do
  check_file "$(D "$localedir")/$lang/LC_MESSAGES/sightline.mo" "the $lang catalog"
done
check_file "$(D "$mandir")/man1/sightline.1" "the man page"
check_file "$(D "$completionsdir")/sightline" "the bash completion"

# The desktop entry launches what was installed, with an icon that was installed.
desktop=$(D "$datadir")/applications/$app_id.desktop
exec_line=$(sed -n 's/^Exec=//p' "$desktop")
icon_line=$(sed -n 's/^Icon=//p' "$desktop")
[ -x "$(D "$bindir")/${exec_line%% *}" ] && pass "Exec=${exec_line%% *} is installed in bindir" ||
  fail "Exec=$exec_line names no installed program"
[ -f "$(D "$datadir")/icons/hicolor/scalable/apps/$icon_line.svg" ] &&
  pass "Icon=$icon_line is installed" || fail "Icon=$icon_line names no installed icon"
# Translations reached the merged data files.
grep -q '^Comment\[de\]=' "$desktop" && pass "the desktop entry carries German text" ||
  fail "the desktop entry has no Comment[de]"
grep -q 'xml:lang="fr"' "$(D "$datadir")/metainfo/$app_id.metainfo.xml" &&
  pass "the metainfo carries French text" || fail "the metainfo has no xml:lang=\"fr\""

# AppStream checks the installed tree as a software centre reads it: the
# metainfo, its desktop entry and its icon together.
if command -v appstreamcli >/dev/null; then
  if appstreamcli validate-tree --no-net "$(D "$prefix")" >"$tmp/as.log" 2>&1; then
    pass "appstreamcli validate-tree accepts the installed tree"
  else
    fail "appstreamcli validate-tree: $(cat "$tmp/as.log")"
  fi
fi

# The man page is found by man(1) through the installed MANPATH.
if MANPATH=$(D "$mandir") man -w sightline >/dev/null 2>&1; then
  pass "man finds sightline(1) in the installed tree"
else
  fail "man -w sightline finds nothing under $(D "$mandir")"
fi

# The installed program runs.
out=$("$bin" --version 2>&1)
case $out in
  "sightline $version "*) pass "installed sightline --version: $out" ;;
  *) fail "installed sightline --version printed: $out" ;;
esac
german=$(LC_ALL=C.UTF-8 LANGUAGE=de SIGHTLINE_LOCALEDIR="$(D "$localedir")" "$bin" --help 2>&1)
printf '%s\n' "$german" | grep -qx 'Befehle:' && pass "installed catalogs: LANGUAGE=de sightline --help is German" ||
  fail "LANGUAGE=de sightline --help with the installed catalogs is not German: $german"

# The installed schema compiles and gives the defaults the app reads.
mkdir -p "$tmp/schemas"
if glib-compile-schemas --strict --targetdir="$tmp/schemas" "$(D "$datadir")/glib-2.0/schemas"; then
  got=$(GSETTINGS_BACKEND=memory GSETTINGS_SCHEMA_DIR=$tmp/schemas gsettings get $app_id default-max-steps)
  [ "$got" = "uint32 25" ] && pass "the installed schema's default-max-steps is 25" ||
    fail "gsettings get default-max-steps gave “$got”"
else
  fail "the installed schema does not compile"
fi

# The installed app opens its window, finding its schema and icon where the
# installed tree puts them (needs a display: the tests run under Xvfb).
if [ -n "${DISPLAY:-}" ] && command -v xwininfo >/dev/null && command -v dbus-run-session >/dev/null; then
  if XDG_DATA_DIRS="$(D "$datadir"):${XDG_DATA_DIRS:-/usr/local/share:/usr/share}" \
     GSETTINGS_SCHEMA_DIR=$tmp/schemas GSETTINGS_BACKEND=memory \
     dbus-run-session -- sh -c '
       "$1" >"$2/app.log" 2>&1 &
       app=$!
       for _ in $(seq 200); do
         kill -0 $app 2>/dev/null || exit 3
         xwininfo -root -tree 2>/dev/null | grep -q "\"Sightline\": (\"sightline\"" && break
         sleep 0.1
       done
       xwininfo -root -tree | grep "\"Sightline\": (\"sightline\"" >"$2/window"
       kill $app 2>/dev/null
       wait $app 2>/dev/null
       test -s "$2/window"' sh "$bin" "$tmp" 2>>"$tmp/app.log"; then
    pass "the installed app opened its window: $(sed 's/^ *//' "$tmp/window" | head -n1)"
  else
    fail "the installed app did not open a window: $(grep -v -e dbus-daemon "$tmp/app.log" | head -n5)"
  fi
else
  echo "# no DISPLAY (or no xwininfo, dbus-run-session): skipped opening the installed app"
fi

# A headless screenshot with the installed program, once the command exists.
commands=$(LC_ALL=C LANGUAGE= "$bin" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
if printf '%s\n' $commands | grep -qx screenshot; then
  url=""
  if printf '%s\n' $commands | grep -qx demo-site; then
    GSETTINGS_SCHEMA_DIR=$tmp/schemas "$bin" demo-site --port 0 --port-file "$tmp/port" \
      >"$tmp/site.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
    [ -s "$tmp/port" ] && url="http://127.0.0.1:$(cat "$tmp/port")/"
  else
    mkdir -p "$tmp/site"
    printf '<!doctype html><title>Install test</title><h1>Installed</h1>\n' >"$tmp/site/index.html"
    python3 -m http.server --bind 127.0.0.1 --directory "$tmp/site" 0 >"$tmp/site.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do
      port=$(sed -n 's/.* port \([0-9][0-9]*\).*/\1/p' "$tmp/site.log" | head -n1)
      [ -n "$port" ] && break
      sleep 0.1
    done
    [ -n "$port" ] && url="http://127.0.0.1:$port/"
  fi
  if [ -z "$url" ]; then
    fail "no local site to take a screenshot of: $(cat "$tmp/site.log")"
  elif GSETTINGS_SCHEMA_DIR=$tmp/schemas timeout 60 "$bin" screenshot "$url" \
         --output "$tmp/shot.png" >"$tmp/shot.log" 2>&1 &&
       [ "$(head -c 8 "$tmp/shot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
    pass "the installed sightline took a PNG screenshot of $url ($(wc -c <"$tmp/shot.png") bytes)"
  else
    fail "installed sightline screenshot $url failed: $(cat "$tmp/shot.log")"
  fi
else
  echo "# sightline has no screenshot command yet; skipped the headless screenshot"
fi

echo "1..$n"
exit $status
