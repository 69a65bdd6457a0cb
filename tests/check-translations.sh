#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Every language in po/LINGUAS is complete (no untranslated or fuzzy message,
# formats consistent), and the built catalogs are used at run time:
# `LANGUAGE=de sightline --help` prints German.
# Usage: check-translations.sh SOURCE_ROOT SIGHTLINE_BIN LOCALEDIR
set -eu
root=$1
bin=$2
localedir=$3
status=0
n=0

for lang in $(grep -v '^#' "$root/po/LINGUAS"); do
  n=$((n + 1))
  po="$root/po/$lang.po"
  if ! stats=$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$po" 2>&1); then
    echo "not ok - $lang.po does not compile: $stats"
    status=1
    continue
  fi
  case $stats in
    *untranslated* | *fuzzy*)
      echo "not ok - $lang.po is incomplete: $stats"
      echo "  Run: meson compile -C _build sightline-update-po, then translate every empty or fuzzy entry."
      status=1 ;;
    *)
      echo "ok - $lang.po: $stats" ;;
  esac
  if [ ! -f "$localedir/$lang/LC_MESSAGES/sightline.mo" ]; then
    echo "not ok - $localedir/$lang/LC_MESSAGES/sightline.mo was not built"
    status=1
  fi
done
[ "$n" -ge 2 ] || { echo "not ok - po/LINGUAS lists $n languages; de and fr are expected"; status=1; }

# Strings added to the sources since the last sightline-update-po are reported,
# not failed: the catalogs are refreshed in batches.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v -e '^#' -e '^[[:space:]]*$' "$root/po/POTFILES.in" >"$tmp/files"
if (cd "$root" && xgettext --from-code=UTF-8 --add-comments --keyword=_ --keyword=N_ \
      --keyword=C_:1c,2 --keyword=NC_:1c,2 --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 \
      --keyword=g_dpgettext2:2c,3 -f "$tmp/files" -o "$tmp/sources.pot" 2>/dev/null); then
  for lang in $(grep -v '^#' "$root/po/LINGUAS"); do
    msgmerge --quiet --no-fuzzy-matching -o "$tmp/$lang.po" "$root/po/$lang.po" "$tmp/sources.pot" &&
      pending=$(LC_ALL=C msgfmt --statistics -o /dev/null "$tmp/$lang.po" 2>&1) &&
      case $pending in
        *untranslated*) echo "# $lang: the sources have strings $lang.po lacks ($pending); run sightline-update-po" ;;
      esac
  done
fi

# The run-time check: the same --help in English, German and French.
english=$(LC_ALL=C.UTF-8 LANGUAGE= SIGHTLINE_LOCALEDIR="$localedir" "$bin" --help)
german=$(LC_ALL=C.UTF-8 LANGUAGE=de SIGHTLINE_LOCALEDIR="$localedir" "$bin" --help)
french=$(LC_ALL=C.UTF-8 LANGUAGE=fr SIGHTLINE_LOCALEDIR="$localedir" "$bin" --help)
expect() {
  # $1 label, $2 text, $3 expected line
  if printf '%s\n' "$2" | grep -qxF "$3"; then
    echo "ok - $1 --help shows “$3”"
  else
    echo "not ok - $1 --help lacks “$3”:"
    printf '%s\n' "$2" | sed 's/^/  | /'
    status=1
  fi
}
expect English "$english" "Commands:"
expect German "$german" "Befehle:"
expect German "$german" "Aufruf:"
expect French "$french" "$(printf 'Commandes\302\240:')"
# Every command's summary is translated too, not only the frame around them.
if [ "$(printf '%s\n' "$english" | sed -n '/^  [a-z]/p' | sed 's/^  //' | sort)" = \
     "$(printf '%s\n' "$german" | sed -n '/^  [a-z]/p' | sed 's/^  //' | sort)" ]; then
  echo "not ok - the German command list is identical to the English one"
  status=1
fi
exit $status
