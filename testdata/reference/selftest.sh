#!/usr/bin/env bash
# selftest.sh: checks the reference scripts against a private tmux server
# (its own -S socket in a temp dir, killed at the end). Exits non-zero when
# any check fails. Needs tmux, ps and bash 5.
#
#   testdata/reference/selftest.sh [-v]
set -u

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
VERBOSE=0
[ "${1:-}" = -v ] && VERBOSE=1

# The scripts must not see a caller's settings or a surrounding tmux.
unset REF_ORCHESTRATOR REF_TMUX_SOCKET REF_ROOT TMUX TMUX_PANE

command -v tmux >/dev/null || { echo "selftest: tmux is not installed" >&2; exit 1; }

T="$(mktemp -d /tmp/wcref-XXXXXX)" || exit 1
SOCK="$T/s"
tm() { tmux -S "$SOCK" "$@"; }
cleanup() {
  tm kill-server 2>/dev/null
  rm -rf -- "$T"
}
trap cleanup EXIT

FAILS=0
ok() { [ "$VERBOSE" = 1 ] && echo "ok   $*"; return 0; }
fail() { echo "FAIL $*" >&2; FAILS=$((FAILS + 1)); }
check() { # check NAME CMD...: pass when CMD succeeds
  local name="$1"; shift
  if "$@"; then ok "$name"; else fail "$name"; fi
}
# poll CMD...: retry CMD every 0.05 s for up to 10 s
poll() {
  for _ in $(seq 200); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}
q() { printf '%q' "$1"; }
# in_orch CMD: type CMD into the orchestrator's shell and wait for it to end;
# its stdout, stderr and status land in $T/NAME.{out,err,rc}.
in_orch() {
  local name="$1" cmd="$2"
  tm send-keys -t "$ORCH" -l -- "$cmd > $T/$name.out 2> $T/$name.err; echo \$? > $T/$name.rc"
  tm send-keys -t "$ORCH" Enter
  poll test -s "$T/$name.rc" || { fail "$name: command did not finish in the orchestrator pane"; return 1; }
}
kv() { sed -n "s/^$1=//p" "$2"; }
pane_has() { tm capture-pane -p -J -S -200 -t "$1" | grep -qF -- "$2"; }
same_file() { cmp -s "$1" "$2"; }
not() { ! "$@"; }
no_buffer() { ! tm show-buffer -b "$1" > /dev/null 2>&1; }

# --- private server: orchestrator (bash), worker w1 (cat), w2 (bash that
# will run a cat named fake-agent), w3 (an agent that is the pane command)
export REF_ROOT="$T/comm"
SHELL_CMD="env PS1='$ ' bash --norc --noprofile -i"
tm new-session -d -s ref -x 250 -y 50 -n orch "$SHELL_CMD" || { echo "selftest: cannot start tmux" >&2; exit 1; }
ORCH="$(tm display-message -p -t ref:orch '#{pane_id}')"
W1="$(tm new-window -d -P -F '#{pane_id}' -t ref -n w1 "cat > $(q "$T/w1.out")")"
W2="$(tm new-window -d -P -F '#{pane_id}' -t ref -n w2 "$SHELL_CMD")"
tm new-window -d -t ref -n w3 "bash -c 'exec -a fake-direct sleep 1000'"
# "exec -a" in the interactive shell would make the pane's own process the
# agent; run it in a child instead, as an agent started from a prompt is.
tm send-keys -t "$W2" -l -- "bash -c $(q "exec -a fake-agent cat > $(q "$T/w2.out")")"
tm send-keys -t "$W2" Enter
fake_agent_up() { pgrep -fx fake-agent > /dev/null; }
check "fake-agent started in $W2" poll fake_agent_up
ORCH_NUM="${ORCH#%}"
W1_NUM="${W1#%}"
W2_NUM="${W2#%}"
poll pane_has "$ORCH" '$' || fail "orchestrator shell shows no prompt"

# --- find_agent_pane, from outside any pane
fap() { (export REF_TMUX_SOCKET="$SOCK"; . "$HERE/wcref.sh"; find_agent_pane "$1"); }
check "find_agent_pane fake-agent = $W2" test "$(fap fake-agent)" = "$W2"
# The seed only looks at direct children of a pane's first process.
check "find_agent_pane misses an agent that is the pane command" not fap fake-direct
check "find_agent_pane fails for an unknown name" not fap no-such-agent-zz9

