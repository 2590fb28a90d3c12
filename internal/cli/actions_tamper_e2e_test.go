package cli

// An approved action whose stored intent was changed after the approval is blocked, never run,
// against the real binary.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2ETamperedIntent: the dispatcher runs only what hashes to the approved definition. An
// intent file whose stored command was changed after the approval (its definition_hash left as
// it was) is blocked, never run, and --dry-run says so and shows the command that would have run.
// Before, the stored argv ran, and the check compared the settings with the stored hash only.
func TestE2ETamperedIntent(t *testing.T) {
	t.Parallel()
	a := newAWorld(t)
	id := a.ask("tamper", "publish")
	a.answer(id, "yes")
	var intent string
	require.NoError(t, filepath.WalkDir(a.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".intent") {
			intent = p
		}
		return err
	}))
	require.NotEmpty(t, intent)
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(readString(t, intent)), &in))
	pwned := filepath.Join(a.work, "pwned")
	in["definition"].(map[string]any)["run"] = []string{"touch", pwned}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(intent, data, 0o600))

	r := a.as("", nil, "actions", "run", "--dry-run", "--id", id)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "action publish (touch "+pwned+")")
	assert.Contains(t, r.stdout, "would block")
	assert.Contains(t, r.stdout, "does not hash to the approved definition")
	r = a.as("", nil, "actions", "run", "--id", id)
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, id+": publish blocked")
	assert.NoFileExists(t, pwned, "the tampered command ran")
	assert.Empty(t, a.executions())
}
