package kit

// What the agents' configuration runs: install-skill's hooks and install-mcp's server entries name
// the running wcomm by its absolute path. An agent starts with whatever PATH its own start gave it
// (a login shell's in a tmux pane, an IDE's, a sandbox's), where a bare "wcomm" may not be found:
// its hook would then fail with 127 on every turn.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/shlex"
)

// SelfPath is the absolute path of the running binary, symlinks resolved, so that the entry keeps
// working when the link it was started through is moved.
func SelfPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this binary (%v); pass --command PATH", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	return filepath.Abs(self)
}

// shellWord quotes s for a POSIX shell when it needs it: the agents run a hook's command through
// one, and a path may hold a space.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._+-=:,@%", r))
	}) < 0 {
		return s
	}
	return shQuote(s)
}

// isHookCommand reports whether cmd runs 'wcomm hook', by whatever path: a hook that an older
// install wrote with a bare "wcomm" is brought up to date, not added twice.
func isHookCommand(cmd string) bool {
	words, err := shlex.Split(cmd)
	if err != nil || len(words) < 2 || words[1] != "hook" {
		return false
	}
	base := filepath.Base(words[0])
	return base == "wcomm" || base == "wcomm-mcp" || words[0] == mustSelf()
}

// mustSelf is SelfPath, or "" when it cannot be found.
func mustSelf() string {
	p, _ := SelfPath()
	return p
}
