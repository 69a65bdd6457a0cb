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

# Each command's flags, as its --help lists them (which needs no display).
declare -A flags_of
for cmd in $commands; do
  flags_of[$cmd]=$(LC_ALL=C LANGUAGE= "$bin" "$cmd" --help 2>/dev/null |
                   grep -oE -- '(^|[[:space:],])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' |
                   grep -v -e '^--help-' | sort -u)
done

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

# 3. Flags: each flag a command's --help lists should be in the man page. A missing
# one is reported, not fatal: commands grow flags all the time and the man page
# is refreshed with them.
undocumented=""
for cmd in $commands; do
  for flag in ${flags_of[$cmd]}; do
    [ "$flag" = --help ] && continue
    [[ $man_text == *"${flag//-/\\-}"* ]] || undocumented="$undocumented $cmd:$flag"
  done
done
if [ -n "$undocumented" ]; then
  echo "# flags not yet in sightline.1:$undocumented"
else
  pass "sightline.1 names every flag of every command"
fi

# 4. The completion, driven as bash drives it.
complete_line() {
  # $@: the words typed so far, the last one being completed
  bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    [ -n "$BASH_COMPLETION_SCRIPT" ] && source "$BASH_COMPLETION_SCRIPT"
    _sightline
    printf "%s\n" "${COMPREPLY[@]}"' bash "$root/data/sightline.bash" "$@" 2>&1
}
# Both as a plain bash runs it and under the bash-completion package, whose
# _init_completion the script uses when it is there.
modes=plain
[ -f /usr/share/bash-completion/bash_completion ] && modes="$modes bash-completion"
for mode in $modes; do
  BASH_COMPLETION_SCRIPT=""
  [ "$mode" = bash-completion ] && BASH_COMPLETION_SCRIPT=/usr/share/bash-completion/bash_completion
  export BASH_COMPLETION_SCRIPT
  got=$(complete_line "$bin" "")
  lacking=""
  for cmd in $commands; do
    printf '%s\n' "$got" | grep -qx -- "$cmd" || lacking="$lacking $cmd"
  done
  [ -z "$lacking" ] && pass "[$mode] completing “sightline ” offers all $(echo $commands | wc -w) commands" ||
    fail "[$mode] completing “sightline ” lacks$lacking (got: $(echo $got))"
  got=$(complete_line "$bin" "--ver")
  [ "$got" = "--version" ] && pass "[$mode] “sightline --ver” completes to --version" ||
    fail "[$mode] “sightline --ver” completed to “$got”"

  # Each command's flags once, in the last mode (each completion runs `CMD --help`).
  [ "$mode" = "${modes##* }" ] && for cmd in $commands; do
    got=$(complete_line "$bin" "$cmd" "--" | sort -u)
    if [ "$got" = "${flags_of[$cmd]}" ]; then
      pass "[$mode] “sightline $cmd --” completes its $(echo ${flags_of[$cmd]} | wc -w) flags"
    else
      fail "[$mode] “sightline $cmd --” completed to [$(echo $got)], expected [$(echo ${flags_of[$cmd]})]"
    fi
  done
  if printf '%s\n' $commands | grep -qx screenshot; then
    got=$(complete_line "$bin" screenshot http://127.0.0.1/ --format "" | tr '\n' ' ')
    [ "$got" = "png jpeg webp " ] && pass "[$mode] screenshot --format completes its formats" ||
      fail "[$mode] screenshot --format completed to “$got”"
    got=$(complete_line "$bin" screenshot --format=j | tr '\n' ' ')
    [ "$got" = "jpeg " ] && pass "[$mode] screenshot --format=j completes to jpeg" ||
      fail "[$mode] screenshot --format=j completed to “$got”"
  fi
done
exit $status
