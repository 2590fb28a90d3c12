package bridge

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatcherPokesOnNewFiles: a file written in the root's session folders wakes the hub at
// once, also in a folder made after the watch began once the hub's loop has added it, while the
// watch runs (add and the wait at the same time).
func TestWatcherPokesOnNewFiles(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "20260101-000000-o1-w2")
	require.NoError(t, os.Mkdir(old, 0o700))
	w := newWatcher()
	require.NotNil(t, w)
	w.add(root)

	ctx, cancel := context.WithCancel(context.Background())
	pokes := make(chan struct{}, 100)
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx, func() { pokes <- struct{}{} }) }()
	defer func() { cancel(); <-done }()

	// expect drains earlier pokes, does what, and waits for a poke it caused.
	expect := func(what string, do func()) {
		t.Helper()
		for len(pokes) > 0 {
			<-pokes
		}
		do()
		select {
		case <-pokes:
		case <-time.After(10 * time.Second):
			t.Fatalf("no poke after %s", what)
		}
	}
	expect("a file written in a session folder", func() {
		require.NoError(t, os.WriteFile(filepath.Join(old, "001-question.json"), []byte("{}"), 0o600))
	})
	fresh := filepath.Join(root, "20260101-000001-o3-w4")
	expect("a new session folder", func() { require.NoError(t, os.Mkdir(fresh, 0o700)) })
	w.add(root) // as the hub's loop does when the root changes
	expect("a file written in the new folder", func() {
		require.NoError(t, os.WriteFile(filepath.Join(fresh, "001-question.json"), []byte("{}"), 0o600))
	})
}
