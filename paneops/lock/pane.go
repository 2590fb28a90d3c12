package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
)

// ErrTimeout is a pane's send lock still held when the wait for it ends: its holder stalled, or
// the caller's deadline came first (Pane).
var ErrTimeout = errors.New("timed out waiting for the pane's send lock")

// maxKeyLen bounds the server key in a lock file name; a tmux server's key is two decimal numbers.
const maxKeyLen = 64

// Pane takes the cross-process send lock for (key, pane): flock on DIR/pane-KEY-N.lock (created
// 0600, DIR 0700), waiting in the kernel (see Flock) until it is free or ctx ends. The lock dies
// with the process.
//
// timeout bounds a stall, not the wait: it is how long one holder may keep the lock before a waiter
// gives up on it as hung. Each holder writes its pid and the time it took the lock into the lock
// file, so a waiter sees the lock change hands; sixteen senders queued behind one pane on a loaded
// machine all get through however long the queue takes, while a hung holder is reported after
// timeout with its pid (ErrTimeout). A timeout <= 0 waits for ctx alone.
//
// flock, not tmux's wait-for -L: a wait-for lock has no owner, so a killed holder or waiter leaves
// it locked for good (measured on tmux 3.3a). Each call opens its own file description, so goroutines of
// one process exclude each other too. The lock file is never removed: unlinking a file another
// process is about to lock would give two holders.
func Pane(ctx context.Context, dir, key string, pane messages.PaneID, timeout time.Duration) (unlock func(), err error) {
	n := pane.Num()
	if n < 0 {
		return nil, fmt.Errorf("invalid pane id %q: want %%N, like %%7", string(pane))
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "pane-"+key+"-"+strconv.Itoa(n)+".lock")
	f, err := createFD(path)
	if err != nil {
		return nil, fmt.Errorf("open the send lock of pane %s: %w", pane, err)
	}
	var once sync.Once
	unlock = func() { once.Do(func() { release(f) }) }
	// A lock free at once is taken without reading the last holder's record (a pread, two with
	// an os.File): the record serves only a waiter, to see the lock change hands while
	// it waits. Flock below tries LOCK_NB again, the same try; exclusion is flock's either way.
	if err := flockRetry(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		writeHolder(f)
		return unlock, nil
	}
	holder := readHolder(f)
	stallStart := time.Now()
	stalled := func() error {
		if timeout <= 0 {
			return nil
		}
		if h := readHolder(f); h != holder {
			holder, stallStart = h, time.Now()
			return nil
		}
		if time.Since(stallStart) < timeout {
			return nil
		}
		return paneTimeout(ctx, pane, path, holder, timeout)
	}
	if err := flock(ctx, f, syscall.LOCK_EX, stalled); err != nil {
		switch {
		case errors.Is(err, ErrTimeout):
			return nil, err
		case errors.Is(err, context.DeadlineExceeded):
			return nil, paneTimeout(ctx, pane, path, holder, 0)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("waiting for the send lock of pane %s: %w", pane, err)
		}
		return nil, fmt.Errorf("lock %s for pane %s: %w", path, pane, err)
	}
	writeHolder(f)
	return unlock, nil
}

// maxHolderLen bounds what is read of a lock file: "PID UNIXNANO\n" fits many times over.
const maxHolderLen = 64

// writeHolder records who holds the lock. Best effort: a lock file that cannot be written still
// excludes, and waiters then measure the stall from when they began to wait. The record has one
// width (holderLine), written over the last holder's in place: a truncate and a write freed the
// file's block and took a new one at every delivery, and its close then discarded the block's
// preallocation, together about a third of what taking and letting go of the lock cost.
func writeHolder(f fdFile) {
	_, _ = f.WriteAt(holderLine(proc.SelfPID(), time.Now().UnixNano()), 0)
}

// holderLen is the width of a holder's record: "PID", spaces up to 10 characters, a space, the
// time in nanoseconds as 20 digits, a newline; wider than the records of the versions that
// truncated, so it covers any of them whole.
const holderLen = 32

// holderLine is the holder record of pid at nanos.
func holderLine(pid int, nanos int64) []byte {
	b := make([]byte, 0, holderLen)
	b = strconv.AppendInt(b, int64(pid), 10)
	for len(b) < 10 {
		b = append(b, ' ')
	}
	b = append(b, ' ')
	ns := strconv.FormatInt(max(nanos, 0), 10)
	for i := len(ns); i < 20; i++ {
		b = append(b, '0')
	}
	return append(append(b, ns...), '\n')
}

// readHolder returns the lock file's holder line, "" when there is none or it cannot be read.
func readHolder(f fdFile) string {
	var b [maxHolderLen]byte
	n, _ := f.ReadAt(b[:], 0)
	return strings.TrimSpace(string(b[:n]))
}

// paneTimeout is the error for a lock still held at the deadline; held is how long its holder has
// kept it, when that is what ran out.
func paneTimeout(ctx context.Context, pane messages.PaneID, path, holder string, held time.Duration) error {
	who := "another sender"
	// The pid is shown only when it is one: the file is ours (0600 in a 0700 folder), but an error
	// message is no place for bytes read from disk.
	if pid, _, _ := strings.Cut(holder, " "); pid != "" && strings.Trim(pid, "0123456789") == "" {
		who = "wcomm process " + pid
	}
	still := "is still delivering to it"
	if held > 0 {
		still = "has held it for " + held.String() + " without letting go"
	}
	err := fmt.Errorf("%w: pane %s (%s); %s %s: retry later, or look for a hung wcomm process",
		ErrTimeout, pane, path, who, still)
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", err, ctx.Err())
	}
	return err
}

// checkKey admits only [A-Za-z0-9_-]: the key becomes part of a file name.
func checkKey(key string) error {
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

// ownUID is this process's uid, asked once (getuid is a system call each time, on every
// delivery's path); wcomm never changes its uid.
var ownUID = os.Getuid()

// ensureDir creates dir 0700 if needed and refuses one that another user could tamper with:
// a symlink, not a folder, owned by someone else, or writable by group or others.
func ensureDir(dir string) error {
	if dir == "" {
		return errors.New("no lock folder: the pane lock needs a folder (Delivery.LockDir)")
	}
	// Lstat first, MkdirAll only for a folder not there: MkdirAll stats a folder that exists
	// before the Lstat below checks it again, one stat more on every delivery for nothing.
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create the lock folder: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
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
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != ownUID {
		return fmt.Errorf("lock folder %s belongs to uid %d, not to us (uid %d): choose another folder", dir, st.Uid, ownUID)
	}
	return nil
}
