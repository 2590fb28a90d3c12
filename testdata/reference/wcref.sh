#!/usr/bin/env bash
# wcref.sh: shared functions of the reference implementation of the
# worker-communication protocol (seed 004). Source it; do not run it.
#
# The reference is deliberately faithful to the seed, weaknesses included,
# so that wcomm can be benchmarked against it and tested for compatibility
# with it. Lines marked FRAGILE are seed behaviour that wcomm does better;
# do not "fix" them here.

# tmux_cmd runs tmux against REF_TMUX_SOCKET when it is set, so the scripts
# can drive a private server from outside any pane. Without it, plain tmux
# finds the server through $TMUX, as the seed does inside a pane.
tmux_cmd() {
  if [ -n "${REF_TMUX_SOCKET:-}" ]; then
    tmux -S "$REF_TMUX_SOCKET" "$@"
  else
    tmux "$@"
  fi
}

# find_agent_pane AGENT prints the id (%N) of the first pane in the current
# session that has a direct child process whose command line contains AGENT.
# This is the seed's algorithm line for line (section 2); only `tmux` became
# tmux_cmd.
#
# FRAGILE, all on purpose:
# - one `ps` of the whole process table per pane;
# - only direct children of the pane's first process are seen: an agent that
#   IS the pane's command (`tmux new-window codex`) is never found, nor one
#   started under a wrapper (bash -c '...; ...', npx, node);
# - `^\s*$pane_pid` is a prefix match on the PPID column: pane pid 12 also
#   matches a process whose parent is 123;
# - `grep -F` matches AGENT anywhere in the command line ("cat" matches
#   "concatenate", "codex" matches "vim codex-notes.md");
# - `grep -v grep` drops every process whose command line contains "grep";
# - outside a pane, `list-panes -s` without -t uses tmux's "best" session.
# shellcheck disable=SC2155,SC2009 # kept as the seed writes it
find_agent_pane() {
  local target_agent="$1"
  # -s: search all panes in the session (not just current window)
  local panes=$(tmux_cmd list-panes -s -F "#{pane_pid} #{pane_id}")

  while read -r pane_pid pane_id; do
    if ps -ax -o ppid,command | grep -v grep | grep -F -- "$target_agent" \
       | grep -q "^\s*$pane_pid"; then
      echo "$pane_id"
      return 0
    fi
  done <<< "$panes"

  return 1
}

# ref_die prints "PROGRAM: MESSAGE" to stderr and exits with status 1
# (or the status given as a second argument).
ref_die() {
  printf '%s: %s\n' "${0##*/}" "$1" >&2
  exit "${2:-1}"
}

# ref_timestamp prints the seed's STARTED_AT / id time format.
ref_timestamp() {
  date +%Y%m%d-%H%M%S
}

# ref_rand_hex4 prints 4 random lowercase hex digits, like the seed's
# `openssl rand -hex 2`; od is the fallback where openssl is missing.
ref_rand_hex4() {
  if command -v openssl >/dev/null 2>&1; then
    openssl rand -hex 2
  else
    od -An -N2 -tx1 /dev/urandom | tr -d ' \n'
    echo
  fi
}

# ref_new_id prints a message id: YYYYMMDD-HHMMSS-xxxx (seed section 4.4).
# FRAGILE: 16 random bits per second; two ids in one second collide with
# probability 1/65536.
ref_new_id() {
  printf '%s-%s\n' "$(ref_timestamp)" "$(ref_rand_hex4)"
}

# ref_pane_num strips the % of a pane id, as the seed's `tr -d '%'` does.
ref_pane_num() {
  echo "$1" | tr -d '%'
}

# ref_is_pane_id succeeds when $1 looks like a tmux pane id (%N).
ref_is_pane_id() {
  case "$1" in
    %*[!0-9]* | % | '') return 1 ;;
    %*) return 0 ;;
    *) return 1 ;;
  esac
}

# ref_parse_header LINE parses a "[WORKER key=value ...]" request header or a
# "[WORKER RESPONSE key=value ...]" response header into REF_H_KIND
# (request|response), REF_H_CAPABILITY, REF_H_ID, REF_H_STARTED_AT,
# REF_H_ORCHESTRATOR and REF_H_WORKER. Unknown key=value fields (wcomm adds
# e.g. bytes= and sha256=) are ignored. Fails on anything else.
# shellcheck disable=SC2034 # the REF_H_* variables are its results
ref_parse_header() {
  local line="$1" inner field fields
  REF_H_KIND='' REF_H_CAPABILITY='' REF_H_ID='' REF_H_STARTED_AT=''
  REF_H_ORCHESTRATOR='' REF_H_WORKER=''
  case "$line" in
    '[WORKER RESPONSE '*']') REF_H_KIND=response; inner="${line#\[WORKER RESPONSE }" ;;
    '[WORKER '*']') REF_H_KIND=request; inner="${line#\[WORKER }" ;;
    *) return 1 ;;
  esac
  inner="${inner%\]}"
  # read -a splits on blanks without glob expansion of the fields.
  read -r -a fields <<< "$inner"
  for field in "${fields[@]}"; do
    case "$field" in
      capability=*) REF_H_CAPABILITY="${field#*=}" ;;
      id=*) REF_H_ID="${field#*=}" ;;
      started_at=*) REF_H_STARTED_AT="${field#*=}" ;;
      orchestrator=*) REF_H_ORCHESTRATOR="${field#*=}" ;;
      worker=*) REF_H_WORKER="${field#*=}" ;;
      *=*) ;;
      *) return 1 ;;
    esac
  done
  [ -n "$REF_H_ID" ] && [ -n "$REF_H_STARTED_AT" ] &&
    ref_is_pane_id "$REF_H_ORCHESTRATOR" && ref_is_pane_id "$REF_H_WORKER"
}
