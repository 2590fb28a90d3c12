package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/prompts")

// TestPromptGolden keeps the words agents read, per role and agent, in golden files, so that a
// change to them shows in review as a diff of the text itself. Regenerate with
// go test ./internal/cli -run TestPromptGolden -update.
func TestPromptGolden(t *testing.T) {
	for _, env := range []string{"WCOMM_ROOT", "TMUX", "TMUX_PANE", "WCOMM_BIN"} {
		t.Setenv(env, "")
	}
	dir := filepath.Join("..", "..", "testdata", "prompts")
	for _, role := range []string{"orchestrator", "worker"} {
		for _, agent := range []string{"generic", "claude", "codex", "gemini"} {
			name := role + "-" + agent + ".txt"
			t.Run(name, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := Run(Companions{}, []string{"prompt", role, "--agent", agent}, strings.NewReader(""), &stdout, &stderr)
				require.Equal(t, exitOK, code, stderr.String())
				golden := filepath.Join(dir, name)
				if *update {
					require.NoError(t, os.MkdirAll(dir, 0o755))
					require.NoError(t, os.WriteFile(golden, stdout.Bytes(), 0o644))
					return
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "no golden file: run go test ./internal/cli -run TestPromptGolden -update")
				assert.Equal(t, string(want), stdout.String(), "the prompt changed; if that is meant, run with -update and review the diff")
			})
		}
	}
}

// TestDeliveryFlagsAgree checks that every command taking --enter-delay, --busy-wait, --from or
// --agent (as a delivery profile) declares it the same way: one meaning, one default.
func TestDeliveryFlagsAgree(t *testing.T) {
	// prompt and hook take --agent as the kind of agent they write for, not as a profile.
	other := map[string]bool{"prompt": true, "hook": true}
	seen := map[string]string{}
	users := map[string][]string{}
	for name, cmd := range commands {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		cmd.Setup(fs, &cli{})
		for _, f := range []string{flagEnterDelay, flagBusyWait, flagFrom, flagAgent} {
			fl := fs.Lookup(f)
			if fl == nil || (f == flagAgent && other[name]) {
				continue
			}
			got := fl.Usage + " (default " + fl.DefValue + ")"
			if want, ok := seen[f]; ok {
				assert.Equal(t, want, got, "--%s of %s differs from %v's", f, name, users[f])
			}
			seen[f] = got
			users[f] = append(users[f], name)
		}
	}
	for _, f := range []string{flagEnterDelay, flagBusyWait, flagFrom, flagAgent} {
		assert.GreaterOrEqual(t, len(users[f]), 2, "--%s is shared", f)
	}
}
