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
// a new one is looked for among the tmux server's own (its pseudo-terminal masters,
// /proc/PID/fdinfo's tty-index), so that another program's terminals never make the server list
// its panes; and that folder is read at most once a madeGap, so that programs that make many
// (a test suite) seldom wake the watch.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ptsDir is where the panes' terminals are.
const ptsDir = "/dev/pts"

// ttyMask is what a pane's terminal is watched for: written to, closed by the last one that
// wrote to it (IN_IGNORED comes besides when it is removed).
const ttyMask = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE

// madeGap is the least time between two reads of the terminals made: a pane opened by a split in
// another session is seen within it (a window or a session opened is said by tmux at once). Each
// read wakes the watch for a while (the read, the look, the Go runtime's monitor spinning up
// again), and a test suite that runs beside it makes terminals all the time: with a gap of a
// second the idle bridge woke 10-20 times a second on a machine shared with such suites, with
// ten seconds 4 times.
const madeGap = 10 * time.Second

// madeSettle is how long after a terminal made was not found among the server's it is looked for
// once more: its master is opened before the server holds its fd.
const madeSettle = 250 * time.Millisecond

// ttyWatch watches the panes' terminals with one inotify instance, and the folder of terminals
// with another, read less often.
type ttyWatch struct {
	f, dirf *os.File
	fd      int
	// output is told when a pane's terminal was written to or closed; made when a pane's
	// terminal was made or removed, or events were lost: the panes are listed again.
	output, made chan struct{}

	mu     sync.Mutex
	ttys   map[string]int32 // the panes' terminals -> watch descriptor
	wds    map[int32]string // the other way
	server int              // the tmux server's pid, 0 when not known
	// masters are the server's pseudo-terminal masters seen: its fd -> the terminal's index,
	// so that a terminal made is looked for among the fds it opened since.
	masters map[string]string
	// fds is how many fds the server had at the last look (Linux 6.2 says it as the size of
	// /proc/PID/fd), and ours the terminals it then held: with as many fds now, it opened none
	// since (a pane closed, which would close one, lists the panes again: set), and the folder
	// is not read.
	fds  int64
	ours map[string]bool
	own  map[string]bool // this process's own terminals: its output is no pane's news
}

// newTTYWatch watches ptsDir and starts reading; Close ends it. An error (no inotify, no
// /dev/pts) leaves the watch to the subscription.
func newTTYWatch() (*ttyWatch, error) {
	dirfd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := syscall.InotifyAddWatch(dirfd, ptsDir, syscall.IN_CREATE|syscall.IN_ONLYDIR); err != nil {
		_ = syscall.Close(dirfd)
		return nil, fmt.Errorf("watch %s: %w", ptsDir, err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		_ = syscall.Close(dirfd)
		return nil, fmt.Errorf("inotify: %w", err)
	}
	own := map[string]bool{}
	for _, n := range []string{"0", "1", "2"} {
		if l, err := os.Readlink("/proc/self/fd/" + n); err == nil {
			own[l] = true
		}
	}
	// A non-blocking fd makes os.File pollable: its reader sleeps in the poller, and Close
	// ends its read.
	w := &ttyWatch{f: os.NewFile(uintptr(fd), "inotify"), dirf: os.NewFile(uintptr(dirfd), "inotify"), fd: fd, own: own,
		ttys: map[string]int32{}, wds: map[int32]string{}, masters: map[string]string{},
		output: make(chan struct{}, 1), made: make(chan struct{}, 1)}
	go w.read()
	go w.readMade()
	return w, nil
}

// set watches the terminals ttys of the panes of the tmux server whose pid is server, and lets go
// of the others. A terminal that cannot be watched (gone already: its pane is dead) is left out;
// the watch limit reached is said.
func (w *ttyWatch) set(server int, ttys []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Looked at afresh: a master's fd closed since may have come back for another terminal.
	w.server, w.masters, w.fds, w.ours = server, map[string]string{}, 0, nil
	keep := map[string]bool{}
	var errs []error
	for _, tty := range ttys {
		if filepath.Dir(tty) != ptsDir || keep[tty] || w.own[tty] {
			continue // not a terminal the folder's watch covers (its making would go unheard), or this process's
		}
		keep[tty] = true
		wd, err := syscall.InotifyAddWatch(w.fd, tty, ttyMask)
		switch {
		case err == nil:
			w.ttys[tty], w.wds[int32(wd)] = int32(wd), tty
		case errors.Is(err, syscall.ENOSPC):
			errs = append(errs, fmt.Errorf("watch %s: the inotify watch limit is reached (raise fs.inotify.max_user_watches): %w", tty, err))
		}
	}
	for tty, wd := range w.ttys {
		if !keep[tty] {
			_, _ = syscall.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.ttys, tty)
			delete(w.wds, wd)
		}
	}
	return errors.Join(errs...)
}

