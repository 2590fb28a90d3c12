package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// watcher wakes the bridge as soon as a file is added under the root (inotify on the root and
// each session folder), so a new question is posted without waiting for the next look; the
// looks go on as the fallback.
type watcher struct {
	fd   int
	mu   sync.Mutex
	dirs map[string]bool
}

func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	return &watcher{fd: fd, dirs: map[string]bool{}}
}

// add watches root and every session folder in it not yet watched.
func (w *watcher) add(root string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	const mask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE
	if !w.dirs[root] {
		if _, err := unix.InotifyAddWatch(w.fd, root, mask); err == nil {
			w.dirs[root] = true
		}
	}
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		if strings.HasPrefix(e.Name(), ".") || !e.IsDir() || w.dirs[p] {
			continue
		}
		if _, err := unix.InotifyAddWatch(w.fd, p, mask); err == nil {
			w.dirs[p] = true
		}
	}
}

// run calls poke on every batch of events until ctx ends.
func (w *watcher) run(ctx context.Context, poke func()) {
	if w == nil {
		return
	}
	defer unix.Close(w.fd)
	buf := make([]byte, 16<<10)
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err != nil && err != unix.EINTR {
			return
		}
		if n <= 0 {
			continue
		}
		if _, err := unix.Read(w.fd, buf); err != nil && err != unix.EAGAIN {
			return
		}
		poke()
	}
}
