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

// A write into a file its writer still holds is told as Written; its creation, the close that
// ends the write and a rename into the folder are not: a waiter for a complete file looks at it
// on those, and not on each write.
func TestDirWatchTellsWritesAlone(t *testing.T) {
	dir := t.TempDir()
	w, err := NewDirWatcher(dir)
	require.NoError(t, err)
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// next reads events until one names name, and returns that name's events of the batch.
	next := func(name string) []DirEvent {
		t.Helper()
		for {
			evs, err := w.Next(ctx)
			require.NoError(t, err, "no event for %s", name)
			var mine []DirEvent
			for _, ev := range evs {
				if ev.Name == name {
					mine = append(mine, ev)
				}
			}
			if len(mine) > 0 {
				return mine
			}
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "resp"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	evs := next("resp")
	assert.False(t, evs[0].Written, "a creation is not a write alone")
	_, err = f.WriteString("part")
	require.NoError(t, err)
	evs = next("resp")
	assert.Equal(t, []DirEvent{{Name: "resp", Written: true}}, evs, "a write while the writer holds the file")
	require.NoError(t, f.Close())
	evs = next("resp")
	assert.False(t, evs[len(evs)-1].Written, "the close that ends the write")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp"), []byte("x"), 0o600))
	require.NoError(t, os.Rename(filepath.Join(dir, "tmp"), filepath.Join(dir, "moved")))
	evs = next("moved")
	assert.Equal(t, []DirEvent{{Name: "moved", Moved: true}}, evs)
}

// A kept watch tells the highest numbered exchange file made or renamed into its folder since it
// began, ranked as a listing ranks them, whoever made it and whether or not a waiter read the
// events; a folder made anew at the path, or a watch not kept, tells nothing.
func TestDirWatchesTellTheNewestExchangeFile(t *testing.T) {
	dir := t.TempDir()
	p := NewDirWatches(2)
	_, _, ok := p.Newest(dir)
	assert.False(t, ok, "no watch kept")
	w, err := p.Take(dir)
	require.NoError(t, err)
	gen := w.gen
	require.NoError(t, os.WriteFile(filepath.Join(dir, "003-request.md"), []byte("x"), 0o600))
	waitFor(t, w, "003-request.md") // read by the waiter
	p.Give(w, true)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "004-response.md"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".tmp-1"), []byte("x"), 0o600))
	require.NoError(t, os.Rename(filepath.Join(dir, ".tmp-1"), filepath.Join(dir, "002-request.md")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.md"), []byte("x"), 0o600))

	newest, g, ok := p.Newest(dir) // the rest read here
	require.True(t, ok)
	assert.Equal(t, gen, g, "the same watch")
	assert.Equal(t, Newest{N: 4}, newest, "a response above the request before it")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "004-request.md"), []byte("x"), 0o600))
	w, err = p.Take(dir) // the event is read by the taker: still counted
	require.NoError(t, err)
	assert.Equal(t, gen, w.gen)
	p.Give(w, true)
	newest, _, ok = p.Newest(dir)
	require.True(t, ok)
	assert.Equal(t, Newest{N: 4, Request: true}, newest, "a request above its number's response")

	// A folder made anew at the path: its watch is let go, and nothing is told.
	require.NoError(t, os.Rename(dir, dir+".old"))
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, _, ok = p.Newest(dir)
	assert.False(t, ok)
	w, err = p.Take(dir)
	require.NoError(t, err)
	assert.NotEqual(t, gen, w.gen, "a new watch")
	w.Close()
}

// A nudge ends a wait in progress on a real inotify watch, which no event and no bound would
// end, as a tick would: a nil slice and a nil error. A nudge that comes before the wait began is
// lost, so the test nudges again until the wait ends, to a deadline.
func TestTreeWatcherNudgeEndsAWait(t *testing.T) {
	w, err := NewTreeWatcher()
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Add(t.TempDir()))
	type result struct {
		evs []TreeEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := w.NextUntil(context.Background(), time.Time{})
		done <- result{evs, err}
	}()
	deadline := time.After(20 * time.Second)
	for {
		w.Nudge()
		select {
		case r := <-done:
			assert.NoError(t, r.err)
			assert.Nil(t, r.evs)
			return
		case <-deadline:
			t.Fatal("a nudged wait did not end")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
