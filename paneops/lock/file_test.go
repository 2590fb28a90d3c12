package lock

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileExcludesAndTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.lock")
	unlock, err := File(path, syscall.LOCK_EX, 0)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.True(t, IsLocked(path))
	assert.True(t, IsLockedExclusive(path))

	_, err = File(path, syscall.LOCK_SH, 20*time.Millisecond)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK)
	assert.Contains(t, err.Error(), "still held after 20ms")
	_, err = Try(path, syscall.LOCK_EX)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK, "Try does not wait")

	done := make(chan error, 1)
	go func() {
		u, err := File(path, syscall.LOCK_EX, 10*time.Second)
		if err == nil {
			u()
		}
		done <- err
	}()
	unlock()
	require.NoError(t, <-done, "a waiter gets the lock once it is let go")
	// The shared waiter given up on above still waits in the kernel: it may get the lock after
	// the last holder, and then lets go of it at once.
	assert.Eventually(t, func() bool { return !IsLocked(path) }, 10*time.Second, 5*time.Millisecond,
		"the lock is free once every waiter, the one given up on included, has let go")
}

func TestOpenEndsWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.lock")
	held, err := Try(path, syscall.LOCK_EX)
	require.NoError(t, err)
	defer held.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = Open(ctx, path, syscall.LOCK_EX)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the wait ends with its context")
	require.ErrorIs(t, err, syscall.EWOULDBLOCK)

	require.NoError(t, held.Close())
	f, err := Open(context.Background(), path, syscall.LOCK_EX)
	require.NoError(t, err)
	require.NoError(t, f.Close(), "closing the file lets go of the lock")
	// The wait that ended with its context may still get the lock after f, and lets go at once.
	assert.Eventually(t, func() bool { return !IsLocked(path) }, 10*time.Second, 5*time.Millisecond,
		"the lock is free once every waiter has let go")
}

// TestIsLockedSeesSharedHolders: IsLocked sees a shared holder (a waiting await holds one), while
// IsLockedExclusive sees only an exclusive one, and neither creates a missing file.
func TestIsLockedSeesSharedHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.lock")
	assert.False(t, IsLocked(path))
	assert.False(t, IsLockedExclusive(path))
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "asking creates nothing")

	unlock, err := File(path, syscall.LOCK_SH, 0)
	require.NoError(t, err)
	assert.True(t, IsLocked(path))
	assert.False(t, IsLockedExclusive(path))
	unlock()
	assert.False(t, IsLocked(path))
}

func TestFileDoesNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	link := filepath.Join(dir, "l.lock")
	require.NoError(t, os.Symlink(victim, link))
	_, err := File(link, syscall.LOCK_EX, 0)
	require.Error(t, err)
	_, err = os.Lstat(victim)
	assert.ErrorIs(t, err, os.ErrNotExist, "the symlink's target must not be created")
}
