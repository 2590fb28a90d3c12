package tmuxd

// A whole command run by the resident for a caller (op "exec"). A command process costs its
// start and its own tmux work: the resident already holds the control client, the root's
// folders in the page cache and the engine's code warm, so a send, notify or await hands its
// words to it and prints what comes back, as an MCP call does. The caller sends its argv, its
// working folder, its environment and the message it read from stdin; the resident takes the
// caller's process from the socket's peer credentials (SO_PEERCRED), never from the request.
//
// The wire: the call's frame; the resident answers "accepted" before it acts (or "notrun": the
// caller does the work itself), then "out" frames (fd 1 or 2, the bytes after the header) as
// the command writes, and "exit" with its code. The caller's end of the connection closed, or
// shut for writing (its Ctrl-C), cancels the call. A connection that ends after "accepted" and
// before "exit" is a call whose outcome the caller does not know: it says so and exits 1, and
// never runs the command again (a message would arrive twice).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops"
)

// ExecCall is one command handed to the resident.
type ExecCall struct {
	Args []string // the command line after the program's name
	Dir  string   // the caller's working folder
	Env  []string // the caller's environment, KEY=VALUE
	// Stdin is the message the caller read from its stdin, nil when the command reads none.
	Stdin []byte
	// PID is the caller's process, from the socket's peer credentials (set by the resident).
	PID int
	// Gone ends when the caller went away or cancelled the call (set by the resident): a wait
	// for an answer ends with it, where the delivery's own context runs on.
	Gone context.Context
	// Tmux runs the command's tmux calls through the resident's control client (set by the
	// resident).
	Tmux paneops.Router
}

// ExecFunc runs call and returns its exit code, writing what the command prints to stdout and
// stderr; ctx ends when the caller goes away.
type ExecFunc func(ctx context.Context, call ExecCall, stdout, stderr io.Writer) int

// ErrExecLost: the resident took the call and ended before it said how it ended.
var ErrExecLost = errors.New("the resident tmux client ended during the call")

// execCancelWait bounds how long a caller whose own context ended waits for the resident to
// end the call and say with which code.
const execCancelWait = 15 * time.Second

// programID names this program's file (device, inode, size, modification time): a caller hands
// a command only to a resident that runs the same program, so a resident left running across
// an upgrade never reads a newer command line with its older flags.
var programID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	var st syscall.Stat_t
	if err := syscall.Stat(exe, &st); err != nil {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
})

// Exec hands call to the resident when one answers. handed false: no resident took it (none
// runs, another program, stdin too large) and nothing of it ran: the caller runs it itself.
// handed true: code is the command's exit code, or err is ErrExecLost (the outcome is unknown),
// or the caller's ctx ended and the resident did not answer in time.
func (r *Resident) Exec(ctx context.Context, call ExecCall, stdout, stderr io.Writer) (code int, handed bool, err error) {
	if r == nil || len(call.Stdin) > residentMaxStdin || programID() == "" {
		return 0, false, nil
	}
	conn, err := r.dial(ctx)
	if err != nil {
		return 0, false, nil
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(residentTimeout))
	req := residentReq{Op: "exec", Args: call.Args, Dir: call.Dir, Env: call.Env, Program: programID(), Stdin: len(call.Stdin)}
	if call.Stdin != nil && len(call.Stdin) == 0 {
		req.EmptyStdin = true
	}
	if err := writeFrame(conn, req, call.Stdin); err != nil {
		return 0, false, nil // a frame cut short runs nothing
	}
	var resp residentResp
	if err := readFrame(conn, &resp); err != nil || resp.State != "accepted" {
		// A resident that did not answer in time may write its "accepted" the moment after
		// and act: the call's outcome is unknown, and running it here could deliver twice.
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, true, fmt.Errorf("%w: it did not say within %s whether it took the call", ErrExecLost, residentTimeout)
		}
		// Nothing written after a refusal; and a resident that died before its "accepted"
		// reached the socket had not begun: it writes that frame before it acts.
		return 0, false, nil
	}
	// From here the call runs as long as the command does; the caller's ctx ending (Ctrl-C)
	// sends the resident the call's cancel.
	_ = conn.SetDeadline(time.Time{})
	var wmu sync.Mutex
	send := func(f residentReq) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = conn.SetWriteDeadline(time.Now().Add(residentTimeout))
		_ = writeFrame(conn, f, nil)
	}
	stop := context.AfterFunc(ctx, func() {
		send(residentReq{Op: "cancel"})
		_ = conn.SetReadDeadline(time.Now().Add(execCancelWait))
	})
	defer stop()
	for {
		var f residentResp
		if err := readFrame(conn, &f); err != nil {
			if ctx.Err() != nil {
				return 0, true, ctx.Err()
			}
			return 0, true, ErrExecLost
		}
		switch f.State {
		case "out":
			if f.Len < 0 || f.Len > maxFrame {
				return 0, true, ErrExecLost
			}
			buf := make([]byte, f.Len)
			if _, err := io.ReadFull(conn, buf); err != nil {
				return 0, true, ErrExecLost
			}
			w := stdout
			if f.Fd == 2 {
				w = stderr
			}
			ack := residentReq{Op: "ack"}
			if _, err := w.Write(buf); err != nil {
				ack.Err = err.Error()
				var errno syscall.Errno
				if errors.As(err, &errno) {
					ack.Errno = int(errno)
				}
			}
			send(ack)
		case "exit":
			return f.Code, true, nil
		default:
			return 0, true, ErrExecLost
		}
	}
}

