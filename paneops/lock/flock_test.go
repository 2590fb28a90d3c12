package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFlockAbandonedWaitLetsGo: a wait given up on (by check or by ctx) must not keep the lock when
// the kernel hands it over later, or the next sender would wait on a process that is not sending.
func TestFlockAbandonedWaitLetsGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		require.NoError(t, err)
		return f
	}
	holder := open()
	require.NoError(t, Flock(context.Background(), holder, syscall.LOCK_EX, nil))

	errStop := errors.New("stop waiting")
	checks := 0
	err := Flock(context.Background(), open(), syscall.LOCK_EX, func() error {
		if checks++; checks == 2 {
			return errStop
		}
		return nil
	})
	require.ErrorIs(t, err, errStop, "check ends the wait with its error")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Flock(ctx, open(), syscall.LOCK_SH, nil), context.Canceled)

	require.NoError(t, syscall.Flock(int(holder.Fd()), syscall.LOCK_UN))
	holder.Close()
	// Both abandoned waiters now get the lock in turn and must let go of it at once.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	next := open()
	require.NoError(t, Flock(ctx, next, syscall.LOCK_EX, nil), "the lock is free again")
	next.Close()
}

// TestFlockWakesOnRelease: a waiter blocked in the kernel takes the lock once it is released, and
// a shared lock admits other shared holders at once.
func TestFlockWakesOnRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	require.NoError(t, Flock(context.Background(), a, syscall.LOCK_SH, nil))
	require.NoError(t, Flock(context.Background(), b, syscall.LOCK_SH, nil), "shared with shared")

	var released atomic.Int32
	done := make(chan error, 1)
	go func() {
		err := Flock(context.Background(), open(), syscall.LOCK_EX, nil)
		if err == nil && released.Load() != 2 {
			err = fmt.Errorf("exclusive lock taken while %d shared holders remained", 2-released.Load())
		}
		done <- err
	}()
	released.Add(1)
	require.NoError(t, syscall.Flock(int(a.Fd()), syscall.LOCK_UN))
	released.Add(1)
	require.NoError(t, syscall.Flock(int(b.Fd()), syscall.LOCK_UN))
	require.NoError(t, <-done)
}
