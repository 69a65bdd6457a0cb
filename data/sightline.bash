# SPDX-License-Identifier: GPL-3.0-or-later
# bash completion for sightline(1).
#
# Commands and flags come from the program itself (`sightline --help` and
# `sightline COMMAND --help`, which need no display), so the completion never
# falls behind the command table; values of the enumerated flags are listed here.

_sightline_help()
{
  LC_ALL=C LANGUAGE= "$@" --help 2>/dev/null
}

_sightline_commands()
{
  local bin=$1
  if [[ -z ${_sightline_cache_commands-} ]]; then
    _sightline_cache_commands=$(_sightline_help "$bin" |
      sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
  fi
  printf '%s\n' "$_sightline_cache_commands" help
}

_sightline_flags()
{
  local bin=$1 cmd=$2 key
  key=_sightline_cache_flags_${cmd//-/_}
  if [[ -z ${!key-} ]]; then
    # “--[no-]flag” stands for both --flag and --no-flag.
    printf -v "$key" '%s' "$(_sightline_help "$bin" "$cmd" |
      sed 's/--\[no-\]\([a-z0-9-]*\)/--\1 --no-\1/g' |
      grep -oE -- '(^|[[:space:],])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' |
      grep -v -e '^--help-' | sort -u)"
  fi
  printf '%s\n' "${!key}"
}

_sightline_values()
{
  # $1 command, $2 flag: the values the flag takes, or nothing
  case $2 in
    --format)
      case $1 in
        screenshot) echo png jpeg webp ;;
        scrape) echo html cleaned_html markdown readability ;;
        report) echo html json junit ;;
        snapshot) echo text json ;;
      esac ;;
    --content) echo html cleaned_html markdown readability ;;
    --paper) echo A4 Letter Legal ;;
    --vision) echo false true only ;;
    --to) echo playwright e2e ;;
    --wait-until) echo domcontentloaded load networkidle ;;
    --scope) echo host subdomains ;;
    --verdict) echo pass fail error running interrupted ;;
  esac
}

_sightline()
{
  local cur prev words cword
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n = || return
  else
    # Without bash-completion: split the line at blanks only, so that
    # --flag=value stays one word as with `_init_completion -n =`.
    local line=${COMP_LINE:0:COMP_POINT}
    read -r -a words <<<"$line"
    [[ $line == *[[:space:]] || ${#words[@]} -eq 0 ]] && words+=("")
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=${words[cword - 1]}
  fi

  local bin=${words[0]} cmd="" i
  [[ $bin == */* ]] || bin=$(type -P "$bin") || return
  for ((i = 1; i < cword; i++)); do
    if [[ ${words[i]} != -* ]]; then
      cmd=${words[i]}
      break
    fi
  done

  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W '--help --version' -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$(_sightline_commands "$bin")" -- "$cur")
    fi
    return
  fi

  # --flag=value
  if [[ $cur == --*=* ]]; then
    local flag=${cur%%=*} value=${cur#*=}
    mapfile -t COMPREPLY < <(compgen -W "$(_sightline_values "$cmd" "$flag")" -- "$value")
    return
  fi

  case $prev in
    --output | --report | --junit | --schema | --port-file)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return ;;
    --*)
      local values
      values=$(_sightline_values "$cmd" "$prev")
      if [[ -n $values ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
        return
      fi ;;
  esac

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_sightline_flags "$bin" "$cmd")" -- "$cur")
    return
  fi

  case $cmd in
    run | export | merge-reports)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
  esac
} &&
  complete -F _sightline sightline
