package lock

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
)

// checkEvery is how often a waiter blocked in flock(2) wakes to ask whether to go on waiting.
// The kernel wakes it when the lock is freed, so this only bounds how late a stall or a cancelled
// context is noticed.
const checkEvery = 50 * time.Millisecond

// Flock takes flock(2) lock how (LOCK_EX or LOCK_SH) on f and waits for it in the kernel, until ctx
// ends or check, called every 50 ms while waiting, returns an error; that error (or ctx's) is
// returned. On error f is closed, by Flock or, once its wait ends, by the goroutine that waits.
//
// Waiting in the kernel, not polling LOCK_NB: with sixteen senders polling one pane's lock every
// 2 ms on a 2-core machine with two busy processes, the tmux server got no CPU for up to 30 s at a
// time while the holder waited on it (measured with strace: getuid took 11 s), and the stress run
// failed after 200 s; waiting in the kernel, the same run passes in 9 s. A waiter given up on
// leaves its goroutine blocked in flock until the lock comes free, then lets go of it at once: a
// thread, not a lock, is what an abandoned wait costs.
func Flock(ctx context.Context, f *os.File, how int, check func() error) error {
	return flock(ctx, f, how, check)
}

// lockFile is what flock needs of a lock file: an *os.File, or a bare descriptor (fdFile).
type lockFile interface {
	Fd() uintptr
	Close() error
}

// flock is Flock on any lockFile.
func flock(ctx context.Context, f lockFile, how int, check func() error) error {
	fd := int(f.Fd())
	err := flockRetry(fd, how|syscall.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return err
	}
	if err := ctx.Err(); err != nil { // no time left to wait: that was the one try
		f.Close()
		return err
	}

	var (
		mu        sync.Mutex
		abandoned bool
		done      = make(chan error, 1)
	)
	go func() {
		err := flockRetry(fd, how)
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if err == nil {
				_ = syscall.Flock(fd, syscall.LOCK_UN)
			}
			f.Close()
			return
		}
		done <- err
	}()
	// giveUp abandons the wait unless the lock was taken meanwhile, which then wins.
	giveUp := func(cause error) error {
		mu.Lock()
		defer mu.Unlock()
		select {
		case err := <-done:
			if err != nil {
				f.Close()
			}
			return err
		default:
			abandoned = true
			return cause
		}
	}
	ticker := time.NewTicker(checkEvery)
	defer ticker.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				f.Close()
			}
			return err
		case <-ctx.Done():
			return giveUp(ctx.Err())
		case <-ticker.C:
			if check == nil {
				continue
			}
			if err := check(); err != nil {
				return giveUp(err)
			}
		}
	}
}

// release lets go of f's lock and closes it.
func release(f lockFile) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// flockRetry is flock(2) restarted after a signal.
func flockRetry(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
