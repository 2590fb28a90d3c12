#!/usr/bin/env bash
# respond.sh: the worker side of seed 004 (section 6), as a script.
#
#   respond.sh REQUEST_FILE BODY_FILE
#
# Reads the request's header and its RESPONSE INSTRUCTIONS, writes the
# response file, then pastes "[RESPONSE ...] PATH" into the orchestrator's
# pane. BODY_FILE holds the response body ("-" reads stdin). Prints
# "response_file=PATH" on success.
#
# Works for requests written by send.sh and by wcomm: extra key=value fields
# at the end of the header are ignored, and the path is taken from the
# "Response file:" line wherever it sits in the instructions block.
#
# Environment: REF_TMUX_SOCKET, REF_ENTER_DELAY (default 0.2 seconds).
set -u

# shellcheck source=SCRIPTDIR/wcref.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/wcref.sh"

usage() {
  echo "usage: ${0##*/} REQUEST_FILE BODY_FILE" >&2
  exit 2
}

[ $# -eq 2 ] || usage
REQUEST_FILE="$1"
BODY_FILE="$2"

# Step 1: what the request says.
IFS= read -r HEADER < "$REQUEST_FILE" ||
  ref_die "cannot read the first line of request file \"$REQUEST_FILE\""
if ! ref_parse_header "$HEADER" || [ "$REF_H_KIND" != request ]; then
  ref_die "$REQUEST_FILE:1: not a request header \"[WORKER capability=... id=... started_at=... orchestrator=%N worker=%M]\""
fi
ID="$REF_H_ID"
STARTED_AT="$REF_H_STARTED_AT"
ORCH_PANE="$REF_H_ORCHESTRATOR"
WORKER_PANE="$REF_H_WORKER"

# The last [RESPONSE INSTRUCTIONS] block counts: a body may quote an older
# request, instructions included. Within it, the first "Response file:" line
# gives the path and the seed's notify command gives the buffer name.
INSTRUCTIONS=$(awk '
  $0 == "[RESPONSE INSTRUCTIONS]" { inblk = 1; path = ""; buf = ""; next }
  inblk && path == "" && index($0, "Response file: ") == 1 { path = substr($0, 16) }
  inblk && buf == "" && index($0, "tmux load-buffer -b \"") == 1 {
    rest = substr($0, 22); n = index(rest, "\""); if (n > 1) buf = substr(rest, 1, n - 1)
  }
  END { if (path == "") exit 1; print path; print buf }
' "$REQUEST_FILE") ||
  ref_die "$REQUEST_FILE: no \"Response file: PATH\" line after \"[RESPONSE INSTRUCTIONS]\"; ask the orchestrator to resend"
RESP_FILE="${INSTRUCTIONS%%$'\n'*}"
BUFFER_NAME="${INSTRUCTIONS#*$'\n'}"
case "$BUFFER_NAME" in
  '' | *[!A-Za-z0-9_.-]*)
    # wcomm's instructions need not carry the seed's notify command; fall
    # back to the seed's naming rule.
    BUFFER_NAME="msg-o$(ref_pane_num "$ORCH_PANE")-w$(ref_pane_num "$WORKER_PANE")" ;;
esac

# Step 2 (processing) is the caller's: the body is given.
BODY=$(cat -- "$BODY_FILE") || ref_die "cannot read body file \"$BODY_FILE\""

# Step 3: write the response. FRAGILE: `cat >` truncates then writes in
# place, so a reader polling for the file can see it empty or half written;
# the response id is the request's, the only link between the two.
cat > "${RESP_FILE}" << EOF || ref_die "cannot write response file \"$RESP_FILE\""
[WORKER RESPONSE id=${ID} started_at=${STARTED_AT} orchestrator=${ORCH_PANE} worker=${WORKER_PANE}]
${BODY}
EOF

# Step 4: notify, path only (seed 6.4). FRAGILE: the here-string adds a
# newline, which the paste turns into Enter, so the orchestrator gets the
# line submitted and then a second, empty Enter; the buffer name is the one
# the orchestrator uses for requests; the pane is not checked to be alive.
if ! { tmux_cmd load-buffer -b "${BUFFER_NAME}" - <<< "[RESPONSE started_at=${STARTED_AT} orchestrator=${ORCH_PANE} worker=${WORKER_PANE}] ${RESP_FILE}" &&
  tmux_cmd paste-buffer -b "${BUFFER_NAME}" -t "${ORCH_PANE}" &&
  sleep "${REF_ENTER_DELAY:-0.2}" &&
  tmux_cmd send-keys -t "${ORCH_PANE}" Enter; }; then
  ref_die "notifying pane $ORCH_PANE failed (see tmux's message above); the response is in \"$RESP_FILE\""
fi

printf 'response_file=%s\n' "$RESP_FILE"
