package exchange

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// A long-lived sender opens a pair's session folder once: later sends take the folder it found
// without listing the root (a planted listing's newer folder is not looked at), and one removed
// since is found, or made, anew.
func TestOpenSessionRemembersThePairsFolder(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	b := &Book{Config: core.New(root, nil)}
	dir, s, err := b.OpenSession(root, "%1", "%2", "100-1700000000", "/tmp/sock")
	require.NoError(t, err)

	// A newer folder of the pair, which a listing would prefer.
	newer := filepath.Join(root, "29991231-235959-o1-w2")
	require.NoError(t, os.Mkdir(newer, 0o700))
	meta, err := os.ReadFile(filepath.Join(dir, ".wcomm-session.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(newer, ".wcomm-session.json"), meta, 0o600))
	again, s2, err := b.OpenSession(root, "%1", "%2", "100-1700000000", "/tmp/sock")
	require.NoError(t, err)
	assert.Equal(t, dir, again, "the folder found first, not a listing's")
	assert.Equal(t, s, s2)

	// Removed: the next open lists the root again.
	require.NoError(t, os.RemoveAll(dir))
	third, _, err := b.OpenSession(root, "%1", "%2", "100-1700000000", "/tmp/sock")
	require.NoError(t, err)
	assert.Equal(t, newer, third)
}
