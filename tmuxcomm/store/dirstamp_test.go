package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A folder's listing is remembered while its stamp holds and it has settled: an entry made in it
// lists it again, and so does each look while its last change is recent.
func TestDirMemoListsAgainOnceTheFolderChanged(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(dir, old, old))
	var memo DirMemo[int]
	lists := 0
	count := func() (int, error) {
		lists++
		ents, err := os.ReadDir(dir)
		return len(ents), err
	}
	for range 3 {
		n, err := memo.Get(dir, dir, count)
		require.NoError(t, err)
		assert.Equal(t, 0, n)
	}
	assert.Equal(t, 1, lists, "a settled folder that did not change is listed once")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "one"), nil, 0o600))
	for range 2 {
		n, err := memo.Get(dir, dir, count)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "the entry made since is seen")
	}
	assert.Equal(t, 3, lists, "a folder changed just now is listed at each look")

	require.NoError(t, os.RemoveAll(dir))
	_, err := memo.Get(dir, dir, count)
	assert.Error(t, err, "a folder gone is an error, not what was remembered")
}