// read reads the events of the panes' terminals until Close, telling output and made.
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
			off += syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
			switch o, m := w.event(wd, mask); {
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

// event sorts one event of the panes' terminals: output, or a pane's terminal removed.
func (w *ttyWatch) event(wd int32, mask uint32) (output, made bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		return false, true
	}
	tty, pane := w.wds[wd]
	switch {
	case !pane: // let go of (set)
		return false, false
	case mask&syscall.IN_IGNORED != 0: // removed: the pane closed
		delete(w.wds, wd)
		delete(w.ttys, tty)
		return false, true
	}
	return true, false
}

// readMade reads the terminals made until Close, at most once a madeGap, and tells made when the
// tmux server made one of them: looked for at once, and once more a madeSettle later when none was
// found.
func (w *ttyWatch) readMade() {
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		n, err := w.dirf.Read(buf)
		if err != nil {
			return // closed
		}
		var now []string // the terminals' indexes
		lost := false
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+size]), "\x00")
			off += syscall.SizeofInotifyEvent + size
			switch {
			case mask&syscall.IN_Q_OVERFLOW != 0:
				lost = true
			case mask&syscall.IN_CREATE != 0:
				now = append(now, name)
			}
		}
		made := lost
		for pass := 0; pass < 2 && len(now) > 0 && !made; pass++ {
			if pass > 0 {
				time.Sleep(madeSettle) // the server opened the terminal's master, but may not hold its fd yet
			}
			w.mu.Lock()
			ours := w.serverTTYs()
			w.mu.Unlock()
			for _, i := range now {
				made = made || ours == nil || ours[i]
			}
		}
		if made {
			poke(w.made)
		}
		time.Sleep(madeGap) // at most one read a gap, however many terminals programs make
	}
}

// serverTTYs is the set of the indexes of the terminals whose master the tmux server holds,
// nil when not known; only the fds it opened since the last look are read (w.mu held).
func (w *ttyWatch) serverTTYs() map[string]bool {
	if w.server == 0 {
		return nil
	}
	dir := fmt.Sprintf("/proc/%d/fd", w.server)
	st, err := os.Stat(dir)
	if err == nil && st.Size() > 0 && st.Size() == w.fds && w.ours != nil {
		return w.ours
	}
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil // not known: taken for a pane's, which costs one listing of the panes
	}
	open := map[string]bool{}
	ours := map[string]bool{}
	for _, fd := range fds {
		name := fd.Name()
		open[name] = true
		i, seen := w.masters[name]
		if !seen {
			i = ""
			if l, err := os.Readlink(filepath.Join(dir, name)); err == nil && l == "/dev/ptmx" {
				i = masterIndex(w.server, name)
			}
			w.masters[name] = i
		}
		if i != "" {
			ours[i] = true
		}
	}
	for name := range w.masters {
		if !open[name] {
			delete(w.masters, name) // closed: its number may come back for another file
		}
	}
	w.ours, w.fds = ours, 0
	if st != nil {
		w.fds = st.Size()
	}
	return ours
}

// masterIndex is the index of the terminal whose master is the fd of process pid.
func masterIndex(pid int, fd string) string {
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "tty-index:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Close ends the watch.
func (w *ttyWatch) Close() error {
	return errors.Join(w.f.Close(), w.dirf.Close())
}

// poke tells c without waiting: one value waiting says it all.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