// serveExec runs one command for the peer pid on c, then closes the connection (serveConn).
func (s *ResidentServer) serveExec(ctx context.Context, c *net.UnixConn, req residentReq, body []byte, pid int) {
	if s.Exec == nil || req.Program == "" || req.Program != programID() || pid <= 0 {
		_ = writeFrame(c, residentResp{State: "notrun", Err: "the resident does not run commands for this program"}, nil)
		return
	}
	s.guards.Add(1) // busy: a long await keeps the resident from its idle end
	defer func() {
		s.guards.Add(-1)
		s.last.Store(time.Now().UnixNano())
	}()
	if err := writeFrame(c, residentResp{State: "accepted"}, nil); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone, left := context.WithCancel(ctx)
	defer left()
	acks := make(chan residentReq, 1)
	dead := make(chan struct{})
	go func() {
		// The caller sends its acks and at most its cancel; the read fails once it goes.
		defer close(dead)
		defer left()
		for {
			var f residentReq
			if err := readFrame(c, &f); err != nil {
				return
			}
			switch f.Op {
			case "cancel":
				cancel()
			case "ack":
				acks <- f
			}
		}
	}()
	if body == nil && req.EmptyStdin {
		body = []byte{}
	}
	var mu sync.Mutex
	out := func(fd int) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			for rest := p; len(rest) > 0; {
				n := min(len(rest), maxFrame)
				if err := writeFrame(c, residentResp{State: "out", Fd: fd, Len: n}, rest[:n]); err != nil {
					return len(p) - len(rest), err
				}
				select {
				case a := <-acks:
					if a.Err != "" {
						var err error = errors.New(a.Err)
						if a.Errno > 0 {
							err = &os.PathError{Op: "write", Path: "the caller's " + fdName[fd], Err: syscall.Errno(a.Errno)}
						}
						return len(p) - len(rest), err
					}
				case <-dead:
					return len(p) - len(rest), net.ErrClosed
				}
				rest = rest[n:]
			}
			return len(p), nil
		})
	}
	code := s.Exec(ctx, ExecCall{Args: req.Args, Dir: req.Dir, Env: req.Env, Stdin: body, PID: pid, Gone: gone, Tmux: localRouter{s}}, out(1), out(2))
	mu.Lock()
	defer mu.Unlock()
	if err := writeFrame(c, residentResp{State: "exit", Code: code}, nil); err != nil {
		s.logf("the caller (pid %d) of %q went before its exit code %d", pid, first(req.Args), code)
	}
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

var fdName = map[int]string{1: "stdout", 2: "stderr"}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// localRouter runs the tmux calls of a command the resident runs, in the resident, through its
// control client: as a caller's calls would, without the socket between.
type localRouter struct{ s *ResidentServer }

func (l localRouter) Route(ctx context.Context, argv []string, stdin io.Reader, args []string) (string, paneops.RouteState, error) {
	body, ok := stdinBody(stdin, args)
	if !ok {
		return "", paneops.RouteNotRun, nil
	}
	l.s.last.Store(time.Now().UnixNano())
	return l.s.run(ctx, args, body).result(argv)
}
