#!/usr/bin/env bash
# smoke.sh DIR [AGENT...]
#   DIR    folder for the installed TUIs (install.sh DIR is run first; fast when done)
#   AGENT  claude, codex, gemini (default: all three)
#
# For each agent: start mockmodel.py and the agent's TUI in a private tmux server, paste one
# message and check mockmodel's log holds it exactly once, then a "RUN: echo hello > FILE"
# message and check FILE, so tool calls work. Prints one PASS/FAIL line per agent, exits 1
# if any failed. Every wait is bounded; on exit it kills its own tmux server (by -S), the
# agents' processes and the model server it started, and removes its temp folder.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)

if [ $# -lt 1 ]; then
	echo "usage: smoke.sh DIR [claude|codex|gemini ...]" >&2
	exit 2
fi
dir=$1
shift
agents=("$@")
[ ${#agents[@]} -gt 0 ] || agents=(claude codex gemini)

for t in tmux python3 node timeout; do
	command -v "$t" >/dev/null || { echo "smoke.sh: $t not found; install it first" >&2; exit 1; }
done

if ! timeout 900 "$here/install.sh" "$dir"; then
	echo "smoke.sh: install.sh $dir failed; check npm can reach its registry" >&2
	exit 1
fi
dir=$(cd "$dir" && pwd -P)

root=$(mktemp -d "${TMPDIR:-/tmp}/wcs-XXXXXX")
chmod 0700 "$root"
sock=$root/s
T=(tmux -S "$sock" -f /dev/null)
model_pid=
pids=() # pane pids of agents started here, for the final sweep

# tree PID: PID and all its descendants (by /proc via pgrep -P).
tree() {
	local p
	echo "$1"
	for p in $(pgrep -P "$1"); do tree "$p"; done
}

# reap PID...: TERM the given processes, wait up to 5 s, then KILL what is left.
reap() {
	local left p
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for _ in $(seq 1 50); do
		left=()
		for p in "$@"; do [ -d "/proc/$p" ] && left+=("$p"); done
		[ ${#left[@]} -eq 0 ] && return 0
		sleep 0.1
	done
	kill -KILL "${left[@]}" 2>/dev/null
}

cleanup() {
	local all=() p
	for p in "${pids[@]}"; do mapfile -t -O "${#all[@]}" all < <(tree "$p"); done
	"${T[@]}" kill-server 2>/dev/null
	reap "${all[@]}"
	if [ -n "$model_pid" ]; then reap "$model_pid"; fi
	rm -rf -- "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$here/mockmodel.py" --port 0 --port-file "$root/port" --log "$root/prompts.jsonl" \
	--max-seconds 900 >/dev/null 2>"$root/model.err" &
model_pid=$!
for _ in $(seq 1 100); do
	[ -s "$root/port" ] && break
	sleep 0.1
done
if ! [ -s "$root/port" ]; then
	echo "smoke.sh: mockmodel.py did not start: $(cat "$root/model.err")" >&2
	exit 1
fi
port=$(cat "$root/port")
touch "$root/prompts.jsonl"

"${T[@]}" new-session -d -s smoke -x 200 -y 50 -n base || { echo "smoke.sh: cannot start tmux" >&2; exit 1; }

# Screen markers (see screen.md). A marker function reads the screen on stdin.
NBSP=$'\xc2\xa0'
ready_claude() { grep -q "^❯${NBSP} *\$"; } # empty input box
ready_codex() { grep -qE '^› (Ask Codex to do anything|Ask a follow-up question)'; }
ready_gemini() { grep -qE '^ [*>] +Type your message or @path/to/file'; }
busy_claude() { grep -q 'esc to interrupt'; }
busy_codex() { grep -q 'esc to interrupt'; }
busy_gemini() { grep -q 'esc to cancel'; }

screen() { "${T[@]}" capture-pane -p -t "$1" 2>/dev/null; }

# wait_until SECONDS CMD...: polls CMD every 0.2 s until it succeeds or time is up.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.2
	done
	"$@"
}

is_ready() { screen "$2" | "ready_$1"; }
is_idle() { local s; s=$(screen "$2"); "ready_$1" <<<"$s" && ! "busy_$1" <<<"$s"; }
ready_or_gone() { is_ready "$1" "$2" || ! pane_alive "$2"; }
pane_alive() { [ "$("${T[@]}" display-message -p -t "$1" '#{pane_dead}' 2>/dev/null)" = 0 ]; }
count_prompt() { python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.endswith("\n"):
        break  # still being written
    p = json.loads(line)
    if p["agent"] == sys.argv[2] and sys.argv[3] in p["prompt"]:
        n += 1
print(n)' "$root/prompts.jsonl" "$1" "$2"; }
logged() { [ "$(count_prompt "$1" "$2")" -ge 1 ]; }

# send AGENT PANE TOKEN TEXT: paste as wcomm will (buffer from stdin, bracketed), Enter in a
# separate call after a delay, then wait for TOKEN in the model's log. Gemini CLI turns an
# Enter into a newline while it is busy (MEASUREMENTS.md), so one more Enter is allowed:
# this checks the plumbing; the timing is measure.py's business.
send() {
	local a=$1 pane=$2 tok=$3 b=smoke$RANDOM$RANDOM delay=0.3
	[ "$a" = gemini ] && delay=1
	printf '%s' "$4" | "${T[@]}" load-buffer -b "$b" - \; paste-buffer -d -p -b "$b" -t "$pane" || {
		echo "FAIL $a: tmux paste failed"
		return 1
	}
	sleep "$delay"
	"${T[@]}" send-keys -t "$pane" Enter
	wait_until 8 logged "$a" "$tok" && return 0
	echo "     $a: not submitted 8 s after Enter; pressing Enter once more"
	"${T[@]}" send-keys -t "$pane" Enter
	wait_until 30 logged "$a" "$tok" && return 0
	echo "FAIL $a: the pasted message never reached the model; last screen:"
	tail_screen "$pane"
	return 1
}

tail_screen() { screen "$1" | grep -v '^ *$' | tail -n 8 | sed 's/^/    | /'; }

failed=0
run_agent() {
	local a=$1
	local work=$root/work-$a pane pid t0 tok tok2 n f t
	mkdir -p "$work"
	read -r pane pid < <("${T[@]}" new-window -d -P -F '#{pane_id} #{pane_pid}' -n "$a" \
		"$here/start-agent.sh $a $dir $work $port 2>$root/start-$a.err")
	[ -n "$pid" ] && pids+=("$pid")
	t0=$SECONDS
	if ! wait_until 60 ready_or_gone "$a" "$pane" || ! pane_alive "$pane"; then
		if pane_alive "$pane"; then
			echo "FAIL $a: not ready after 60 s; last screen:"
			tail_screen "$pane"
		else
			echo "FAIL $a: cannot run here: the TUI exited at start: $(cat "$root/start-$a.err")"
		fi
		return 1
	fi
	echo "     $a: ready after $((SECONDS - t0)) s"
	sleep 1 # a freshly drawn box may not take Enter yet (MEASUREMENTS.md)

	tok=smoke-$a-$RANDOM$RANDOM
	tok2=tool-$a-$RANDOM$RANDOM # not a substring of tok: counts are by substring
	send "$a" "$pane" "$tok" "hello from smoke.sh $tok" || return 1
	if ! wait_until 30 is_idle "$a" "$pane"; then
		echo "FAIL $a: no idle screen 30 s after the answer; last screen:"
		tail_screen "$pane"
		return 1
	fi

	f=$work/hello-$a.txt
	send "$a" "$pane" "$tok2" "please run this $tok2
RUN: echo hello > $f" || return 1
	if ! wait_until 45 grep -qx hello "$f" 2>/dev/null; then
		echo "FAIL $a: the tool call did not write $f; last screen:"
		tail_screen "$pane"
		return 1
	fi
	if ! wait_until 30 is_idle "$a" "$pane"; then
		echo "FAIL $a: no idle screen after the tool call; last screen:"
		tail_screen "$pane"
		return 1
	fi
	for t in "$tok" "$tok2"; do
		n=$(count_prompt "$a" "$t")
		if [ "$n" != 1 ]; then
			echo "FAIL $a: message $t reached the model $n times, want 1"
			return 1
		fi
	done
	echo "PASS $a: message submitted once, tool call ran ($((SECONDS - t0)) s)"
	local procs
	procs=$(tree "$pid") # before the kill: orphans would lose their parent link
	"${T[@]}" kill-pane -t "$pane" 2>/dev/null
	reap $procs
}

for a in "${agents[@]}"; do
	case $a in
	claude | codex | gemini) run_agent "$a" || failed=1 ;;
	*) echo "FAIL $a: unknown agent; want claude, codex or gemini"; failed=1 ;;
	esac
done
exit $failed
