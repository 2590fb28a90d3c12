package tmuxd

// When the resident ends, heard rather than looked for: a resident lives beside every root that
// delivers, all day, and a look every second woke it (and the Go runtime's monitor, whose sleep
// follows the next timer) about six times a second while nothing happened. It waits instead on
// what tells it: the folder of its socket (inotify: the socket removed or replaced), its control
// client's end (its server stopped), and one timer at the moment it would be idle.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ctlRetry is how often a resident whose control client does not run tries to start one while
// its server still answers; the calls meanwhile go by clients of their own.
const ctlRetry = 5 * time.Second

// watch ends the resident (cancel) when it is idle, its socket is gone or its server stopped.
func (s *ResidentServer) watch(ctx context.Context, sock string, sockSt os.FileInfo, cancel func()) {
	events := watchName(ctx, filepath.Dir(sock), filepath.Base(sock))
	var poll <-chan time.Time
	pollEverySecond := func() {
		// No inotify (its limit reached, or the watch broke): the socket is looked at every
		// second, as before.
		t := time.NewTicker(time.Second)
		context.AfterFunc(ctx, t.Stop)
		poll = t.C
	}
	if events == nil {
		pollEverySecond()
	}
	idle := time.NewTimer(s.Idle)
	defer idle.Stop()
	retry := time.NewTimer(ctlRetry)
	defer retry.Stop()
	started := time.Now() // Serve started the first client
	for {
		if st, err := os.Lstat(sock); err != nil || !os.SameFile(st, sockSt) {
			s.logf("the socket %s is gone or replaced: ending", sock)
			cancel()
			return
		}
		left := s.Idle
		if s.guards.Load() == 0 {
			left = s.Idle - time.Since(time.Unix(0, s.last.Load()))
			if left < 0 {
				cancel()
				return
			}
		}
		idle.Reset(left + time.Millisecond)
		if !s.ctl.Running() {
			// Broken, ended or never started: a server that still runs takes a new client, at
			// most one every ctlRetry. The server is asked first, by a client that starts none:
			// attach-session would start a server anew on the socket of one that stopped.
			if !s.serverUp(ctx) {
				s.logf("the tmux server does not answer: ending")
				cancel()
				return
			}
			if time.Since(started) >= ctlRetry {
				s.ctl.Start()
				started = time.Now()
			}
		}
		ctlDone := s.ctl.Done()
		var retryC <-chan time.Time
		if ctlDone == nil {
			retry.Reset(ctlRetry)
			retryC = retry.C
		}
		select {
		case <-ctx.Done():
			return
		case _, open := <-events:
			if !open {
				events = nil
				pollEverySecond()
			}
		case <-poll:
		case <-idle.C:
		case <-ctlDone:
		case <-retryC:
		}
	}
}

// watchName tells on the returned channel of every change of the entry name in dir (made,
// removed, renamed from or to) and of dir itself going, until ctx ends; nil when inotify cannot
// watch dir, closed when the watch breaks. The events are read through the runtime's poller, so nothing wakes while none come.
func watchName(ctx context.Context, dir, name string) <-chan struct{} {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "inotify")
	out := make(chan struct{}, 1)
	tell := func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	stop := context.AfterFunc(ctx, func() { f.Close() })
	go func() {
		defer stop()
		defer f.Close()
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrClosed) {
					close(out) // the watch broke: the resident looks every second instead
				}
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				end := off + unix.SizeofInotifyEvent + int(ev.Len)
				if end > n {
					break
				}
				got := string(buf[off+unix.SizeofInotifyEvent : end])
				for len(got) > 0 && got[len(got)-1] == 0 {
					got = got[:len(got)-1]
				}
				if got == name || ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_Q_OVERFLOW) != 0 {
					tell()
				}
				off = end
			}
		}
	}()
	return out
}

// waitPidfd returns once the process of the pidfd fd ended, or ctx ended. A guard lives as long
// as the process it guards (an MCP server: all day), so it sleeps in one poll of the pidfd and
// of an eventfd that ctx's end writes, instead of waking every second to look at ctx.
func waitPidfd(ctx context.Context, fd int) error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(efd)
	wrote := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(wrote)
		// Any count but zero makes it readable, in either byte order.
		_, _ = unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	})
	defer func() {
		if !stop() {
			<-wrote // the write is under way: efd stays open until it is done
		}
	}()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(efd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case err != nil && !errors.Is(err, unix.EINTR):
			return err
		case fds[0].Revents != 0:
			return nil
		case fds[1].Revents != 0:
			return ctx.Err()
		}
	}
}
