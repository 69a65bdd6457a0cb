#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The man page formats without warnings and documents every command and exit
# status the program has; the bash completion completes every command and the
# flags each command's --help lists.
# Usage: check-docs.sh SOURCE_ROOT SIGHTLINE_BIN
set -u
root=$1
bin=$2
man=$root/data/sightline.1
status=0
fail() { echo "not ok - $*"; status=1; }
pass() { echo "ok - $*"; }

# 1. The man page is well-formed roff.
if warnings=$(groff -man -ww -z -K utf8 "$man" 2>&1) && [ -z "$warnings" ]; then
  pass "groff formats sightline.1 without warnings"
else
  fail "groff warns about sightline.1: $warnings"
fi

commands=$(LC_ALL=C LANGUAGE= "$bin" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$commands" ] || fail "sightline --help lists no command"
man_text=$(<"$man")
exit_section=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$man")

# Each command's --help, captured once: the real program is slow to start on a
# busy machine, so the completion below is driven against a stand-in that
# replays these captured outputs (the completion's own parsing still runs).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/help"
LC_ALL=C LANGUAGE= "$bin" --help >"$tmp/help/_"
declare -A flags_of
for cmd in $commands; do
  LC_ALL=C LANGUAGE= "$bin" "$cmd" --help >"$tmp/help/$cmd" 2>/dev/null &
done
wait
for cmd in $commands; do
  # “--[no-]flag” stands for both --flag and --no-flag.
  flags_of[$cmd]=$(sed 's/--\[no-\]\([a-z0-9-]*\)/--\1 --no-\1/g' "$tmp/help/$cmd" |
                   grep -oE -- '(^|[[:space:],])--[a-z][a-z0-9-]*' |
                   grep -oE -- '--[a-z0-9-]+' | grep -v -e '^--help-' | sort -u)
done
cat >"$tmp/sightline" <<STANDIN
#!/bin/sh
if [ "\$1" = --help ]; then cat "$tmp/help/_"; elif [ "\$2" = --help ]; then cat "$tmp/help/\$1"; fi
STANDIN
chmod +x "$tmp/sightline"

# 2. Every command has its own subsection, and every exit status is described.
for cmd in $commands; do
  roff=${cmd//-/\\\\-}
  if grep -qE "^\.SS \"?$roff( |\"|\$)" <<<"$man_text"; then
    pass "sightline.1 documents $cmd"
  else
    fail "sightline.1 has no “.SS $cmd” section: document the command in data/sightline.1"
  fi
done
for code in 0 1 2 3 4 5 70; do
  [[ $'\n'$exit_section$'\n' == *$'\n'".B $code"$'\n'* ]] ||
    fail "sightline.1 does not describe exit status $code"
done
for name in ACTION_FAILED ASSERTION_FAILED AUTH_CREDENTIAL_UNAVAILABLE ENVIRONMENT_UNAVAILABLE \
            SEED_DATA_MISSING TEST_SETUP_FAILED AUTOMATION_UNSUPPORTED STEP_BUDGET_EXHAUSTED \
            STEP_TIMEOUT INVALID_ARGUMENT UNSUPPORTED_CAPABILITY MODEL_OUTPUT_INVALID \
            MODEL_UNAVAILABLE POLICY_DENIED; do
  [[ $exit_section == *"$name"* ]] || fail "sightline.1 does not name the error code $name"
done
[ "$status" -eq 0 ] && pass "sightline.1 describes every exit status and error code"

# 3. Flags: the man page's section of each command names exactly the flags its
# --help lists. A difference is reported, not fatal: commands grow flags all
# the time and the man page is refreshed with them.
section_of() {
  # The text from “.SS CMD” to the next .SS or .SH after some body text, so
  # that stacked headings (act, assert, wait-for, extract) share one body.
  awk -v cmd="$1" '
    /^\.S[SH] / { if (on && body) exit }
    /^\.SS / { h = $2; gsub(/\\/, "", h); gsub(/"/, "", h); if (h == cmd) on = 1 }
    on { print; if ($0 !~ /^\.(SS|PD)/) body = 1 }' "$man"
}
drift=""
for cmd in $commands; do
  section=$(section_of "$cmd" | sed 's/\\-/-/g')
  documented=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$section" | sort -u)
  has=$'\n'${flags_of[$cmd]}$'\n'
  for flag in ${flags_of[$cmd]}; do
    [ "$flag" = --help ] && continue
    [[ $'\n'$documented$'\n' == *$'\n'$flag$'\n'* ]] || drift="$drift $cmd:$flag(undocumented)"
  done
  for flag in $documented; do
    [[ $flag == --help || $flag == --version ]] && continue
    [[ $has == *$'\n'$flag$'\n'* || $has == *$'\n'--${flag#--no-}$'\n'* ]] ||
      drift="$drift $cmd:$flag(not-a-flag)"
  done
done
if [ -n "$drift" ]; then
  echo "# sightline.1 and the commands' --help differ:$drift"
else
  pass "sightline.1 documents exactly the flags of every command"
fi

# 4. The completion, driven as bash drives it: one shell per mode answers every
# query in turn, so its caches work as in a person's session.
has_screenshot=$(printf '%s\n' $commands | grep -x screenshot)
words() { [ -z "$1" ] || printf '%s\n' $1 | sort -u | tr '\n' ' '; }
run_queries() {
  # $1: a bash-completion script to load first, or nothing; then the queries
  bash --norc --noprofile -c '
    source "$1"
    [ -n "$2" ] && source "$2"
    bin=$3; shift 3
    for query in "$@"; do
      COMP_LINE="$bin $query"; COMP_POINT=${#COMP_LINE}
      read -r -a COMP_WORDS <<<"$COMP_LINE"
      [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      COMPREPLY=()
      _sightline
      printf "%s\n" "${COMPREPLY[@]}"
      echo "<end>"
    done' bash "$root/data/sightline.bash" "$@" 2>&1 |
    awk '/^<end>$/ { print line; line = ""; next } $0 != "" { line = line $0 " " }' |
    while read -r line; do words "$line"; echo; done
}
expect_answer() {
  # $1 label, $2 answer, $3 expected
  [ "$2" = "$3" ] && pass "$1" || fail "$1: got “$2”, expected “$3”"
}

# Without bash-completion only the word splitting differs: the command list and
# --flag=value.
queries=("")
[ -n "$has_screenshot" ] && queries+=("screenshot --format=j")
mapfile -t answers < <(run_queries "" "$tmp/sightline" "${queries[@]}")
expect_answer "[plain] “sightline ” completes to the commands" "${answers[0]}" "$(words "$commands help")"
[ -n "$has_screenshot" ] &&
  expect_answer "[plain] “screenshot --format=j” completes to jpeg" "${answers[1]}" "jpeg "

# Under the bash-completion package, whose _init_completion the script uses,
# everything; without the package installed, the same in a plain shell.
mode=plain script=""
if [ -f /usr/share/bash-completion/bash_completion ]; then
  mode=bash-completion script=/usr/share/bash-completion/bash_completion
fi
queries=("" "--ver")
for cmd in $commands; do queries+=("$cmd --"); done
[ -n "$has_screenshot" ] && queries+=("screenshot http://127.0.0.1/ --format " "screenshot --format=j")
mapfile -t answers < <(run_queries "$script" "$tmp/sightline" "${queries[@]}")
[ "${#answers[@]}" -eq "${#queries[@]}" ] ||
  fail "[$mode] the completion answered ${#answers[@]} of ${#queries[@]} queries: ${answers[*]}"
expect_answer "[$mode] “sightline ” completes to the $(echo $commands | wc -w) commands and help" \
  "${answers[0]}" "$(words "$commands help")"
expect_answer "[$mode] “sightline --ver” completes to --version" "${answers[1]}" "--version "
k=2
for cmd in $commands; do
  expect_answer "[$mode] “sightline $cmd --” completes its $(echo ${flags_of[$cmd]} | wc -w) flags" \
    "${answers[k]}" "$(words "${flags_of[$cmd]}")"
  k=$((k + 1))
done
if [ -n "$has_screenshot" ]; then
  expect_answer "[$mode] “screenshot --format ” completes the formats" "${answers[k]}" "$(words "png jpeg webp")"
  expect_answer "[$mode] “screenshot --format=j” completes to jpeg" "${answers[k + 1]}" "jpeg "
fi
exit $status
