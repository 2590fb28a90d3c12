package store

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// ReadFileText and ReadFile return the whole file whatever its size against their buffers: a read
// that stops at the file's size ends the reading, and one that does not reads on to the end.
func TestReadFileWhole(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200_000} {
		want := bytes.Repeat([]byte("ab\n"), n/3+1)[:n]
		path := filepath.Join(dir, strconv.Itoa(n))
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		text, _, err := ReadFileText(path)
		if err != nil || text != string(want) {
			t.Fatalf("ReadFileText of %d bytes: %d, %v", n, len(text), err)
		}
		data, err := ReadFile(path)
		if err != nil || !bytes.Equal(data, want) {
			t.Fatalf("ReadFile of %d bytes: %d, %v", n, len(data), err)
		}
	}
}

// OpenFile is os.OpenFile for the store's files: close-on-exec, the os package's errors, and
// never through a symlink when O_NOFOLLOW is asked.
func TestOpenFileIsAPlainOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, FileMode)
	require.NoError(t, err)
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	require.NoError(t, err)
	assert.NotZero(t, flags&unix.FD_CLOEXEC, "close-on-exec")
	_, err = f.Write([]byte("one\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(FileMode), st.Mode().Perm())

	_, err = OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY, 0)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, os.Symlink(path, filepath.Join(dir, "link")))
	_, err = OpenFile(filepath.Join(dir, "link"), os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	assert.Error(t, err, "a symlink is not followed")
}
