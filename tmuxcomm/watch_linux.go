package tmuxcomm

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"syscall"
	"time"
)

// dirWatcher wakes a waiter when files in one folder are created, renamed into it, or closed after
// writing: await returns within milliseconds of notify's rename instead of polling. A slow safety
// tick re-checks the state anyway, so a lost event (inotify queue overflow) costs latency, not a hang.
type dirWatcher struct {
	f *os.File
}

// fsEvent is one inotify event for a name in the watched folder.
type fsEvent struct {
	Name  string
	Close bool // closed after writing
	Moved bool // renamed or linked into the folder
}

const safetyTick = 500 * time.Millisecond

func newDirWatcher(dir string) (*dirWatcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	mask := uint32(syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_MODIFY)
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	// A non-blocking fd makes os.File pollable, so reads honour deadlines.
	return &dirWatcher{f: os.NewFile(uintptr(fd), "inotify")}, nil
}

func (w *dirWatcher) Close() error { return w.f.Close() }

// Next waits for events, the safety tick or ctx, whichever comes first.
func (w *dirWatcher) Next(ctx context.Context) ([]fsEvent, error) {
	deadline := time.Now().Add(safetyTick)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := w.f.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+256))
	n, err := w.f.Read(buf)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ctx.Err()
		}
		return nil, err
	}
	var evs []fsEvent
	for off := 0; off+syscall.SizeofInotifyEvent <= n; {
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
		evs = append(evs, fsEvent{Name: name, Close: mask&syscall.IN_CLOSE_WRITE != 0, Moved: mask&syscall.IN_MOVED_TO != 0})
		off = end
	}
	return evs, nil
}
