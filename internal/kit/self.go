package kit

// What the agents' configuration runs: install-skill's hooks and install-mcp's server entries name
// "wcomm", found on the agent's PATH, or the path the person gives with --bin. The files they write
// in a project (.claude/settings.json, .mcp.json, .codex/*, .gemini/settings.json) are committed
// and read on other machines, where this machine's absolute path means nothing. An agent starts
// with whatever PATH its own start gave it (a login shell's in a tmux pane, an IDE's, a sandbox's):
// where "wcomm" is not found its hook fails with 127 on every turn, so the commands warn when it is
// not on this PATH.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/shlex"
)

// DefaultBin is the program the agents' entries run unless the person names another.
const DefaultBin = "wcomm"

// Bin is the program the entries name: bin as the person gave it, else DefaultBin.
func Bin(bin string) string {
	if bin == "" {
		return DefaultBin
	}
	return bin
}

// BinWarning says why the agents may not find bin ("" when they will, as far as this process can
// tell): a name not on this PATH, or a path that is no program.
func BinWarning(bin string) string {
	bin = Bin(bin)
	if !strings.Contains(bin, "/") {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Sprintf("%q is not on this PATH, so the agents will not find it either: put it where a login shell finds it (make install does), or pass --bin PATH", bin)
		}
		return ""
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Sprintf("%s is not a program here: the agents will fail to run it until it is", bin)
	}
	return ""
}

// selfPath is the absolute path of the running binary, symlinks resolved: the path an older
// install wrote into the agents' hooks, recognised as wcomm's when it is brought up to date.
func selfPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
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

// isHookCommand reports whether cmd runs 'wcomm hook', by whatever path (bin, the one chosen now,
// included): a hook that an older install wrote with another path is brought up to date, not added
// twice.
func isHookCommand(cmd, bin string) bool {
	words, err := shlex.Split(cmd)
	if err != nil || len(words) < 2 || words[1] != "hook" {
		return false
	}
	base := filepath.Base(words[0])
	return base == "wcomm" || base == "wcomm-mcp" || words[0] == bin || words[0] == mustSelf()
}

// mustSelf is selfPath, or "" when it cannot be found.
func mustSelf() string {
	p, _ := selfPath()
	return p
}
