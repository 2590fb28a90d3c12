package paneops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
)

// lockPoll is how often LockPane retries a held lock. A delivery holds the lock for a few
// milliseconds plus the Enter delay, so a short poll keeps waiters close behind.
const lockPoll = 2 * time.Millisecond

// maxKeyLen bounds the server key in a lock file name; ServerInfo.Key() is two decimal numbers.
const maxKeyLen = 64

// LockPane takes the cross-process lock for (key, pane): flock on DIR/pane-KEY-N.lock (created 0600,
// DIR 0700), polling with LOCK_NB to the deadline of ctx or timeout. The lock dies with the process.
//
// flock, not tmux's wait-for -L: a wait-for lock has no owner, so a killed holder or waiter leaves
// it locked for good (measured on tmux 3.3a). Each call opens its own file description, so goroutines of
// one process exclude each other too. A timeout <= 0 waits for ctx alone. The lock file is never
// removed: unlinking a file another process is about to lock would give two holders.
func LockPane(ctx context.Context, dir, key string, pane messages.PaneID, timeout time.Duration) (unlock func(), err error) {
	n, err := paneNum(pane)
	if err != nil {
		return nil, err
	}
	if err := checkLockKey(key); err != nil {
		return nil, err
	}
	if err := ensureLockDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "pane-"+key+"-"+strconv.Itoa(n)+".lock")
	// O_NOFOLLOW: a symlink planted at the lock path must not make us create or lock another file.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the send lock of pane %s: %w", pane, err)
	}
	deadline, hasDeadline := ctx.Deadline()
	if timeout > 0 {
		if d := time.Now().Add(timeout); !hasDeadline || d.Before(deadline) {
			deadline, hasDeadline = d, true
		}
	}
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			var once sync.Once
			return func() {
				once.Do(func() {
					_ = syscall.Flock(fd, syscall.LOCK_UN)
					f.Close()
				})
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s for pane %s: %w", path, pane, err)
		}
		wait := lockPoll
		if hasDeadline {
			left := time.Until(deadline)
			if left <= 0 {
				f.Close()
				return nil, lockTimeout(ctx, pane, path)
			}
			wait = min(wait, left)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			f.Close()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, lockTimeout(ctx, pane, path)
			}
			return nil, fmt.Errorf("waiting for the send lock of pane %s: %w", pane, ctx.Err())
		case <-timer.C:
		}
	}
}

// lockTimeout is the error for a lock still held at the deadline.
func lockTimeout(ctx context.Context, pane messages.PaneID, path string) error {
	err := fmt.Errorf("%w: pane %s (%s); another sender is still delivering to it: retry later, or look for a hung wcomm process",
		ErrLockTimeout, pane, path)
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", err, ctx.Err())
	}
	return err
}

// checkLockKey admits only [A-Za-z0-9_-]: the key becomes part of a file name.
func checkLockKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("invalid lock key %q: want 1 to %d characters, like a server key 1234-1700000000", key, maxKeyLen)
	}
	for _, r := range key {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return fmt.Errorf("invalid lock key %q: only letters, digits, '-' and '_' may name a lock file", key)
		}
	}
	return nil
}

// ensureLockDir creates dir 0700 if needed and refuses one that another user could tamper with:
// a symlink, not a folder, owned by someone else, or writable by group or others.
func ensureLockDir(dir string) error {
	if dir == "" {
		return errors.New("no lock folder: the pane lock needs a folder (Delivery.LockDir)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the lock folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check the lock folder: %w", err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("lock folder %s is a symlink: point LockDir at a real folder", dir)
	case !fi.IsDir():
		return fmt.Errorf("lock folder %s is not a folder: remove it or choose another", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("lock folder %s is writable by others (mode %v): chmod 700 it", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("lock folder %s belongs to uid %d, not to us (uid %d): choose another folder", dir, st.Uid, os.Getuid())
	}
	return nil
}
