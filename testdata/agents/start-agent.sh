#!/usr/bin/env bash
# start-agent.sh AGENT DIR WORKDIR PORT [ARG...]
#   AGENT   claude | codex | gemini | opencode | copilot | qwen
#   DIR     the folder install.sh installed into (holds node_modules/)
#   WORKDIR the folder the agent works in (made if missing)
#   PORT    the port of mockmodel.py on 127.0.0.1
#   ARG     more words for Claude Code's or Codex's command line (wcomm spawn adds its
#           --session-id or resume there)
#
# Prepares a scratch HOME (fake keys, onboarding done, folder trusted, tools allowed
# without prompts, no updaters, no telemetry) and execs the agent's interactive TUI in
# the current terminal, so a test runs it as the command of a tmux window:
#   tmux -S SOCK new-window -d -P -F '#{pane_id}' "testdata/agents/start-agent.sh claude DIR WORK PORT"
#
# The environment is rebuilt from nothing (env -i): no variable of the calling session,
# least of all a real credential or API address, reaches the agent. Kept: PATH, TERM,
# LANG, SHELL, USER, TMUX, TMUX_PANE, COLORTERM and every WCOMM_* variable.
#
# CLAUDE_PERMISSION_MODE (acceptEdits, the default, or default) is Claude Code's permission mode.
# CODEX_DAEMON=1 starts Codex with its app-server daemon (its own door; see docs/codex-door.md);
# by default it runs without one. CODEX_APPROVAL=on-request runs it with approval_policy "on-request"
# in a read-only sandbox (a command that asks to run outside it waits for the person's approval);
# by default it runs with approvals and the sandbox bypassed.
#
# HOME is DIR/homes/AGENT-PID (the PID of the agent, as exec keeps it) unless AGENT_HOME
# names one; homes of agents that no longer run are removed on the next start.
set -euo pipefail

die() {
	echo "start-agent.sh: $*" >&2
	exit 2
}

[ $# -ge 4 ] || die "usage: start-agent.sh claude|codex|gemini|opencode|copilot|qwen DIR WORKDIR PORT [ARG...]"
agent=$1
dir=$(cd "$2" 2>/dev/null && pwd -P) || die "install folder $2 not found; run install.sh $2 first"
mkdir -p "$3"
work=$(cd "$3" && pwd -P)
port=$4
shift 4
extra=("$@")
case $port in '' | *[!0-9]*) die "port $port is not a number" ;; esac
nm=$dir/node_modules

