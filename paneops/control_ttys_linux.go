package paneops

// Hearing of the panes' output from the kernel instead of from tmux. tmux 3.3a tells a control
// client of a pane's output only for the panes of its own session, and a subscription over every
// pane of every session is looked at by the server once a second: the server then wakes, polls
// every pane's terminal and expands the format for each pane, which with 220 panes cost it
// 0.3-0.4 % of a core for each client that subscribes, while nothing happened. The kernel tells
// instead, at no cost while nothing happens: inotify says when a process writes to a pane's
// terminal (IN_MODIFY on /dev/pts/N, which every write to it raises) and when the last one that
// had it open for writing closed it (the pane's process ended, IN_CLOSE_WRITE), and /dev/pts says
// when a terminal is made or removed (a pane opened or closed, in any session, which tmux 3.3a
// does not say of a pane split in another session). Every terminal of the machine is made there:
// a new one is watched on trial, and only when it is first written to is it looked for among the
// tmux server's own (its pseudo-terminal masters, /proc/PID/fdinfo's tty-index), so that another
// program's terminals never make the server list its panes.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// ptsDir is where the panes' terminals are.
const ptsDir = "/dev/pts"

// ttyWatch watches the panes' terminals, and the folder of terminals, with one inotify instance.
type ttyWatch struct {
	f  *os.File
	fd int
	// output is told when a watched terminal was written or closed; made when a terminal
	// appeared or went away in ptsDir, or events were lost: the panes are listed again.
	output, made chan struct{}

	mu     sync.Mutex
	ttys   map[string]int32 // the panes' terminals -> watch descriptor
	trial  map[int32]string // watch descriptor -> a terminal made since, not known for a pane's
	server int              // the tmux server's pid, 0 when not known
	dir    int32            // ptsDir's watch descriptor
}

// newTTYWatch watches ptsDir and starts reading; Close ends it. An error (no inotify, no
// /dev/pts) leaves the watch to the subscription.
func newTTYWatch() (*ttyWatch, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	dir, err := syscall.InotifyAddWatch(fd, ptsDir, syscall.IN_CREATE|syscall.IN_DELETE|syscall.IN_ONLYDIR)
	if err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", ptsDir, err)
	}
	// A non-blocking fd makes os.File pollable: its reader sleeps in the poller, and Close
	// ends its read.
	w := &ttyWatch{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, dir: int32(dir), ttys: map[string]int32{},
		trial: map[int32]string{}, output: make(chan struct{}, 1), made: make(chan struct{}, 1)}
	go w.read()
	return w, nil
}

// set watches the terminals ttys of the panes of the tmux server whose pid is server, and lets go
// of the others. A terminal that cannot be watched (gone already: its pane is dead) is left out;
// the watch limit reached is said.
func (w *ttyWatch) set(server int, ttys []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.server = server
	for wd := range w.trial {
		_, _ = syscall.InotifyRmWatch(w.fd, uint32(wd))
		delete(w.trial, wd)
	}
	keep := map[string]bool{}
	var errs []error
	for _, tty := range ttys {
		if filepath.Dir(tty) != ptsDir || keep[tty] {
			continue // not a terminal the folder's watch covers (its making would go unheard)
		}
		keep[tty] = true
		wd, err := syscall.InotifyAddWatch(w.fd, tty, syscall.IN_MODIFY|syscall.IN_CLOSE_WRITE)
		switch {
		case err == nil:
			w.ttys[tty] = int32(wd)
		case errors.Is(err, syscall.ENOSPC):
			errs = append(errs, fmt.Errorf("watch %s: the inotify watch limit is reached (raise fs.inotify.max_user_watches): %w", tty, err))
		default:
			delete(w.ttys, tty)
		}
	}
	for tty, wd := range w.ttys {
		if !keep[tty] {
			_, _ = syscall.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.ttys, tty)
		}
	}
	return errors.Join(errs...)
}

// read reads the events until Close, telling output and made.
func (w *ttyWatch) read() {
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return // closed
		}
		output, made := false, false
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+size]), "\x00")
			off += syscall.SizeofInotifyEvent + size
			switch o, m := w.event(wd, mask, name); {
			case m:
				made = true
			case o:
				output = true
			}
		}
		if output {
			poke(w.output)
		}
		if made {
			poke(w.made)
		}
	}
}

// event sorts one event: the output of a pane's terminal, or a pane's terminal made or removed.
func (w *ttyWatch) event(wd int32, mask uint32, name string) (output, made bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case mask&syscall.IN_Q_OVERFLOW != 0:
		return false, true
	case wd == w.dir && mask&syscall.IN_CREATE != 0:
		tty := filepath.Join(ptsDir, name)
		if t, err := syscall.InotifyAddWatch(w.fd, tty, syscall.IN_MODIFY|syscall.IN_CLOSE_WRITE); err == nil {
			w.trial[int32(t)] = tty
		}
		return false, false
	case wd == w.dir && mask&syscall.IN_DELETE != 0:
		tty := filepath.Join(ptsDir, name)
		_, pane := w.ttys[tty]
		for t, tt := range w.trial {
			if tt == tty {
				delete(w.trial, t)
			}
		}
		return false, pane
	case mask&(syscall.IN_MODIFY|syscall.IN_CLOSE_WRITE) == 0:
		return false, false
	}
	tty, trial := w.trial[wd]
	if !trial {
		return true, false
	}
	// First written to since it was made: a pane's, or another program's (let go of).
	delete(w.trial, wd)
	if w.server == 0 || serverTTY(w.server, strings.TrimPrefix(tty, ptsDir+"/")) {
		return false, true
	}
	_, _ = syscall.InotifyRmWatch(w.fd, uint32(wd))
	return false, false
}

// serverTTY reports whether the process pid holds the master of the terminal /dev/pts/index.
func serverTTY(pid int, index string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return true // not known: taken for a pane's, which costs one listing of the panes
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err != nil || l != "/dev/ptmx" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "tty-index:"); ok && strings.TrimSpace(v) == index {
				return true
			}
		}
	}
	return false
}

// Close ends the watch.
func (w *ttyWatch) Close() error { return w.f.Close() }

// poke tells c without waiting: one value waiting says it all.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
