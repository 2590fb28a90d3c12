package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteSwapKeepsInodes: a record rewritten many times and emptied stays the same two files
// (no inode freed per write), and a reader always finds one whole record.
func TestWriteSwapKeepsInodes(t *testing.T) {
	dir := t.TempDir()
	path, spare := filepath.Join(dir, "rec.json"), filepath.Join(dir, ".rec.spare")
	inodes := map[uint64]bool{}
	for _, text := range []string{"first\n", "second, longer\n", "3\n"} {
		require.NoError(t, WriteSwapNoSync(path, spare, []byte(text)))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, text, string(data))
		for _, p := range []string{path, spare} {
			var st syscall.Stat_t
			if syscall.Stat(p, &st) == nil {
				inodes[st.Ino] = true
			}
			mode, err := os.Stat(p)
			if err == nil {
				assert.Equal(t, os.FileMode(FileMode), mode.Mode().Perm())
			}
		}
	}
	assert.Len(t, inodes, 2, "the record and its spare, reused")

	require.NoError(t, Empty(path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, st.Size())
	require.NoError(t, Empty(filepath.Join(dir, "missing")), "a missing file is already empty")
	_, err = os.Stat(filepath.Join(dir, "missing"))
	assert.True(t, os.IsNotExist(err), "Empty makes no file")

	// A planted link as the spare is not followed.
	target := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o600))
	require.NoError(t, os.Remove(spare))
	require.NoError(t, os.Symlink(target, spare))
	assert.Error(t, WriteSwapNoSync(path, spare, []byte("x\n")))
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep\n", string(data))
}

// TestEmptyBySwapKeepsBlocks: emptying a record swapped in over an empty one trades the two
// names back (no truncation: the record's inode keeps its content, as the spare), a reader
// finds it empty, and the next record is written whole over the old one. With a spare that is
// not empty, or none, it truncates in place.
func TestEmptyBySwapKeepsBlocks(t *testing.T) {
	dir := t.TempDir()
	path, spare := filepath.Join(dir, "inflight.json"), filepath.Join(dir, ".inflight.spare")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.NoError(t, WriteSwapNoSync(path, spare, []byte("a longer first record\n")))
	rec := inodeOf(t, path)
	require.NoError(t, EmptyBySwap(path, spare))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, st.Size(), "emptied")
	assert.Equal(t, rec, inodeOf(t, spare), "the record became the spare, not truncated")
	data, err := os.ReadFile(spare)
	require.NoError(t, err)
	assert.Equal(t, "a longer first record\n", string(data))

	require.NoError(t, WriteSwapNoSync(path, spare, []byte("second\n")))
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "second\n", string(data), "written whole over the older, longer record")

	// The spare now holds the emptied file; fill it by hand: EmptyBySwap must not swap it in.
	require.NoError(t, os.WriteFile(spare, []byte("not empty\n"), 0o600))
	require.NoError(t, EmptyBySwap(path, spare))
	st, err = os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, st.Size())
	data, err = os.ReadFile(spare)
	require.NoError(t, err)
	assert.Equal(t, "not empty\n", string(data))
	require.NoError(t, EmptyBySwap(filepath.Join(dir, "missing"), filepath.Join(dir, ".missing.spare")))
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return st.Ino
}
