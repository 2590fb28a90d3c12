#!/bin/sh
# link-bin.sh BINDIR: make the programs of BINDIR (wcomm, wcomm-mcp, wcomm-bridge, wcomm-ui)
# reachable from a login shell.
#
# tmux starts each pane's shell as a login shell, and a login shell sets PATH afresh from
# /etc/profile and ~/.profile: an `export PATH=...` typed before starting tmux is gone in every
# pane, and so is Go's bin folder. This links the binaries into a folder that a login shell's PATH
# holds: one under $HOME that it already holds (~/.local/bin, ~/bin), this shell's PATH too when
# one is (then this shell finds wcomm at once as well), else ~/.local/bin when the shell's profile
# adds it once it exists (Debian's and Ubuntu's ~/.profile do), else a writable system folder such
# as /usr/local/bin (as root), which this shell holds too. LINKDIR=DIR chooses the folder instead. It ends by asking a fresh login shell where wcomm is, and fails, saying what to
# do, unless that is ours. A shell or pane started before a folder new to it was made keeps its
# PATH: it runs wcomm by its path, or a new shell is opened.
set -eu

src=${1:?usage: link-bin.sh BINDIR}
src=$(cd "$src" && pwd -P)
[ -x "$src/wcomm" ] || { echo "link-bin: $src/wcomm is missing: run go install ./cmd/... first" >&2; exit 1; }
login_shell=${SHELL:-/bin/sh}

# login_path prints the PATH a fresh login shell gets (what a new tmux pane gets).
login_path() {
	env -i HOME="$HOME" USER="${USER:-}" LOGNAME="${LOGNAME:-}" SHELL="$login_shell" TERM=dumb \
		"$login_shell" -l -c 'printf "%s\n" "$PATH"' 2>/dev/null | tail -n 1
}

# login_finds prints the wcomm a fresh login shell runs, resolved, or nothing.
login_finds() {
	p=$(env -i HOME="$HOME" USER="${USER:-}" LOGNAME="${LOGNAME:-}" SHELL="$login_shell" TERM=dumb \
		"$login_shell" -l -c 'command -v wcomm' 2>/dev/null | tail -n 1) || true
	[ -n "$p" ] && readlink -f "$p" || true
}

# pick prints the first writable folder of the login PATH that is under $HOME (with "home"), that
# and in this shell's PATH too (with "here"), or not under $HOME (with "system"), sbin folders aside.
pick() {
	old_ifs=$IFS
	IFS=:
	for d in $(login_path); do
		case "$d" in "" | */sbin) continue ;; esac # sbin holds what only root runs
		under=system
		case "$d" in "$HOME"/*) under=home ;; esac
		case ":$PATH:" in *":$d:"*) [ "$1" = here ] && [ "$under" = home ] && under=here ;; esac
		if [ "$under" = "$1" ] && [ -d "$d" ] && [ -w "$d" ]; then
			IFS=$old_ifs
			printf '%s\n' "$d"
			return 0
		fi
	done
	IFS=$old_ifs
	return 1
}

if [ "$(login_finds)" = "$src/wcomm" ]; then
	echo "wcomm: a login shell already runs $src/wcomm"
	exit 0
fi

dir=${LINKDIR:-}
if [ -z "$dir" ]; then
	dir=$(pick here) || dir=
fi
if [ -z "$dir" ]; then
	dir=$(pick home) || dir=
fi
if [ -z "$dir" ] && [ ! -e "$HOME/.local/bin" ]; then
	mkdir -p "$HOME/.local/bin"
	if dir=$(pick home); then :; else
		rmdir "$HOME/.local/bin" 2>/dev/null || true
		dir=
	fi
fi
if [ -z "$dir" ]; then
	dir=$(pick system) || dir=
fi
if [ -z "$dir" ]; then
	echo "link-bin: no folder of a login shell's PATH is writable; add this line to ~/.profile and open a new shell:" >&2
	echo "  export PATH=\"$src:\$PATH\"" >&2
	exit 1
fi

mkdir -p "$dir"
for b in wcomm wcomm-mcp wcomm-bridge wcomm-ui; do
	[ -e "$src/$b" ] && ln -sf "$src/$b" "$dir/$b"
done
found=$(login_finds)
if [ "$found" != "$src/wcomm" ]; then
	echo "link-bin: linked wcomm into $dir, but a login shell runs ${found:-no wcomm}: put $dir first in PATH in your ~/.profile" >&2
	exit 1
fi
case ":$PATH:" in
*":$dir:"*) echo "wcomm: linked into $dir; this shell, new shells and new tmux panes find it" ;;
*)
	echo "wcomm: linked into $dir; new shells and new tmux panes find it"
	echo "wcomm: this shell and the panes opened before it do not have $dir in PATH: run $src/wcomm there, or open a new shell or pane (or run  export PATH=\"$dir:\$PATH\")"
	;;
esac
