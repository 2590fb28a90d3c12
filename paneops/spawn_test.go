package paneops

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidName(t *testing.T) {
	long := "a" + strings.Repeat("b", 63)
	for _, ok := range []string{"alpha", "w1", "Review_bot-2", "Z", long} {
		assert.NoError(t, ValidName(ok), ok)
	}
	// Anything another kind of target could be, or a format could mistake: a pane id, a tmux
	// target, a group, a leading digit or dash, spaces.
	for _, bad := range []string{"", "%3", "work:1", "a.b", "@reviewers", "1st", "-x", "a b", "x;", long + "c", "é", "aé", "_x", "a\n"} {
		assert.Error(t, ValidName(bad), bad)
	}
}

func TestCheckArgv(t *testing.T) {
	assert.NoError(t, CheckArgv("command", []string{"sh", "-c", "a; b"}))
	assert.Error(t, CheckArgv("command", []string{"echo", "a;"}), "tmux eats a trailing ';'")
	assert.Error(t, CheckArgv("command", []string{"printf", "a\nb"}))
}
