package exchange

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/store"
	"github.com/wcomm/wcomm/tmuxcomm/store/storetest"
)

// An await of an id its own process just sent reads neither the root's id hints nor the request
// back: the send's text stands while the request file is as the send left it. The delivery log
// is read as ever, and a request changed since is read from its file.
func TestAwaitOfItsOwnSendReadsNeitherHintsNorRequest(t *testing.T) {
	t.Cleanup(forgetSent)
	root, dir, n, path, parts, id := writeSentRequest(t)
	RememberSent(LoadSent(dir, n, bytes.Join(parts, nil)))
	require.NoError(t, LogEvent(dir, n, StateSubmitted, map[string]string{"evidence": "seen"}, time.Now()))

	var x *Exchange
	where := filepath.Join(root, store.WhereDir)
	var inDir map[string]int
	inWhere := storetest.OpensIn(t, where, func() {
		inDir = storetest.OpensIn(t, dir, func() { x = IDClaimedHere(root, id) })
	})
	require.NotNil(t, x)
	assert.Empty(t, inWhere, "the id's hints are not read")
	assert.Zero(t, inDir[filepath.Base(path)], "the request is not read back (%v)", inDir)
	assert.Equal(t, 1, inDir[LogName(n)], "the delivery log is read (%v)", inDir)
	fresh := LoadExchange(dir, n, false)
	assert.Equal(t, id, x.ID)
	assert.Equal(t, StateSubmitted, x.State, "the log's state, appended to after the send")
	assert.Equal(t, fresh.Integrity, x.Integrity)
	assert.Equal(t, fresh.Summary, x.Summary)
	assert.Equal(t, fresh.SentAt, x.SentAt)

	// The request changed since the send: read from its file, as any other id's.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	changed := bytes.Replace(data, []byte("failing"), []byte("passing tests and the failing"), 1)
	require.NoError(t, os.WriteFile(path, changed, 0o600))
	inDir = storetest.OpensIn(t, dir, func() { x = IDClaimedHere(root, id) })
	require.NotNil(t, x)
	assert.Equal(t, 1, inDir[filepath.Base(path)], "the changed request is read (%v)", inDir)
	assert.Equal(t, "mismatch", x.Integrity, "what the file says now")

	// Another root's await of the id finds nothing kept.
	assert.Nil(t, sentHere(filepath.Join(t.TempDir(), "other"), id))

	// A request handed to another user since is not taken: the read from the files refuses it.
	if os.Getuid() == 0 {
		RememberSent(LoadSent(dir, n, changed))
		require.NotNil(t, sentHere(root, id))
		require.NoError(t, os.Lchown(path, 65534, 65534))
		assert.Nil(t, sentHere(root, id))
	}
}
