package lifecycle

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pane given up on is written once, private, before the bridge is started, and listed with its
// name, its command cleaned of control characters and how to restart it by hand.
func TestTellGaveUp(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var listedAtTell int
	r := &Room{Root: root, Now: func() time.Time { return now }}
	r.Tell = func() error {
		gs, _ := GaveUpSince(root, now.Add(-time.Minute), now)
		listedAtTell = len(gs)
		return nil
	}
	rec := &Record{Pane: "%3", Server: "1-2", Name: "flaky", Argv: []string{"sh", "-c", "exit 7\x1b]52;c;x\x07"},
		Restarts: []time.Time{now, now, now}}
	require.NoError(t, r.tellGaveUp(rec, 7))
	assert.Equal(t, 1, listedAtTell, "on disk before the bridge is started")

	gs, problems := GaveUpSince(root, now.Add(-time.Minute), now)
	assert.Empty(t, problems)
	require.Len(t, gs, 1)
	g := gs[0]
	assert.Contains(t, g.Words(), "pane %3 (flaky)")
	assert.Contains(t, g.Words(), "status 7 after 3 restarts")
	assert.NotContains(t, g.Words(), "\x1b")
	assert.NotContains(t, g.Words(), "\x07")
	assert.Contains(t, g.Next(), "wcomm restart flaky")

	info, err := os.Stat(filepath.Join(root, Dir, noticesDir, g.ID+".json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	dir, err := os.Stat(filepath.Join(root, Dir, noticesDir))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

	later, _ := GaveUpSince(root, time.Now().Add(time.Hour), now)
	assert.Empty(t, later, "only what was written since")
}

// A status tmux never recorded is said as such, not as a number.
func TestGaveUpWithNoStatusRecorded(t *testing.T) {
	g := GaveUp{Pane: "%3", Argv: []string{"sh"}, Status: -1, Restarts: 3}
	assert.Contains(t, g.Words(), "ended with no exit status recorded after 3 restarts")
	assert.NotContains(t, g.Words(), "-1")
	g.Status = 0
	assert.Contains(t, g.Words(), "ended with status 0 after 3 restarts")
}
