package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor reads w's events until one names name, or fails the test at the deadline.
func waitFor(t *testing.T, w *DirWatch, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		evs, err := w.Next(ctx)
		require.NoError(t, err, "no event for %s", name)
		for _, ev := range evs {
			if ev.Name == name {
				return
			}
		}
	}
}

// A watch given back is taken again for the same folder, and still wakes its new user for a
// file made after the take; what happened while it was idle is not reported to that user.
func TestDirWatchesKeepAWatch(t *testing.T) {
	dir := t.TempDir()
	p := NewDirWatches(2)
	w, err := p.Take(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "one"), []byte("1"), 0o600))
	waitFor(t, w, "one")
	p.Give(w, true)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "idle"), []byte("2"), 0o600))
	again, err := p.Take(dir)
	require.NoError(t, err)
	assert.Same(t, w, again, "the kept watch is taken again")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "two"), []byte("3"), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	evs, err := again.Next(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	assert.Equal(t, "two", evs[0].Name, "the idle time's events were dropped at the take")

	// Taken, a watch is its user's alone: a second take of the folder makes another.
	other, err := p.Take(dir)
	require.NoError(t, err)
	assert.NotSame(t, again, other)
	p.Give(again, true)
	p.Give(other, false)
}

// A folder removed, or renamed away, while its watch is kept, and made again at its path: the
// kept watch watches the old folder (or none), so a take makes a new one, which wakes for a
// file of the new folder.
func TestDirWatchesNotKeptForAnotherFolder(t *testing.T) {
	for _, how := range []string{"removed", "renamed"} {
		t.Run(how, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "session")
			require.NoError(t, os.Mkdir(dir, 0o700))
			p := NewDirWatches(2)
			w, err := p.Take(dir)
			require.NoError(t, err)
			p.Give(w, true)

			if how == "removed" {
				require.NoError(t, os.Remove(dir))
			} else {
				require.NoError(t, os.Rename(dir, filepath.Join(base, "away")))
			}
			require.NoError(t, os.Mkdir(dir, 0o700))
			again, err := p.Take(dir)
			require.NoError(t, err)
			assert.NotSame(t, w, again)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "answer"), []byte("1"), 0o600))
			waitFor(t, again, "answer")
			p.Give(again, true)
		})
	}
}
