package profile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claudeDialog is Claude Code's permission dialog as claude-permissions.md records it (2.1.332),
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
