package cli

// doctor against the real binary and a real tmux server: a default socket's mode, a pane named by
// its agent, an answer channel's missing token file in the settings' words.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tmux server makes its socket group-writable (0660) in a 0700 folder of its own: nobody else
// can reach it, so doctor must not call it a problem; in a folder others can enter, it is one.
func TestE2EDoctorDefaultSocketMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	require.NoError(t, os.Chmod(w.sock, 0o660))
	require.NoError(t, os.Chmod(w.dir, 0o700))

	r := w.in(orch, "doctor")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "problems:     none")

	require.NoError(t, os.Chmod(w.dir, 0o755))
	t.Cleanup(func() { _ = os.Chmod(w.dir, 0o700) })
	r = w.in(orch, "doctor")
	requireCode(t, 1, r)
	assert.Contains(t, r.stdout, "accessible to others")
}

// doctor --pane takes what send --to takes: an agent name found as find does, not only a pane id
// or a tmux target.
func TestE2EDoctorPaneByAgentName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.bashPane("")
	worker, _, _ := w.workerPane(false)

	r := w.in(orch, "doctor", "--pane", "worker", "--json")
	requireCode(t, 0, r)
	d := decode[doctorJSON](t, r)
	require.NotNil(t, d.Pane, "%s", r)
	assert.Equal(t, worker, d.Pane.ID)

	r = w.in(orch, "doctor", "--pane", "no-such-agent")
	requireCode(t, 4, r)
}

// TestE2EDoctorChannelWords: a Telegram token file that does not exist is reported by doctor
// in the settings' words (channels.telegram, the file), without the hidden command that checks the
// channels. Before, it read "wcomm-bridge: wcomm __channels: ...".
func TestE2EDoctorChannelWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	home := t.TempDir()
	conf := filepath.Join(home, ".config", "wcomm", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(conf), 0o700))
	missing := filepath.Join(home, "no-such-token")
	require.NoError(t, os.WriteFile(conf, []byte("channels:\n  telegram:\n    token_file: "+missing+"\n    chat_id: 5\n    allowed_users: [7]\n"), 0o600))
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}

	r := w.run(call{env: env}, "doctor", "-S", w.sock)
	assert.Contains(t, r.stdout, "channels.telegram", "%s", r)
	assert.Contains(t, r.stdout, missing, "%s", r)
	assert.NotContains(t, r.stdout+r.stderr, "__channels", "%s", r)
	assert.NotContains(t, r.stdout+r.stderr, "wcomm-bridge:", "%s", r)
}