# --- send.sh by pane id, typed into the orchestrator pane
# Shell-looking text must arrive literally.
# shellcheck disable=SC2016
LINE1='Investigate the login bug: $HOME `id` "quoted" back\slash.'
printf '%s\n' "$LINE1" 'Report back.' '' > "$T/msg1.md"
in_orch send1 "bash $(q "$HERE/send.sh") --capability WRITABLE $W1 $(q "$T/msg1.md")"
check "send1 exit 0" test "$(cat "$T/send1.rc")" = 0
[ -s "$T/send1.err" ] && fail "send1 stderr: $(cat "$T/send1.err")"
S1="$(kv session_dir "$T/send1.out")"
R1="$(kv response_file "$T/send1.out")"
check "send1 prints exactly two lines" test "$(wc -l < "$T/send1.out")" -eq 2
case "${S1#"$REF_ROOT"/}" in
  [0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]-o"$ORCH_NUM"-w"$W1_NUM") ok "session dir name" ;;
  *) fail "session dir name: $S1" ;;
esac
SA1="$(basename -- "$S1")"; SA1="${SA1:0:15}"
check "response_file is 002-response.md" test "$R1" = "$S1/002-response.md"
REQ1="$S1/001-request.md"
HDR1="$(head -n 1 "$REQ1")"
ID1="$(printf '%s\n' "$HDR1" | sed -n 's/.* id=\([0-9]\{8\}-[0-9]\{6\}-[0-9a-f]\{4\}\) .*/\1/p')"
check "request id format" test -n "$ID1"
{
  printf '[WORKER capability=WRITABLE id=%s started_at=%s orchestrator=%s worker=%s]\n' "$ID1" "$SA1" "$ORCH" "$W1"
  printf '%s\n' "$LINE1" 'Report back.'
  printf '\n[RESPONSE INSTRUCTIONS]\nResponse file: %s\nNotify via:\n' "$R1"
  printf 'tmux load-buffer -b "msg-o%s-w%s" - <<< "[RESPONSE started_at=%s orchestrator=%s worker=%s] %s" && tmux paste-buffer -b "msg-o%s-w%s" -t %s && sleep 0.2 && tmux send-keys -t %s Enter\n' \
    "$ORCH_NUM" "$W1_NUM" "$SA1" "$ORCH" "$W1" "$R1" "$ORCH_NUM" "$W1_NUM" "$ORCH" "$ORCH"
} > "$T/want-req1"
check "request file is exact" same_file "$T/want-req1" "$REQ1"
[ "$VERBOSE" = 1 ] && { echo "---- $REQ1"; cat "$REQ1"; echo ----; }
# cat in cooked mode gets every pasted line, then the extra Enter.
{ cat "$REQ1"; echo; } > "$T/want-w1"
check "cat in $W1 received the request" poll same_file "$T/want-w1" "$T/w1.out"
tm show-buffer -b "msg-o$ORCH_NUM-w$W1_NUM" > "$T/buf1" 2>/dev/null
check "seed leaves the buffer after the paste" same_file "$REQ1" "$T/buf1"

# --- respond.sh from outside, notification into the orchestrator pane
printf 'Found it.\nDELTA:\n  changes: []\n' > "$T/body1.md"
REF_TMUX_SOCKET="$SOCK" "$HERE/respond.sh" "$REQ1" "$T/body1.md" > "$T/resp1.out"
check "respond1 exit 0" test $? = 0
printf '[WORKER RESPONSE id=%s started_at=%s orchestrator=%s worker=%s]\nFound it.\nDELTA:\n  changes: []\n' \
  "$ID1" "$SA1" "$ORCH" "$W1" > "$T/want-resp1"
check "response file is exact" same_file "$T/want-resp1" "$R1"
check "[RESPONSE ...] line arrived in $ORCH" poll pane_has "$ORCH" \
  "[RESPONSE started_at=$SA1 orchestrator=$ORCH worker=$W1] $R1"

# --- await.sh prints the response and deletes the pair's buffer
REF_TMUX_SOCKET="$SOCK" "$HERE/await.sh" "$R1" 5 > "$T/await1.out"
check "await exit 0" test $? = 0
check "await prints the response" same_file "$T/want-resp1" "$T/await1.out"
check "await deleted the buffer" no_buffer "msg-o$ORCH_NUM-w$W1_NUM"
"$HERE/await.sh" "$T/never.md" 0.2 2>/dev/null
check "await times out with 3" test $? = 3

# --- second request in the same session, from outside with REF_ORCHESTRATOR
printf 'Second question.\n' > "$T/msg2.md"
REF_ORCHESTRATOR="$ORCH" REF_TMUX_SOCKET="$SOCK" REF_ENTER_DELAY=0.05 \
  "$HERE/send.sh" --session-dir "$S1" "$W1" "$T/msg2.md" > "$T/send2.out"
