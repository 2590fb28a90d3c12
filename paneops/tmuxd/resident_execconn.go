package tmuxd

// The caller's end of an exec: one socket, connected and asked with plain system calls. A command
// process that hands its work to the resident makes this one connection in its life. Through the
// net package its dial would have cost about 0.15 ms of each command process's CPU (measured in a
// profile of the commands round trip, which starts two: send and the worker's notify).
//
// Until "accepted", its bounds are the socket's own: SO_SNDTIMEO bounds the connect (a unix
// socket's connect waits by it while the resident's backlog is full) and every write, SO_RCVTIMEO
// the wait for "accepted". The wait for the command's outcome, which lasts as long as the command,
// is then made in the runtime's poller (park), writes bounded by a deadline: a read blocked in the
// kernel keeps its processor busy in the runtime's eyes, and while one of two is, the runtime's
// monitor thread wakes every 20 µs for its first fifty rounds and then ever less often, about 55
// wake-ups in an 8 ms wait (counted), each taking a core from the resident, tmux or the worker for
// a moment. Parked, the processor is idle and the monitor sleeps; the poller costs a handful of
// system calls once. A caller whose context ends sends its cancel, and shuts the socket after
// execCancelWait if the resident has not ended the call by then: a shutdown ends a waiting read.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// errExecTimeout: the resident did not answer within the socket's bound.
var errExecTimeout = errors.New("timed out")

// execConn is a connected exec socket.
type execConn struct {
	fd     int
	f      *os.File   // the socket in the poller, once parked (see park); it owns fd then
	mu     sync.Mutex // writes, the shutdown and the close: never one on a closed fd
	closed bool
	shut   *time.Timer
}

// dialExec connects to the resident's socket (checked as dial checks it) and checks that its
// peer runs as this user.
func (r *Resident) dialExec() (*execConn, error) {
	path, err := r.socketPath()
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	c := &execConn{fd: fd}
	if err := c.setTimeout(unix.SO_SNDTIMEO, residentTimeout); err != nil {
		c.Close()
		return nil, err
	}
	err = withShortPath(path, func(p string) error {
		for {
			err := unix.Connect(fd, &unix.SockaddrUnix{Name: p})
			if err != unix.EINTR {
				return os.NewSyscallError("connect", err)
			}
		}
	})
	if err == nil {
		err = peerIsMe(fd)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// peerIsMe checks the connected peer's uid from its credentials.
func peerIsMe(fd int) error {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("read the peer's credentials: %w", err)
	}
	return sameUser(int(cred.Uid))
}

// setTimeout sets the socket's SO_SNDTIMEO or SO_RCVTIMEO; 0 waits without end.
func (c *execConn) setTimeout(opt int, d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	return os.NewSyscallError("setsockopt", unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv))
}

// park moves the socket into the runtime's poller for a wait without end: reads from here on
// park the goroutine instead of blocking its thread, and writes keep their bound by a deadline.
// Called before anything else uses the connection concurrently.
func (c *execConn) park() error {
	if err := unix.SetNonblock(c.fd, true); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	c.f = os.NewFile(uintptr(c.fd), "wcomm-exec")
	return nil
}

// Read reads what came, io.EOF at the resident's end (or the shutdown), errExecTimeout when
// SO_RCVTIMEO passed.
func (c *execConn) Read(p []byte) (int, error) {
	if c.f != nil {
		n, err := c.f.Read(p)
		if n == 0 && len(p) > 0 && err == nil {
			err = io.EOF
		}
		if err != nil && err != io.EOF {
			err = fmt.Errorf("read: %w", err)
		}
		return n, err
	}
	for {
		n, err := unix.Read(c.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, errExecTimeout
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of b (nothing once closed).
func (c *execConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, os.ErrClosed
	}
	if c.f != nil {
		if err := c.f.SetWriteDeadline(time.Now().Add(residentTimeout)); err != nil {
			return 0, err
		}
		n, err := c.f.Write(b)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = errExecTimeout
		}
		return n, err
	}
	done := 0
	for done < len(b) {
		n, err := unix.Write(c.fd, b[done:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return done, errExecTimeout
		case err != nil:
			return done, os.NewSyscallError("write", err)
		}
		done += n
	}
	return done, nil
}

// shutAfter shuts the socket after d, ending a read that waits (Close stops it).
func (c *execConn) shutAfter(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.shut != nil {
		return
	}
	c.shut = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
		}
	})
}

// Close closes the socket once.
func (c *execConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.shut != nil {
		c.shut.Stop()
	}
	if c.f != nil {
		return c.f.Close()
	}
	return unix.Close(c.fd)
}
