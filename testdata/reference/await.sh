#!/usr/bin/env bash
# await.sh: what an orchestrator following seed 004 does between sending and
# reading (section 5, steps 8-10), as a script.
#
#   await.sh RESPONSE_FILE [TIMEOUT_SECONDS]
#
# The seed waits for the "[RESPONSE ...] PATH" line to be typed into its pane;
# a script cannot read its own pane's input, so it polls for the file every
# 0.05 s instead (no slower than an agent noticing the line). Prints the file
# once it exists and is non-empty, then deletes the pair's buffer (step 10)
# when a tmux server is known ($TMUX or REF_TMUX_SOCKET).
# TIMEOUT_SECONDS (default 300, fractions allowed) ends the wait with exit 3.
#
# Environment: REF_TMUX_SOCKET, REF_AWAIT_POLL (default 0.05 seconds).
set -u

# shellcheck source=SCRIPTDIR/wcref.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/wcref.sh"

usage() {
  echo "usage: ${0##*/} RESPONSE_FILE [TIMEOUT_SECONDS]" >&2
  exit 2
}

case $# in 1 | 2) ;; *) usage ;; esac
RESP_FILE="$1"
TIMEOUT="${2:-300}"

# to_micros prints a non-negative decimal number of seconds in microseconds.
to_micros() {
  local int="${1%%.*}" frac=''
  case "$1" in *.*) frac="${1#*.}" ;; esac
  case "${int:-0}$frac" in '' | *[!0-9]*) return 1 ;; esac
  frac="${frac}000000"
  echo $(( 10#${int:-0} * 1000000 + 10#${frac:0:6} ))
}

# now_micros prints the wall clock in microseconds (bash 5 EPOCHREALTIME,
# whose decimal point follows the locale).
now_micros() {
  local t="$EPOCHREALTIME"
  echo $(( 10#${t%[.,]*} * 1000000 + 10#${t#*[.,]} ))
}

TIMEOUT_US=$(to_micros "$TIMEOUT") ||
  ref_die "timeout \"$TIMEOUT\" is not a number of seconds" 2
DEADLINE=$(( $(now_micros) + TIMEOUT_US ))

# FRAGILE (with respond.sh): the response is written in place, so "non-empty"
# can still be a partial file for a large body; the seed avoids that only
# because the notification comes after the write.
until [ -s "$RESP_FILE" ]; do
  if [ "$(now_micros)" -ge "$DEADLINE" ]; then
    echo "${0##*/}: no response in \"$RESP_FILE\" after ${TIMEOUT}s; check the worker's pane, then wait again" >&2
    exit 3
  fi
  sleep "${REF_AWAIT_POLL:-0.05}"
done

cat -- "$RESP_FILE" || ref_die "cannot read response file \"$RESP_FILE\""

# Step 10: delete the pair's buffer; the files stay for history. The name
# comes from the session dir (…-o{N}-w{M}). Only with a known server: plain
# tmux outside any pane would touch the user's default server. FRAGILE: the
# name is shared, so this can delete a buffer another request is using.
if [ -n "${REF_TMUX_SOCKET:-}" ] || [ -n "${TMUX:-}" ]; then
  dir="$(dirname -- "$RESP_FILE")"
  pair="${dir##*-o}"
  case "$pair" in
    *[!0-9w-]*) ;;
    [0-9]*-w[0-9]*) tmux_cmd delete-buffer -b "msg-o${pair}" 2>/dev/null || true ;;
  esac
fi
exit 0
