#!/usr/bin/env bash
# deps.sh tests|agents: what make deps and make deps-agents install from the system's packages,
# and only that. It says first what it will install and why, installs only what is missing, never
# upgrades a package that is installed (it refuses, naming them, when a package it needs would), never
# pulls Recommends, and never enables or starts a service.
#
# The remote hosts' tests need only OpenSSH's sshd program (internal/sshtest runs it itself, in a
# private namespace): where the system has none, the openssh-server package is downloaded and
# unpacked into the project's .cache/sshd (with the libraries it needs that the system lacks), not
# installed: installing it would start sshd on port 22 at every boot, and its exact-version
# dependency would upgrade an installed openssh-client.
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:?usage: deps.sh tests|agents}
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == *' installed' ]]; }

# need CMD PKG WHY: PKG is to be installed when command CMD is not found and PKG is not installed
# (a command off this PATH, or a package that is there without its command, is not installed anew).
missing=() why=()
need() {
	command -v "$1" >/dev/null 2>&1 && return
	installed "$2" && return
	missing+=("$2") why+=("$3")
}

# update refreshes apt's package lists (it installs and upgrades nothing), so that what is
# installed or downloaded next is what the archive holds now.
update() {
	echo "deps: apt-get update (refreshes the package lists only)"
	$sudo apt-get update -qq
}

case $what in
tests)
	need tmux tmux "the tests' private tmux servers"
	need python3 python3 "the programs the tests run in tmux panes"
	need zsh zsh "the shell completion scripts are loaded in it"
	need fish fish "the shell completion scripts are loaded in it"
	need dash dash "the shell profile is checked against it"
	need ssh openssh-client "ssh and ssh-keygen for the remote hosts' tests"
	need chromium chromium "the web page's tests drive a real browser (headless)"
	;;
agents)
	need node nodejs "the real agent TUIs are npm packages (Node.js 20 or newer)"
	need npm npm "installs the agent TUIs into their cache folder"
	;;
*)
	echo "usage: deps.sh tests|agents" >&2
	exit 2
	;;
esac

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing with apt-get (only what is missing; no upgrades, no Recommends, no service enabled):"
	for i in "${!missing[@]}"; do echo "  ${missing[$i]}: ${why[$i]}"; done
	update
	# A package that needs a newer version of an installed one would upgrade it: say which, and
	# stop, unless DEPS_UPGRADE=1 allows it (CI's throwaway machine does).
	sim=$(DEBIAN_FRONTEND=noninteractive apt-get install -s -qq --no-install-recommends "${missing[@]}")
	up=$(printf '%s\n' "$sim" | awk '$1 == "Inst" && $3 ~ /^\[/ {print "  " $2 " " $3}')
	if [ -n "$up" ] && [ "${DEPS_UPGRADE:-}" != 1 ]; then
		echo "deps: installing ${missing[*]} would upgrade installed packages:" >&2
		echo "$up" >&2
		echo "deps: upgrade them yourself, or run again with DEPS_UPGRADE=1 to let apt-get do it" >&2
		exit 1
	fi
	# None of these packages runs a service (openssh-server, which did, is not installed: see above).
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-upgrade --no-install-recommends "${missing[@]}"
fi

[ "$what" = tests ] || exit 0

# sshd: the one WCOMM_SSHD names (internal/sshtest runs that one), the system's, else the
# project's unpacked copy.
[ -n "${WCOMM_SSHD:-}" ] && exit 0
[ -x /usr/sbin/sshd ] && exit 0
cache=.cache/sshd
libpath() { find "$1" \( -name '*.so' -o -name '*.so.*' \) -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -; }
# works: sshd is there, and it and the programs it starts (OpenSSH 9.8 and later) find their
# libraries.
works() {
	[ -x "$cache/usr/sbin/sshd" ] || return 1
	local p out
	for p in "$cache/usr/sbin/sshd" "$cache/usr/lib/openssh/sshd-session" "$cache/usr/lib/openssh/sshd-auth"; do
		[ -e "$p" ] || continue
		out=$(LD_LIBRARY_PATH=$(libpath "$cache") ldd "$p" 2>&1) || return 1
		! grep -q 'not found' <<<"$out" || return 1
	done
}
works && exit 0
echo "deps: the remote hosts' tests need sshd: downloading openssh-server into $cache (unpacked there, not installed, no service)"
policy=$(apt-cache policy openssh-server 2>/dev/null || true)
grep -q 'Candidate: [^(]' <<<"$policy" || update
# openssh-server and the libraries it links that the system lacks (and theirs).
pkgs=(openssh-server) queue=(openssh-server)
while [ ${#queue[@]} -gt 0 ]; do
	p=${queue[0]} queue=("${queue[@]:1}")
	for d in $(apt-cache depends --no-recommends --no-suggests --no-enhances --no-conflicts --no-breaks \
		--no-replaces --no-pre-depends "$p" | awk '$1 == "Depends:" && $2 ~ /^lib/ {print $2}' | sort -u); do
		installed "$d" && continue
		case " ${pkgs[*]} " in *" $d "*) continue ;; esac
		pkgs+=("$d") queue+=("$d")
	done
done
echo "  ${pkgs[*]}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# As root, apt-get would hand the download to its unprivileged user, who cannot write here.
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
# Lists older than the archive name files it no longer has: refreshed once, then tried again.
download() { (cd "$tmp" && apt-get download -qq "${sandbox[@]}" "${pkgs[@]}"); }
download || { update && download; }
rm -rf "$cache"
mkdir -p "$cache"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$cache"; done
if ! works; then
	echo "deps: $cache/usr/sbin/sshd cannot run here; its libraries:" >&2
	LD_LIBRARY_PATH=$(libpath "$cache") ldd "$cache/usr/sbin/sshd" >&2 || true
	exit 1
fi
echo "deps: sshd is $cache/usr/sbin/sshd"
