#!/usr/bin/env bash
# send.sh: the orchestrator side of seed 004 (section 5), as a script.
#
#   send.sh [--capability READONLY|WRITABLE] [--session-dir DIR] TARGET MESSAGE_FILE
#
# TARGET is a pane id (%N) or an agent name found with find_agent_pane.
# MESSAGE_FILE holds the request body ("-" reads stdin). Prints
# "session_dir=DIR" and "response_file=PATH" on success; pass DIR back with
# --session-dir to send further requests in the same session.
#
# Environment: REF_ROOT (default /tmp/worker-comm), REF_ORCHESTRATOR (own
# pane id; wins over $TMUX_PANE so a caller outside any pane, or inside a
# pane of another server, can name it), REF_TMUX_SOCKET, REF_ENTER_DELAY
# (default 0.2 seconds between paste and Enter).
set -u

SELF="${BASH_SOURCE[0]}"
# shellcheck source=SCRIPTDIR/wcref.sh
. "$(dirname -- "$SELF")/wcref.sh"

usage() {
  echo "usage: ${0##*/} [--capability READONLY|WRITABLE] [--session-dir DIR] TARGET MESSAGE_FILE" >&2
  exit 2
}

CAPABILITY=READONLY
SESSION_DIR=''
while [ $# -gt 0 ]; do
  case "$1" in
    --capability) [ $# -ge 2 ] || usage; CAPABILITY="$2"; shift 2 ;;
    --capability=*) CAPABILITY="${1#*=}"; shift ;;
    --session-dir) [ $# -ge 2 ] || usage; SESSION_DIR="$2"; shift 2 ;;
    --session-dir=*) SESSION_DIR="${1#*=}"; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -?*) echo "${0##*/}: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || usage
TARGET="$1"
MESSAGE_FILE="$2"

case "$CAPABILITY" in
  READONLY | WRITABLE) ;;
  *) ref_die "capability \"$CAPABILITY\" is neither READONLY nor WRITABLE; pass one of them to --capability" 2 ;;
esac

# Step 1: own pane. The seed reads $TMUX_PANE (display-message would return the
# focused pane, not ours).
ORCHESTRATOR="${REF_ORCHESTRATOR:-${TMUX_PANE:-}}"
ref_is_pane_id "$ORCHESTRATOR" ||
  ref_die "no own pane id: run inside a tmux pane or set REF_ORCHESTRATOR=%N" 2

# Step 2: target pane.
if ref_is_pane_id "$TARGET"; then
  WORKER="$TARGET"
elif [ "$TARGET" = @ ] && [ -n "${REF__AGENT_NAME:-}" ]; then
  AGENT="$REF__AGENT_NAME"
  unset REF__AGENT_NAME
  WORKER=$(find_agent_pane "$AGENT") ||
    ref_die "no pane in this session has a child process matching \"$AGENT\"; pass the pane id (%N) instead"
else
  case "$TARGET" in '' | @) usage ;; esac
  # Why re-exec: the seed runs find_agent_pane in the orchestrator's own
  # shell, where no child's command line holds the agent name (grep -v grep
  # hides the grep). Run as a script from a pane's shell, our own command
  # line ("bash send.sh codex ...") is such a child, and the seed's algorithm
  # would find the orchestrator's pane. Moving the name into the environment
  # restores the seed's conditions without touching its algorithm.
  args=(--capability "$CAPABILITY")
  [ -n "$SESSION_DIR" ] && args+=(--session-dir "$SESSION_DIR")
  REF__AGENT_NAME="$TARGET" exec "$BASH" "$SELF" "${args[@]}" -- @ "$MESSAGE_FILE"
fi

# Step 3: session directory and names (first time only; later requests pass
# the same directory back with --session-dir).
ORCH_NUM=$(ref_pane_num "$ORCHESTRATOR")
WORKER_NUM=$(ref_pane_num "$WORKER")
if [ -n "$SESSION_DIR" ]; then
  COMM_DIR="${SESSION_DIR%/}"
  base="${COMM_DIR##*/}"
  case "$base" in
    [0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]-o"$ORCH_NUM"-w"$WORKER_NUM") ;;
    *) ref_die "session dir \"$COMM_DIR\" is not named YYYYMMDD-HHMMSS-o$ORCH_NUM-w$WORKER_NUM; reuse the dir send.sh printed for this orchestrator and worker" 2 ;;
  esac
  STARTED_AT="${base:0:15}"
