package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// TreeWatcher is one inotify instance watching many folders: the root and every session folder.
// One instance, not one per folder: a user gets only 128 inotify instances by default
// (fs.inotify.max_user_instances), and a root may hold hundreds of session folders. Add may be
// called while another goroutine waits in Next (the bridge adds the session folders it finds
// while its watch runs); Next itself has one caller at a time.
type TreeWatcher struct {
	f   *os.File
	fd  int
	buf []byte // one read's events, kept: a watcher wakes every safetyTick for life

	// mu guards dirs. Add holds it from inotify_add_watch until the folder is recorded, and Next
	// while it names the folders of what it read, so an event of a folder just added is never
	// read before the folder is known.
	mu   sync.Mutex
	dirs map[int32]string // watch descriptor -> folder
}

// TreeEvent names a folder in which something happened (Name: the entry, "" for the folder
// itself). Overflow means events were lost: every folder must be looked at again.
type TreeEvent struct {
	Dir   string
	Name  string
	Moved bool // renamed or linked into the folder: published whole
	// Written says the event was a write into the file and nothing else (inotify's IN_MODIFY
	// alone): its writer still holds it, and the close that ends the write is an event of its own.
	Written  bool
	Overflow bool
	// Gone says the folder Dir itself was removed: its watch is over (inotify's IN_IGNORED).
	Gone bool
}

// NewTreeWatcher returns a watcher of no folder yet; Close lets go of it.
func NewTreeWatcher() (*TreeWatcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	// A non-blocking fd makes os.File pollable, so reads honour deadlines.
	return &TreeWatcher{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, dirs: map[int32]string{}}, nil
}

// Add watches one folder for entries created, renamed or linked in, written and closed.
func (w *TreeWatcher) Add(dir string) error {
	mask := uint32(syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_MODIFY | syscall.IN_ONLYDIR)
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, err := syscall.InotifyAddWatch(w.fd, dir, mask)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("watch %s: the inotify watch limit is reached (raise fs.inotify.max_user_watches): %w", dir, err)
		}
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	w.dirs[int32(wd)] = dir
	return nil
}

// settleSeeing reads and drops the events that wait, without blocking, and reports whether every
// folder added is still watched with nothing lost: false after a folder's watch ended (removed:
// IN_IGNORED) or an overflow, or when the instance cannot be read. A watch kept between waits
// (DirWatches) is used again only when it settles: what happened meanwhile is no news to a waiter
// that looks at its file after the watch is in place. saw is told each entry made or renamed in
// by an event it drops (a folder watch keeps count of what was made in it, see DirWatch.Newest).
func (w *TreeWatcher) settleSeeing(saw func(name string)) bool {
	if w.buf == nil {
		w.buf = make([]byte, 256*(syscall.SizeofInotifyEvent+256))
	}
	for {
		// A raw read: the watch has one user at a time, and the poller's Read would refuse
		// at once on the deadline its last wait left.
		n, err := syscall.Read(w.fd, w.buf)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return true
		case err != nil || n <= 0:
			return false
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(w.buf[off+4:])
			if mask&(syscall.IN_Q_OVERFLOW|syscall.IN_IGNORED) != 0 {
				return false
			}
			end := off + syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(w.buf[off+12:]))
			if saw != nil && end <= n && mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 {
				saw(string(bytes.TrimRight(w.buf[off+syscall.SizeofInotifyEvent:end], "\x00")))
			}
			off = end
		}
	}
}

// Close ends the watch of every folder.
func (w *TreeWatcher) Close() error { return w.f.Close() }

// Nudge ends a wait in Next now, as its safety tick would (a nil slice, a nil error), from
// another goroutine: the runtime readies the waiter at once, next to run on the P of the caller.
// A nudge that finds no wait in progress is lost, as a tick would be: the next wait sets its
// own deadline.
func (w *TreeWatcher) Nudge() { _ = w.f.SetReadDeadline(time.Now()) }

// Next waits for events or the end of ctx. It returns a nil slice with a nil error now and then
// (at least every safetyTick), so the caller may re-check what it waits for.
func (w *TreeWatcher) Next(ctx context.Context) ([]TreeEvent, error) {
	return w.NextUntil(ctx, time.Now().Add(safetyTick))
}

// NextUntil waits for events, the end of ctx, or until (the zero time: no bound), returning a nil
// slice with a nil error at until. A watcher that wakes only for events (an overflow is one) lets
// a daemon that watches all day sleep while nothing changes, where Next wakes it twice a second.
func (w *TreeWatcher) NextUntil(ctx context.Context, until time.Time) ([]TreeEvent, error) {
	deadline := until
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if err := w.f.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	// Wake the read at once when ctx is cancelled (an interrupt), not only at its deadline.
	stop := context.AfterFunc(ctx, func() { w.f.SetReadDeadline(time.Now()) })
	defer stop()
	if w.buf == nil {
		w.buf = make([]byte, 256*(syscall.SizeofInotifyEvent+256))
	}
	buf := w.buf
	n, err := w.f.Read(buf)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ctx.Err()
		}
		return nil, err
	}
	var evs []TreeEvent
	w.mu.Lock()
	defer w.mu.Unlock()
	for off := 0; off+syscall.SizeofInotifyEvent <= n; {
		wd := int32(binary.NativeEndian.Uint32(buf[off:]))
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
		start := off + syscall.SizeofInotifyEvent
		end := start + nameLen
		if end > n {
			break
		}
		name := string(buf[start:end])
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		off = end
		switch {
		case mask&syscall.IN_Q_OVERFLOW != 0:
			evs = append(evs, TreeEvent{Overflow: true})
		case mask&syscall.IN_IGNORED != 0:
			// The folder was removed (or unmounted): its watch is gone.
			if dir, ok := w.dirs[wd]; ok {
				evs = append(evs, TreeEvent{Dir: dir, Gone: true})
			}
			delete(w.dirs, wd)
		default:
			if dir, ok := w.dirs[wd]; ok {
				evs = append(evs, TreeEvent{Dir: dir, Name: name, Moved: mask&syscall.IN_MOVED_TO != 0,
					Written: mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO|syscall.IN_CLOSE_WRITE) == 0 && mask&syscall.IN_MODIFY != 0})
			}
		}
	}
	return evs, nil
}
