#!/usr/bin/env bash
# install.sh DIR: installs the agent TUIs (pinned versions) into DIR/node_modules.
# Idempotent: when DIR already holds exactly these versions it returns at once without
# touching the network, so tests may call it before every run.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: install.sh DIR" >&2
	exit 2
fi
dir=$1

# Pinned: the versions measured in MEASUREMENTS.md. Change the notes there when bumping.
# Claude Code 2.1.331 is the first measured with its messaging socket (the door wcomm delivers through).
pkgs=(
	"@anthropic-ai/claude-code@2.1.331"
	"@openai/codex@0.169.0"
	"@google/gemini-cli@0.61.0"
	"opencode-ai@1.18.33"
	"@github/copilot@1.0.102"
	"@qwen-code/qwen-code@0.24.4"
)

installed_version() {
	# Reads "version" from DIR/node_modules/NAME/package.json without jq.
	local f="$dir/node_modules/$1/package.json"
	[ -f "$f" ] || return 0
	node -e 'try{process.stdout.write(require(process.argv[1]).version||"")}catch(e){}' "$f"
}

missing=()
for p in "${pkgs[@]}"; do
	name=${p%@*}
	want=${p##*@}
	if [ "$(installed_version "$name")" != "$want" ]; then
		missing+=("$p")
	fi
done
# The platform binaries come as optional dependencies; a half-finished earlier install
# can leave the wrapper without them, so check that the launchers really exist too.
for f in node_modules/@anthropic-ai/claude-code/bin/claude.exe node_modules/.bin/codex node_modules/.bin/gemini \
	node_modules/.bin/opencode node_modules/.bin/copilot node_modules/.bin/qwen; do
	[ -e "$dir/$f" ] || missing=("${pkgs[@]}")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

command -v npm >/dev/null || { echo "install.sh: npm not found; install node and npm first" >&2; exit 1; }
# Node trusts only the CA list it was built with. Where the registry is reached through a CA of
# the system's store (a TLS proxy) and nothing tells npm so, the install fails on the chain.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
	export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
mkdir -p "$dir"
chmod 0700 "$dir"
# A package.json keeps npm from walking up to an unrelated project's one.
[ -f "$dir/package.json" ] || printf '{"name":"agent-tuis","private":true}\n' >"$dir/package.json"
echo "install.sh: installing ${missing[*]} into $dir" >&2
# Always name them all: npm install with a subset prunes nothing, but keeps the lock
# file consistent with the pins.
timeout 900 npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${pkgs[@]}" >&2
