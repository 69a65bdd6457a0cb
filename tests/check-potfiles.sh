#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Fails when a file under app/, src/ or data/ marks strings for translation but
# is missing from po/POTFILES.in, or when POTFILES.in lists a file that is gone.
# Usage: check-potfiles.sh SOURCE_ROOT
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"

listed=$(mktemp)
marked=$(mktemp)
trap 'rm -f "$listed" "$marked"' EXIT

grep -v -e '^#' -e '^[[:space:]]*$' po/POTFILES.in | sed 's/[[:space:]]*$//' | sort -u >"$listed"

has_messages() {
  # A grep hit may be a comment: xgettext, with the keywords of meson's glib
  # preset, says whether the file really marks a string.
  xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
    --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
    --omit-header -o - "$1" 2>/dev/null | grep -q '^msgid '
}

{
  # C: _("…"), N_("…"), C_("ctx", "…"), NC_(…), Q_(…), g_dgettext (GETTEXT_PACKAGE, …)
  grep -rlE --include='*.c' --include='*.h' \
    '(^|[^A-Za-z0-9_])(_|N_|C_|NC_|Q_)[[:space:]]*\(|g_d(n|p)?gettext[[:space:]]*\(' app src 2>/dev/null |
    grep -v -e '/js/' || true
  # GtkBuilder templates and menus
  grep -rlE --include='*.ui' 'translatable="?yes"?' app src 2>/dev/null || true
} | sed 's|^\./||' | sort -u | while read -r f; do
  if has_messages "$f"; then echo "$f"; fi
done >"$marked"
# data files that carry user-visible text
ls data/*.desktop.in data/*.metainfo.xml.in data/*.gschema.xml 2>/dev/null >>"$marked" || true
sort -u -o "$marked" "$marked"

status=0
missing=$(comm -23 "$marked" "$listed")
if [ -n "$missing" ]; then
  echo "These files mark strings for translation but are not in po/POTFILES.in:"
  echo "$missing" | sed 's/^/  /'
  echo "Add them to po/POTFILES.in (one path a line, sorted)."
  status=1
fi
while read -r f; do
  if [ ! -f "$f" ]; then
    echo "po/POTFILES.in lists $f, which does not exist."
    status=1
  fi
done <"$listed"

[ $status -eq 0 ] && echo "po/POTFILES.in lists all $(wc -l <"$marked") files with translatable strings."
exit $status