check "send2 exit 0" test $? = 0
check "send2 reuses the session dir" test "$(kv session_dir "$T/send2.out")" = "$S1"
check "send2 response is 004" test "$(kv response_file "$T/send2.out")" = "$S1/004-response.md"
check "send2 wrote 003-request.md" grep -q "^\[WORKER capability=READONLY id=.* started_at=$SA1 orchestrator=$ORCH worker=$W1\]$" "$S1/003-request.md"

# --- the 5th request of a session: 009-request.md, 010-response.md
S5="$REF_ROOT/20260101-000000-o$ORCH_NUM-w$W1_NUM"
mkdir -p "$S5" && for n in 001 002 003 004 005 006 007 008; do : > "$S5/$n-x.md"; done
REF_ORCHESTRATOR="$ORCH" REF_TMUX_SOCKET="$SOCK" REF_ENTER_DELAY=0 \
  "$HERE/send.sh" --session-dir "$S5" "$W1" "$T/msg2.md" > "$T/send5.out"
check "send5 exit 0" test $? = 0
check "send5 response is 010" test "$(kv response_file "$T/send5.out")" = "$S5/010-response.md"
check "send5 started_at from the dir name" grep -q ' started_at=20260101-000000 ' "$S5/009-request.md"

# --- send.sh by agent name, typed into the orchestrator pane (the
# orchestrator comes first in list-panes, so a self-match would show here)
in_orch send3 "bash $(q "$HERE/send.sh") fake-agent $(q "$T/msg2.md")"
check "send3 exit 0" test "$(cat "$T/send3.rc")" = 0
S3="$(kv session_dir "$T/send3.out")"
check "send3 resolved fake-agent to $W2" test "${S3%-o"$ORCH_NUM"-w"$W2_NUM"}" != "$S3"
{ cat "$S3/001-request.md"; echo; } > "$T/want-w2"
check "fake-agent in $W2 received the request" poll same_file "$T/want-w2" "$T/w2.out"

# --- bad input
"$HERE/send.sh" %1 "$T/msg2.md" 2>/dev/null
check "send without own pane exits 2" test $? = 2
REF_ORCHESTRATOR="$ORCH" "$HERE/send.sh" --capability ROOT %1 "$T/msg2.md" 2>/dev/null
check "send with bad capability exits 2" test $? = 2
REF_ORCHESTRATOR="$ORCH" REF_TMUX_SOCKET="$SOCK" "$HERE/send.sh" no-such-agent-zz9 "$T/msg2.md" 2>/dev/null
check "send to unknown agent exits 1" test $? = 1
REF_TMUX_SOCKET="$SOCK" "$HERE/respond.sh" "$T/msg1.md" "$T/body1.md" 2>/dev/null
check "respond to a non-request exits 1" test $? = 1

# --- respond.sh to a request as wcomm may write it: extra header fields,
# more instruction lines, no seed notify command, and a quoted older
# instructions block in the body
WC="$REF_ROOT/20260102-030405-o$ORCH_NUM-w$W1_NUM"
mkdir -p "$WC"
cat > "$WC/001-request.md" << EOF
[WORKER capability=READONLY id=20260102-030405-beef started_at=20260102-030405 orchestrator=$ORCH worker=$W1 bytes=123 sha256=0123456789abcdef]
Earlier request, quoted:
[RESPONSE INSTRUCTIONS]
Response file: $T/wrong.md

[RESPONSE INSTRUCTIONS]
Response file: $WC/002-response.md
Answer with: wcomm respond --id 20260102-030405-beef < body
Notify via: wcomm does it
EOF
printf 'ok from a seed worker\n' | REF_TMUX_SOCKET="$SOCK" "$HERE/respond.sh" "$WC/001-request.md" - > /dev/null
check "respond to wcomm request exit 0" test $? = 0
check "no response in the quoted block's path" test ! -e "$T/wrong.md"
printf '[WORKER RESPONSE id=20260102-030405-beef started_at=20260102-030405 orchestrator=%s worker=%s]\nok from a seed worker\n' \
  "$ORCH" "$W1" > "$T/want-wc"
check "response to wcomm request is exact" same_file "$T/want-wc" "$WC/002-response.md"
check "[RESPONSE ...] for wcomm request arrived" poll pane_has "$ORCH" \
  "[RESPONSE started_at=20260102-030405 orchestrator=$ORCH worker=$W1] $WC/002-response.md"

if [ "$VERBOSE" = 1 ]; then
  echo "---- orchestrator pane"
  tm capture-pane -p -J -t "$ORCH" | grep -v '^$'
fi
if [ "$FAILS" -gt 0 ]; then
  echo "selftest: $FAILS check(s) failed" >&2
  exit 1
fi
echo "selftest: ok"
