package tmuxcomm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// A server that keeps its session folder's watch numbers its next request from what the watch saw
// made there: the exchange files of every sender, a sender of the plain procedure that counts
// files among them, and the worker's response, as a listing of the folder would number it. The
// hint and a look at the next numbers see only a few numbers past the last claim.
func TestSendNumbersFromItsKeptWatch(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	b := &exchange.Book{Config: core.New(root, nil), Numbers: keptNumbers}
	dir, sess, err := b.OpenSession(root, "%1", "%2", "100-1700000000", "/tmp/sock")
	require.NoError(t, err)
	send := func() int {
		t.Helper()
		h := messages.RequestHeader{Capability: core.DefaultCapability, StartedAt: sess.StartedAt, Orchestrator: "%1", Worker: "%2", Bytes: -1}
		n, _, _, err := b.WriteRequest(dir, sess, h, []byte("work\n"), nil)
		require.NoError(t, err)
		return n
	}
	touch := func(n int, k messages.Kind) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(n, k)), []byte("x\n"), 0o600))
	}
	assert.Equal(t, 1, send(), "no watch yet: the files tell")
	// An await watches the folder and keeps the watch.
	w, err := keptWatches.Take(dir)
	require.NoError(t, err)
	keptWatches.Give(w, true)
	t.Cleanup(func() {
		if w, err := keptWatches.Take(dir); err == nil {
			w.Close()
		}
	})
	touch(2, messages.KindResponse)
	assert.Equal(t, 3, send(), "the files tell, after the watch's events were taken in")

	touch(4, messages.KindResponse) // the worker's response
	touch(7, messages.KindRequest)  // a sender of the plain procedure, counting files
	touch(20, messages.KindRequest) // and one more, far past what a look at the next numbers sees
	files, _, err := exchange.ListSeq(dir)
	require.NoError(t, err)
	require.Len(t, files, 6)
	assert.Equal(t, 22, send(), "numbered as the listing numbers it, from the watch")
	assert.Equal(t, 24, send())
	touch(25, messages.KindResponse)
	assert.Equal(t, 26, send())
}

// A sender that lives on keeps its folder's watch from its first send (Keep), with no await to
// keep one: its next request is numbered from what the watch saw, a file far past the folder's
// hint among it, where a look at the numbers after the hint would not reach it.
func TestSendKeepsItsFolderWatch(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	b := &exchange.Book{Config: core.New(root, nil), Numbers: keptNumbers}
	dir, sess, err := b.OpenSession(root, "%1", "%2", "100-1700000001", "/tmp/sock")
	require.NoError(t, err)
	t.Cleanup(func() {
		if w, err := keptWatches.Take(dir); err == nil {
			w.Close()
		}
	})
	send := func() int {
		t.Helper()
		keptNumbers.Keep(dir)
		h := messages.RequestHeader{Capability: core.DefaultCapability, StartedAt: sess.StartedAt, Orchestrator: "%1", Worker: "%2", Bytes: -1}
		n, _, _, err := b.WriteRequest(dir, sess, h, []byte("work\n"), nil)
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 1, send())
	_, _, kept := keptWatches.Newest(dir)
	assert.True(t, kept, "the first send left its folder's watch kept")
	require.NoError(t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(30, messages.KindRequest)), []byte("x\n"), 0o600))
	assert.Equal(t, 32, send(), "numbered from the watch, past a request the hint's look would not reach")
	assert.Equal(t, 34, send())
}