else
  STARTED_AT=$(ref_timestamp)
  # FRAGILE: two sessions of one pair started in the same second share a dir.
  COMM_DIR="${REF_ROOT:-/tmp/worker-comm}/${STARTED_AT}-o${ORCH_NUM}-w${WORKER_NUM}"
fi
# FRAGILE: default umask, so files are usually world-readable under /tmp, and
# a /tmp/worker-comm made by another user (or a symlink) is used as is.
mkdir -p "${COMM_DIR}" || ref_die "cannot create session dir \"$COMM_DIR\""
# FRAGILE: one buffer name per orchestrator/worker pair, shared by every
# request and by the worker's notification; concurrent senders overwrite it.
BUFFER_NAME="msg-o${ORCH_NUM}-w${WORKER_NUM}"

# Step 4: sequence number. FRAGILE: counting files is not a claim; two
# senders in one session (or a second request sent before the first answer
# was written) get the same or shifted numbers and overwrite each other.
# shellcheck disable=SC2012,SC2046 # the seed's own line, kept verbatim
SEQ=$(printf "%03d" $(( $(ls -1 "${COMM_DIR}"/*.md 2>/dev/null | wc -l) + 1 )))
REQ_FILE="${COMM_DIR}/${SEQ}-request.md"
# The seed writes $(( SEQ + 1 )). In zsh that is decimal; in bash "008" and
# "009" are invalid octal and the 5th request of a session fails. 10# keeps
# the seed's (zsh) meaning so long benchmark sessions keep working.
RESP_SEQ=$(printf "%03d" $(( 10#$SEQ + 1 )))
RESP_FILE="${COMM_DIR}/${RESP_SEQ}-response.md"

# Step 5: header, body and response instructions (sections 4.1 and 7).
ID=$(ref_new_id)
# $(cat) drops the body's trailing newlines; the heredoc then ends the body
# with exactly one, like a body typed into the seed's heredoc.
BODY=$(cat -- "$MESSAGE_FILE") || ref_die "cannot read message file \"$MESSAGE_FILE\""

# Step 6: write the request. FRAGILE: not atomic (a reader can see a partial
# file), and a path holding " or $ breaks the shell command below.
cat > "${REQ_FILE}" << EOF || ref_die "cannot write request file \"$REQ_FILE\""
[WORKER capability=${CAPABILITY} id=${ID} started_at=${STARTED_AT} orchestrator=${ORCHESTRATOR} worker=${WORKER}]
${BODY}

[RESPONSE INSTRUCTIONS]
Response file: ${RESP_FILE}
Notify via:
tmux load-buffer -b "${BUFFER_NAME}" - <<< "[RESPONSE started_at=${STARTED_AT} orchestrator=${ORCHESTRATOR} worker=${WORKER}] ${RESP_FILE}" && tmux paste-buffer -b "${BUFFER_NAME}" -t ${ORCHESTRATOR} && sleep 0.2 && tmux send-keys -t ${ORCHESTRATOR} Enter
EOF

# Step 7: deliver. FRAGILE: the content is pasted as typed keys with no
# control-character filtering (an ESC[201~ or ^C in the body reaches the
# app), no bracketed paste (-p), no check that the pane is alive (pasting
# into a dead pane crashes a tmux 3.3a server), no lock per pane, and the
# buffer is left behind (no -d). A fixed delay before Enter is a guess.
if ! { tmux_cmd load-buffer -b "$BUFFER_NAME" "$REQ_FILE" &&
  tmux_cmd paste-buffer -b "$BUFFER_NAME" -t "$WORKER" &&
  sleep "${REF_ENTER_DELAY:-0.2}" &&
  tmux_cmd send-keys -t "$WORKER" Enter; }; then
  ref_die "delivery to pane $WORKER failed (see tmux's message above); the request stays in \"$REQ_FILE\""
fi

printf 'session_dir=%s\n' "$COMM_DIR"
printf 'response_file=%s\n' "$RESP_FILE"
