package cli

// A project's settings file that is not trusted changes nothing of how panes are typed into, against
// the real binary and a real tmux server, and the sender is told how to trust it.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EUntrustedProfiles: a project's .wcomm.yaml that renames the built-in shell profile's
// detection changes nothing about how a worker's bash is typed into until the user trusts the
// file, and the sender is told the file's profiles were ignored and how to trust it. Before,
// bash was taken for an unknown program, the whole request pasted and Enter pressed: bash ran the
// request's lines.
func TestE2EUntrustedProfiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	conf := filepath.Join(w.work, ".wcomm.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("agent_profiles:\n  - name: shell\n    detect:\n      names: [no-such-shell]\n"), 0o600))
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}

	victim := t.TempDir()
	worker := w.promptPane(victim, nil, "bash", "--norc", "--noprofile", "-i")
	orch := w.catPane()
	pwned := filepath.Join(victim, "pwned")
	r := w.run(call{pane: orch, env: env}, "send", "--to", worker, "--enter-delay", "50ms", "--", "touch "+pwned)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, conf+" is not trusted")
	assert.Contains(t, r.stderr, "agent_profiles")
	assert.Contains(t, r.stderr, "wcomm trust "+conf)
	w.waitScreen(worker, "# [WORKER")
	w.settle(worker)
	assert.NoFileExists(t, pwned, "the request's line ran in the worker's shell")

	// Trusted, the file's profiles apply: the same bash is now an unknown program to wcomm.
	requireCode(t, 0, w.asPerson(env, "trust", conf))
	r = w.run(call{pane: orch, env: env}, "doctor", "--pane", worker, "--json")
	assert.NotContains(t, r.stderr, "not trusted")
	var doc struct {
		Pane struct {
			Profile struct {
				Name string `json:"name"`
			} `json:"profile"`
		} `json:"pane"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "%s", r)
	assert.Equal(t, "generic", doc.Pane.Profile.Name)
}
