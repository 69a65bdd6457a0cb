#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The README's Install section, run as written in a fresh clone (issue #20):
# the commands of its first sh block, the install staged with --destdir; then
# the staged sightline runs. CI runs it (.ci/run) before the test suites.
#
# Usage: test-readme-install.sh SOURCE_ROOT  (TAP output; the clone is of HEAD)
set -u
src=$(cd "${1:-.}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sightline-readme-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
status=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; status=1; }

if ! git clone -q --no-hardlinks "$src" "$tmp/clone" 2>"$tmp/clone.log"; then
  fail "git clone $src: $(cat "$tmp/clone.log")"
  echo "1..$n"
  exit 1
fi
pass "a fresh clone of $(git -C "$tmp/clone" rev-parse --short HEAD)"
[ ! -e "$tmp/clone/src/runner/js/node_modules" ] && pass "the clone has no page libraries yet" ||
  fail "the clone already has src/runner/js/node_modules"

# The first ```sh block after "## Install", comments dropped.
sed -n '/^## Install/,/^## /p' "$tmp/clone/README.md" |
  sed -n '/^```sh/,/^```$/p' | sed '1d;/^```/,$d' | sed 's/[[:space:]]*#.*$//' |
  grep -v '^[[:space:]]*$' >"$tmp/commands"
[ -s "$tmp/commands" ] && pass "the Install section has $(wc -l <"$tmp/commands") commands" ||
  fail "no sh block under ## Install in README.md"

dest=$tmp/root
while IFS= read -r line; do
  case $line in
    "meson install"*) line="$line --destdir $dest" ;;
  esac
  started=$(date +%s)
  if (cd "$tmp/clone" && sh -c "$line") >"$tmp/step.log" 2>&1; then
    pass "$line ($(($(date +%s) - started)) s)"
  else
    fail "$line: $(tail -n 15 "$tmp/step.log" | sed 's/^/# /')"
    break
  fi
done <"$tmp/commands"

bin=$(find "$dest" -path '*/bin/sightline' -type f 2>/dev/null | head -n 1)
if [ -n "$bin" ] && out=$("$bin" --version 2>&1); then
  pass "the staged sightline runs: $out"
else
  fail "no staged sightline that runs under $dest"
fi
echo "1..$n"
exit $status
