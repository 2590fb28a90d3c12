package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteExclusiveLater(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "001-request.md")
	var s Syncs
	require.NoError(t, WriteExclusiveLater(path, &s, []byte("head\n"), []byte("body\n")))
	// Whole for every reader as soon as it has its name, before its fsync is waited for.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "head\nbody\n", string(data))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(FileMode), st.Mode().Perm())
	require.NoError(t, s.Wait())

	// The first stands; nothing of the second is left behind.
	err = WriteExclusiveLater(path, &s, []byte("other\n"))
	require.ErrorIs(t, err, ErrExists)
	require.NoError(t, s.Wait())
	data, _ = os.ReadFile(path)
	assert.Equal(t, "head\nbody\n", string(data))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temp file left")

	// Without Syncs it is synced before it is published.
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "002"), nil, []byte("x")))
	var none *Syncs
	assert.NoError(t, none.Wait())
}

// A record published after Hold is whole for readers at once, and its fsync begins only at Wait,
// which syncs and closes it; records published before Hold and after Wait begin theirs at once.
func TestWriteExclusiveLaterHeld(t *testing.T) {
	dir := t.TempDir()
	var s Syncs
	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "001-request.md"), &s, []byte("before\n")))
	s.Hold()
	path := filepath.Join(dir, "002-response.md")
	require.NoError(t, WriteExclusiveLater(path, &s, []byte("held\n")))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "held\n", string(data), "whole from its publish")
	s.mu.Lock()
	require.Len(t, s.held, 1, "only the record published after Hold waits for Wait")
	f := s.held[0].f
	s.mu.Unlock()

	require.NoError(t, s.Wait())
	assert.Empty(t, s.held)
	assert.ErrorIs(t, f.Sync(), os.ErrClosed, "synced and closed by Wait")

	require.NoError(t, WriteExclusiveLater(filepath.Join(dir, "003-request.md"), &s, []byte("after\n")))
	s.mu.Lock()
	assert.Empty(t, s.held, "a Wait ends the hold")
	s.mu.Unlock()
	require.NoError(t, s.Wait())
}