homes=$dir/homes
mkdir -p "$homes"
chmod 0700 "$homes"
# Homes of earlier agents whose process is gone: keep the folder from growing without end.
for h in "$homes"/*-*; do
	[ -d "$h" ] || continue
	pid=${h##*-}
	case $pid in '' | *[!0-9]*) continue ;; esac
	[ -d "/proc/$pid" ] || rm -rf -- "$h"
done
home=${AGENT_HOME:-$homes/$agent-$$}
mkdir -p "$home"
chmod 0700 "$home"

# write FILE: stdin to FILE, mode 0600.
write() {
	mkdir -p "$(dirname "$1")"
	(umask 077 && cat >"$1")
}

# reap_when_pane_dies PID: waits until the terminal on PID's stdin is gone (the pane was
# killed: the pts node reads "(deleted)"), then TERMs PID and its descendants, KILLs them
# 3 s later. It ignores SIGHUP, which the dying pane sends to its foreground group.
reap_when_pane_dies() {
	local pid=$1 tree p q left
	trap '' HUP
	while [ -d "/proc/$pid" ]; do
		if [[ $(readlink "/proc/$pid/fd/0" 2>/dev/null) == *"(deleted)" ]]; then
			tree=$pid
			for p in $(pgrep -P "$pid"); do
				[ "$p" = "$BASHPID" ] && continue # this watcher is a child too
				tree+=" $p"
				for q in $(pgrep -P "$p"); do tree+=" $q"; done
			done
			kill -TERM $tree 2>/dev/null
			for _ in 1 2 3 4 5 6; do
				sleep 0.5
				left=
				for p in $tree; do [ -d "/proc/$p" ] && left+=" $p"; done
				[ -z "$left" ] && return 0
			done
			kill -KILL $left 2>/dev/null
			return 0
		fi
		sleep 1
	done
}

base=http://127.0.0.1:$port
# Fake credentials: well-formed enough for each client's local checks, useless anywhere else.
fake_key=sk-ant-api03-mockmodel-fake-key-0000000000000000000000000000-AAAAAAAA

envs=(
	"PATH=$PATH"
	"HOME=$home"
	"TERM=${TERM:-tmux-256color}"
	"LANG=${LANG:-C.UTF-8}"
	"SHELL=/bin/bash"
	"USER=${USER:-$(id -un)}"
	"NO_PROXY=127.0.0.1,localhost"
)
for v in TMUX TMUX_PANE COLORTERM LC_ALL; do
	[ -n "${!v:-}" ] && envs+=("$v=${!v}")
done
while IFS='=' read -r name _; do
	case $name in WCOMM_*) envs+=("$name=${!name}") ;; esac
done < <(env)

cd "$work"
case $agent in
claude)
	bin=$nm/@anthropic-ai/claude-code/bin/claude.exe
	[ -x "$bin" ] || die "claude not installed under $dir; run install.sh $dir"
	# The key's last 20 characters mark it approved, so no "use this API key?" dialog.
	python3 - "$home/.claude.json" "$work" "${fake_key: -20}" <<'PY'
import json, os, sys
path, work, tail = sys.argv[1:]
cfg = {"hasCompletedOnboarding": True, "numStartups": 1, "autoUpdates": False,
       "customApiKeyResponses": {"approved": [tail], "rejected": []},
       "projects": {work: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                           "allowedTools": []}}}
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "w") as f:
    json.dump(cfg, f)
PY
	# CLAUDE_PERMISSION_MODE=default: Bash is not allowed beforehand, so each command asks the
	# person (the permission dialog, and the PermissionRequest hook when one is installed).
	mode=${CLAUDE_PERMISSION_MODE:-acceptEdits}
	case $mode in
	acceptEdits)
		write "$home/.claude/settings.json" <<'EOF'
{"permissions": {"allow": ["Bash"]}}
EOF
		;;
	default) write "$home/.claude/settings.json" <<<'{}' ;;
	*) die "CLAUDE_PERMISSION_MODE $mode: want acceptEdits or default" ;;
	esac
	envs+=(
		"ANTHROPIC_API_KEY=$fake_key"
		"ANTHROPIC_BASE_URL=$base"
		"DISABLE_AUTOUPDATER=1"
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"
		"DISABLE_TELEMETRY=1"
		"DISABLE_ERROR_REPORTING=1"
	)
	# Without a mode named a first start enters "auto mode", whose safety check calls the
	# real service and blocks every tool call.
	exec env -i "${envs[@]}" "$bin" --permission-mode "$mode" "${extra[@]}"
	;;
codex)
	bin=$nm/.bin/codex
	[ -x "$bin" ] || die "codex not installed under $dir; run install.sh $dir"
	approval=${CODEX_APPROVAL:-never}
	case $approval in
	never) sandbox=danger-full-access bypass=(--dangerously-bypass-approvals-and-sandbox) ;;
	on-request) sandbox=read-only bypass=() ;;
	*) die "CODEX_APPROVAL $approval: want never or on-request" ;;
	esac
	write "$home/.codex/config.toml" <<EOF
model = "mock-model"
model_provider = "mock"
approval_policy = "$approval"
sandbox_mode = "$sandbox"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = "$base/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects."$work"]
trust_level = "trusted"
EOF
	envs+=("MOCK_API_KEY=$fake_key")
	# --no-daemon: otherwise an app-server and an updater outlive the TUI. CODEX_DAEMON=1 keeps
	# them: the app-server is Codex's own door, and the test that uses it stops them at its end.
	daemon=(--no-daemon)
	[ "${CODEX_DAEMON:-}" = 1 ] && daemon=()
	exec env -i "${envs[@]}" "$bin" "${daemon[@]}" "${bypass[@]}" "${extra[@]}"
	;;
gemini)
	bin=$nm/.bin/gemini
	[ -x "$bin" ] || die "gemini not installed under $dir; run install.sh $dir"
	# Without selectedType an authentication dialog appears even with the key set.
	write "$home/.gemini/settings.json" <<'EOF'
{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
 "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false},
 "ui": {"hideTips": true}}
EOF
	# Gemini CLI does not exit when its pane is killed (measured: alive after 80 s, both
	# node processes), so a watcher ends it once the pane's terminal is gone.
	reap_when_pane_dies $$ </dev/null >/dev/null 2>&1 &
	envs+=(
		"GEMINI_API_KEY=$fake_key"
		"GOOGLE_GEMINI_BASE_URL=$base"
		"GEMINI_SANDBOX=false"
	)
	exec env -i "${envs[@]}" "$bin" --yolo
	;;
opencode)
	bin=$nm/.bin/opencode
	[ -x "$bin" ] || die "opencode not installed under $dir; run install.sh $dir"
	# A custom OpenAI-compatible provider (the AI SDK package ships inside OpenCode) on the
	# scripted model; the path's first segment tells the model which agent asks.
	write "$home/.config/opencode/opencode.json" <<EOF
{"\$schema": "https://opencode.ai/config.json",
 "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
   "options": {"baseURL": "$base/opencode/v1", "apiKey": "$fake_key"},
   "models": {"mock-model": {"name": "Mock model"}}}},
 "model": "mock/mock-model", "small_model": "mock/mock-model",
 "autoupdate": false, "share": "disabled",
 "permission": {"bash": "allow", "edit": "allow", "webfetch": "deny"}}
EOF
	envs+=(
		"OPENCODE_DISABLE_MODELS_FETCH=true"
		"OPENCODE_DISABLE_AUTOUPDATE=true"
		"OPENCODE_DISABLE_LSP_DOWNLOAD=true"
	)
	exec env -i "${envs[@]}" "$bin"
	;;
copilot)
	bin=$nm/.bin/copilot
	[ -x "$bin" ] || die "copilot not installed under $dir; run install.sh $dir"
	# Bring-your-own-model: a custom provider needs no GitHub sign-in, and offline mode turns
	# every other network call off (documented in 'copilot help environment').
	envs+=(
		"COPILOT_OFFLINE=true"
		"COPILOT_PROVIDER_BASE_URL=$base/copilot/v1"
		"COPILOT_PROVIDER_API_KEY=$fake_key"
		"COPILOT_MODEL=mock-model"
		"COPILOT_ALLOW_ALL=true"
		"COPILOT_AUTO_UPDATE=false"
	)
	exec env -i "${envs[@]}" "$bin" --disable-client-telemetry
	;;
qwen)
	bin=$nm/.bin/qwen
	[ -x "$bin" ] || die "qwen not installed under $dir; run install.sh $dir"
	# Qwen Code is a fork of Gemini CLI: the same settings file under ~/.qwen, with OpenAI's API
	# chosen, so no authentication dialog; the base URL's first segment names the agent. Off: the
	# managed auto-memory (a background turn of its own that would reach the model as a prompt) and
	# follow-up suggestions (the model's guess at the next prompt, drawn in the input box as text).
	write "$home/.qwen/settings.json" <<'EOF'
{"security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
 "general": {"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
 "memory": {"enableManagedAutoMemory": false},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false},
 "ui": {"hideTips": true, "enableFollowupSuggestions": false}}
EOF
	# Like Gemini CLI, it may not exit when its pane is killed.
	reap_when_pane_dies $$ </dev/null >/dev/null 2>&1 &
	envs+=(
		"OPENAI_API_KEY=$fake_key"
		"OPENAI_BASE_URL=$base/qwen/v1"
		"OPENAI_MODEL=mock-model"
		"QWEN_SANDBOX=false"
	)
	exec env -i "${envs[@]}" "$bin" --yolo
	;;
*)
	die "unknown agent $agent; want claude, codex, gemini, opencode, copilot or qwen"
	;;
esac
