package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// fileMode is a lock file's mode: it may hold who holds it, which is no one else's business.
const fileMode = 0o600

// create opens path read-write, creating it 0600. O_NOFOLLOW: a symlink planted at a lock's path
// must not make us create or lock another file.
func create(path string) (*os.File, error) {
	return openFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, fileMode)
}

// openFile opens path as os.OpenFile does (O_CLOEXEC added) without offering the file to the
// runtime's poller, which refuses a regular file after four fcntl calls and an epoll_ctl: a lock
// file is only flocked, and taking one is on every delivery's path.
func openFile(path string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, perm)
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// fdFile is a lock file held as a bare descriptor, for the locks taken on every delivery (a
// pane's send lock, an outbox's drain lock): an os.File costs an fcntl at its making, and these
// files are only flocked, and read or written at offset 0. Each is closed exactly once, by
// release or by flock's error paths, as an os.File would be.
type fdFile int

func (f fdFile) Fd() uintptr  { return uintptr(f) }
func (f fdFile) Close() error { return syscall.Close(int(f)) }

// ReadAt is one pread: a holder's record is written whole by one pwrite (writeHolder).
func (f fdFile) ReadAt(b []byte, off int64) (int, error) {
	for {
		n, err := syscall.Pread(int(f), b, off)
		if err != syscall.EINTR {
			return max(n, 0), err
		}
	}
}

func (f fdFile) WriteAt(b []byte, off int64) (int, error) {
	for {
		n, err := syscall.Pwrite(int(f), b, off)
		if err != syscall.EINTR {
			return max(n, 0), err
		}
	}
}

// createFD is create as a bare descriptor (fdFile).
func createFD(path string) (fdFile, error) {
	for {
		fd, err := syscall.Open(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, fileMode)
		if err == nil {
			return fdFile(fd), nil
		}
		if err != syscall.EINTR {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// Open opens path (created 0600 if missing, never through a symlink) and takes flock how (LOCK_EX
// or LOCK_SH) on it, waiting in the kernel (see Flock) until ctx ends; with ctx already ended it
// tries once. The lock goes with the returned file's Close or with the process, so a killed holder
// never leaves it stale; the file is the holder's to write in. A lock still held when ctx ends is
// an error wrapping both EWOULDBLOCK and ctx's error.
func Open(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := create(path)
	if err != nil {
		return nil, err
	}
	if err := Flock(ctx, f, how, nil); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%s is still locked: %w: %w", path, syscall.EWOULDBLOCK, err)
		}
		return nil, err
	}
	return f, nil
}

// Try is Open without waiting: a lock held elsewhere is an error wrapping EWOULDBLOCK.
func Try(path string, how int) (*os.File, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return Open(ctx, path, how)
}

// File takes flock how on path (created 0600 if missing) as Open does, waiting up to timeout (0:
// try once). The lock is released by the returned func or by process death. A lock still held at
// the deadline is an error wrapping EWOULDBLOCK.
func File(path string, how int, timeout time.Duration) (unlock func(), err error) {
	// Open's steps on a bare descriptor (fdFile): an outbox's drain lock is taken this way on
	// every delivery, and the file is never handed out.
	f, err := createFD(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := flock(ctx, f, how, nil); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("still held after %s: %w", timeout, syscall.EWOULDBLOCK)
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%s is still locked: %w: %w", path, syscall.EWOULDBLOCK, err)
		}
		return nil, err
	}
	return func() { release(f) }, nil
}

// Existing takes flock how on the file at path, which must exist (it is opened for reading,
// never created, never through a symlink), waiting up to timeout as File does: a lock on a file
// that has a life of its own, so that no lock file is made for it.
func Existing(path string, how int, timeout time.Duration) (unlock func(), err error) {
	f, err := openFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := Flock(ctx, f, how, nil); err != nil {
		f.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s still held after %s: %w", path, timeout, syscall.EWOULDBLOCK)
		}
		return nil, err
	}
	return func() { release(f) }, nil
}

// IsLocked reports whether another process holds a lock on path, shared or exclusive, without
// waiting. A missing file is not locked; IsLocked never creates one. Its probe is an exclusive
// lock, taken and let go at once: two probes at the same moment may see each other as holders.
func IsLocked(path string) bool { return held(path, syscall.LOCK_EX) }

// IsLockedExclusive reports whether another process holds an exclusive lock on path, without
// waiting. Its probe is a shared lock, so probes at the same moment never see each other.
func IsLockedExclusive(path string) bool { return held(path, syscall.LOCK_SH) }

// held reports whether the probe lock how on path is refused.
func held(path string, how int) bool {
	f, err := openFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
