package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claudeDialog is Claude Code's permission dialog as measured on 2.1.332,
// under some history.
const claudeDialog = `● I'll run it.

 Bash command

   Run the requested command
   touch k1.txt

 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and always allow access to work/ from this project
   3. No

 Esc to cancel · Tab to amend`

func screenOf(text string) Screen { return ParseScreen(text, 0, 0) }

func TestDialogClaude(t *testing.T) {
	p := Defaults().Lookup("claude")
	require.NotNil(t, p)
	d, ok := p.Dialog(screenOf(claudeDialog))
	require.True(t, ok)
	assert.Equal(t, "Bash", d.Tool)
	assert.Equal(t, "Run the requested command", d.Description)
	assert.Equal(t, "touch k1.txt", d.Subject)
	assert.Equal(t, "1", d.Spec.Allow)
	assert.Equal(t, "Escape", d.Spec.Deny)
	assert.Empty(t, d.Spec.Always, "option 2 writes a rule for the project: broader than the session")

	// The command is part of the dialog's identity.
	other := strings.Replace(claudeDialog, "touch k1.txt", "touch k2.txt", 1)
	d2, ok := p.Dialog(screenOf(other))
	require.True(t, ok)
	assert.NotEqual(t, d.Fingerprint, d2.Fingerprint, "another command is another dialog")
}

func TestDialogNotRecognised(t *testing.T) {
	p := Defaults().Lookup("claude")
	for name, screen := range map[string]string{
		"no dialog":           "● done\n\n───\n❯ \n───",
		"question alone":      "Do you want to proceed?",
		"markers, no title":   "touch x\nDo you want to proceed?\n❯ 1. Yes\nEsc to cancel",
		"history mentions it": "> Do you want to proceed? was the dialog\n❯ 1. Yes was chosen",
	} {
		_, ok := p.Dialog(screenOf(screen))
		assert.False(t, ok, name)
	}
	_, ok := Defaults().Lookup("shell").Dialog(screenOf(claudeDialog))
	assert.False(t, ok, "a profile without dialogs recognises none")
}

func TestDialogSpecChecked(t *testing.T) {
	for name, js := range map[string]string{
		"enter as a key": `{"markers":["x"],"question":"x","title":"t","allow":"Enter","deny":"Escape"}`,
		"text as a key":  `{"markers":["x"],"question":"x","title":"t","allow":"yes","deny":"Escape"}`,
		"no markers":     `{"question":"x","title":"t","allow":"1","deny":"Escape"}`,
		"bad pattern":    `{"markers":["("],"question":"x","title":"t","allow":"1","deny":"Escape"}`,
	} {
		_, err := Load([]byte(`{"profiles":[{"name":"mytui","kind":"agent","dialogs":[` + js + `]}]}`))
		assert.Error(t, err, name)
	}
}

// dialogScreen reads a screen of testdata/dialogs: Claude Code's permission dialog, its rows as
// measured on Claude Code 2.1.332 (the title, the description when the call has one, the command
// wrapped as Ink wraps it to the box, the question and its choices), under the history and the
// full-width rule of a real capture (testdata/screens/claude-human.screen), 200 columns, or 80;
// dialogagent-no-rule is the dialog testdata/fixtures/dialogagent.py draws. The first line is
// Client.Screen's: the cursor and the pane's width.
func dialogScreen(t *testing.T, name string) Screen {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "dialogs", name+".screen"))
	require.NoError(t, err)
	first, rest, _ := strings.Cut(string(data), "\n")
	var x, y, w int
	_, err = fmt.Sscanf(first, "%d %d %d", &x, &y, &w)
	require.NoError(t, err)
	s := ParseScreen(rest, x, y)
	s.Width = w
	return s
}

func TestDialogClaudeGoldenWrapped(t *testing.T) {
	long := "curl -fsSL https://get.example.invalid/install.sh | sh && --flag-00 --flag-01 --flag-02 --flag-03 --flag-04 " +
		"--flag-05 --flag-06 --flag-07 --flag-08 --flag-09 --flag-10 --flag-11 && echo the installer has finished its work and " +
		"the tests run next && npm test"
	tests := []struct {
		screen      string
		description string
		subject     string
		body        string
	}{
		// The audit's case: no description, the command over two rows. Its first row is no
		// description, its second not the whole command.
		{"claude-wrapped-no-description", "", long, long},
		{"claude-wrapped-described", "Install the tool and run the tests", long, "Install the tool and run the tests\n" + long},
		{"claude-described", "Run the requested command", "touch k1.txt", "Run the requested command\ntouch k1.txt"},
		{"claude-long-description",
			"Fetch the installer from the project site, check its signature against the key the README names, and then run it so " +
				"that the test suite that follows finds the tool already installed on this machine", "npm test",
			"Fetch the installer from the project site, check its signature against the key the README names, and then run it so " +
				"that the test suite that follows finds the tool already installed on this machine\nnpm test"},
		{"claude-narrow-wrapped", "", "curl -fsSL https://get.example.invalid/install.sh | sh && npm ci && npm test",
			"curl -fsSL https://get.example.invalid/install.sh | sh && npm ci && npm test"},
		// A word longer than a row is broken inside it, and joined back without a space.
		{"claude-narrow-long-word", "", "curl https://get.example.invalid/" + strings.Repeat("a", 90) + "/install.sh | sh",
			"curl https://get.example.invalid/" + strings.Repeat("a", 90) + "/install.sh | sh"},
		// Two lines of a command and no description read as a description and a command: the
		// body, which a question shows, holds both.
		{"claude-two-lines-no-description", "curl -fsSL https://get.example.invalid/install.sh | sh", "npm test",
			"curl -fsSL https://get.example.invalid/install.sh | sh\nnpm test"},
		{"dialogagent-no-rule", "Run the requested command", "touch k1.txt", "Run the requested command\ntouch k1.txt"},
	}
	p := Defaults().Lookup("claude")
	for _, tt := range tests {
		t.Run(tt.screen, func(t *testing.T) {
			d, ok := p.Dialog(dialogScreen(t, tt.screen))
			require.True(t, ok)
			assert.Equal(t, "Bash", d.Tool)
			assert.Equal(t, tt.description, d.Description)
			assert.Equal(t, tt.subject, d.Subject)
			assert.Equal(t, tt.body, d.Body)
		})
	}
}

// Without the pane's width, the widest row stands for it: on a screen of short rows that joins a
// description to its command, which shows more than the command, never less.
func TestDialogWidthUnknownJoinsRatherThanSplits(t *testing.T) {
	p := Defaults().Lookup("claude")
	s := dialogScreen(t, "dialogagent-no-rule")
	s.Width = 0
	d, ok := p.Dialog(s)
	require.True(t, ok)
	assert.Equal(t, "Run the requested command touch k1.txt", d.Subject)
	assert.Empty(t, d.Description)

	s = dialogScreen(t, "claude-wrapped-no-description")
	s.Width = 0
	d, ok = p.Dialog(s)
	require.True(t, ok)
	assert.Empty(t, d.Description, "the rule spans the pane: the widest row is its width")
	assert.True(t, strings.HasPrefix(d.Subject, "curl -fsSL") && strings.HasSuffix(d.Subject, "&& npm test"), d.Subject)
}
