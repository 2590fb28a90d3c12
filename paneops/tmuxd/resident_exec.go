package tmuxd

// A whole command run by the resident for a caller (op "exec"). A command process costs its
// start and its own tmux work: the resident already holds the control client, the root's
// folders in the page cache and the engine's code warm, so a send, notify or await hands its
// words to it and prints what comes back, as an MCP call does. The caller sends its argv, its
// working folder, its environment and the message it read from stdin; the resident takes the
// caller's process from the socket's peer credentials (SO_PEERCRED), never from the request.
//
// The wire: the call's header (JSON, written by hand: a command process pays for every type
// encoding/json reflects on, about 0.1 ms of a start) with the call itself after it (execCall:
// lengths and bytes, so an argument that is not UTF-8 arrives as it was given); the resident
// answers "accepted" before it acts (or "notrun": the caller does the work itself). From there
// each frame is a kind, a length and the bytes (execFrame): the command's output ('o' stdout,
// 'e' stderr) as it writes, then 'x' with its exit code; the caller answers each stdout frame
// with 'a' once it wrote it (with its errno when that failed: the command's write returns the
// caller's error), and may send 'c', its cancel. A write to stderr is not answered, nor waited
// for: no command acts on its error, and each answer cost both processes a wake-up. The
// caller's end of the connection closed, or shut for writing (its Ctrl-C), cancels the call. A
// connection that ends after "accepted" and before 'x' is a call whose outcome the caller does
// not know: it says so and exits 1, and never runs the command again (a message would arrive
// twice).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/callstack"
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
	// Sent, on the caller's side, runs once the call is written and before the caller waits for
	// the resident's answer (not sent): the caller waits there for its Ctrl-C watch, which is set
	// up meanwhile, rather than before it connects.
	Sent func()
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
// an upgrade never reads a newer command line with its older flags. It is the file this
// process runs (/proc/self/exe, one stat), not whatever file is at its path by the time it
// asks: a resident asks first at its first handed command, maybe after an upgrade replaced it.
var programID = sync.OnceValue(readProgramID)

func readProgramID() string {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return ""
	}
	// strconv, not fmt: a command process would spend more on fmt's first Sprintf than on the stat.
	b := strconv.AppendUint(nil, st.Dev, 10)
	b = strconv.AppendUint(append(b, ':'), st.Ino, 10)
	b = strconv.AppendInt(append(b, ':'), st.Size, 10)
	b = strconv.AppendInt(append(b, ':'), st.Mtim.Sec, 10)
	return string(strconv.AppendInt(append(b, '.'), st.Mtim.Nsec, 10))
}

// Exec hands call to the resident when one answers. handed false: no resident took it (none
// runs, another program, stdin too large) and nothing of it ran: the caller runs it itself.
// handed true: code is the command's exit code, or err is ErrExecLost (the outcome is unknown),
// or the caller's ctx ended and the resident did not answer in time.
func (r *Resident) Exec(ctx context.Context, call ExecCall, stdout, stderr io.Writer) (code int, handed bool, err error) {
	id := programID()
	if r == nil || len(call.Stdin) > residentMaxStdin || id == "" {
		return 0, false, nil
	}
	body := call.encode()
	if len(body) > execMaxCall {
		return 0, false, nil
	}
	conn, err := r.dialExec()
	if err != nil {
		return 0, false, nil
	}
	defer conn.Close()
	if err := conn.setTimeout(unix.SO_RCVTIMEO, residentTimeout); err != nil {
		return 0, false, nil
	}
	if _, err := conn.Write(execHeader(id, body)); err != nil {
		return 0, false, nil // a frame cut short runs nothing
	}
	if call.Sent != nil {
		call.Sent()
	}
	if head, err := readHead(conn); err != nil || !bytes.Equal(head, execAccepted) {
		// A resident that did not answer in time may write its "accepted" the moment after
		// and act: the call's outcome is unknown, and running it here could deliver twice.
		if errors.Is(err, errExecTimeout) {
			return 0, true, fmt.Errorf("%w: it did not say within %s whether it took the call", ErrExecLost, residentTimeout)
		}
		// Nothing written after a refusal; and a resident that died before its "accepted"
		// reached the socket had not begun: it writes that frame before it acts.
		return 0, false, nil
	}
	// From here the call runs as long as the command does, waited for in the poller; the caller's
	// ctx ending (Ctrl-C) sends the resident the call's cancel. Writes stay bounded.
	if err := conn.park(); err != nil {
		return 0, true, fmt.Errorf("%w: %v", ErrExecLost, err)
	}
	send := func(kind byte, payload []byte) {
		_, _ = conn.Write(appendExecFrame(nil, kind, payload))
	}
	stop := context.AfterFunc(ctx, func() {
		send(execCancel, nil)
		conn.shutAfter(execCancelWait)
	})
	defer stop()
	in := bufio.NewReader(conn)
	for {
		kind, payload, err := readExecFrame(in)
		if err != nil {
			if ctx.Err() != nil {
				return 0, true, ctx.Err()
			}
			return 0, true, ErrExecLost
		}
		switch kind {
		case execStdout:
			var ack []byte
			if _, err := stdout.Write(payload); err != nil {
				ack = execWriteError(err)
			}
			send(execAck, ack)
		case execStderr:
			_, _ = stderr.Write(payload)
		case execExit:
			if len(payload) != 4 {
				return 0, true, ErrExecLost
			}
			return int(int32(binary.BigEndian.Uint32(payload))), true, nil
		default:
			return 0, true, ErrExecLost
		}
	}
}

// The kinds of an exec's frames after "accepted": the resident's output, its exit code; the
// caller's answer to a stdout frame, its cancel.
const (
	execStdout byte = 'o'
	execStderr byte = 'e'
	execExit   byte = 'x'
	execAck    byte = 'a'
	execCancel byte = 'c'
)

// execAccepted is the header of the resident's "accepted", compared as bytes by the caller.
var execAccepted = []byte(`{"state":"accepted"}`)

// execMaxCall bounds an exec's call after its header: its stdin (residentMaxStdin) and a header's
// worth of words, folder and environment.
const execMaxCall = residentMaxStdin + maxFrame

// execHeader is the exec request's frame: its JSON header, which only a resident of the same
// program (id) takes, then the call.
func execHeader(id string, call []byte) []byte {
	head := `{"op":"exec","stdin":` + strconv.Itoa(len(call)) + `,"program":` + strconv.Quote(id) + `}`
	buf := make([]byte, 4, 4+len(head)+len(call))
	binary.BigEndian.PutUint32(buf, uint32(len(head)))
	buf = append(buf, head...)
	return append(buf, call...)
}

// encode is the call's words, folder, environment and stdin as lengths and bytes (decodeCall).
func (call ExecCall) encode() []byte {
	n := 16 + len(call.Dir) + len(call.Stdin)
	for _, s := range call.Args {
		n += 4 + len(s)
	}
	for _, s := range call.Env {
		n += 4 + len(s)
	}
	b := make([]byte, 0, n)
	b = appendStrings(b, call.Args)
	b = appendBytes(b, []byte(call.Dir))
	b = appendStrings(b, call.Env)
	if call.Stdin == nil {
		return append(b, 0)
	}
	return appendBytes(append(b, 1), call.Stdin)
}

// decodeCall reads a call that encode wrote; false when b is not one.
func decodeCall(b []byte) (call ExecCall, ok bool) {
	d := callDecoder{b: b, ok: true}
	call.Args = d.strings()
	call.Dir = string(d.bytes())
	call.Env = d.strings()
	if d.ok && len(d.b) > 0 && d.b[0] == 1 {
		d.b = d.b[1:]
		call.Stdin = append([]byte{}, d.bytes()...)
	} else if d.ok && len(d.b) > 0 && d.b[0] == 0 {
		d.b = d.b[1:]
	} else {
		d.ok = false
	}
	return call, d.ok && len(d.b) == 0
}

func appendBytes(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(ss)))
	for _, s := range ss {
		b = appendBytes(b, []byte(s))
	}
	return b
}

// callDecoder reads lengths and bytes off b; ok false once b held too few.
type callDecoder struct {
	b  []byte
	ok bool
}

func (d *callDecoder) uint32() int {
	if !d.ok || len(d.b) < 4 {
		d.ok = false
		return 0
	}
	n := binary.BigEndian.Uint32(d.b)
	d.b = d.b[4:]
	if int64(n) > int64(len(d.b)) {
		d.ok = false
		return 0
	}
	return int(n)
}

func (d *callDecoder) bytes() []byte {
	n := d.uint32()
	if !d.ok {
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *callDecoder) strings() []string {
	n := d.uint32() // each string takes at least its 4 bytes of length: n is bounded by len(b)
	if !d.ok {
		return nil
	}
	var out []string
	for range n {
		s := d.bytes()
		if !d.ok {
			return nil
		}
		out = append(out, string(s))
	}
	return out
}

// appendExecFrame appends a frame of kind with payload to b.
func appendExecFrame(b []byte, kind byte, payload []byte) []byte {
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// readExecFrame reads one frame written by appendExecFrame.
func readExecFrame(r io.Reader) (kind byte, payload []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes: more than %d", n, maxFrame)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return h[0], payload, nil
}

// execWriteError is the payload of the answer to a stdout frame the caller could not write: the
// errno, when err has one, then its words.
func execWriteError(err error) []byte {
	var errno syscall.Errno
	errors.As(err, &errno)
	b := binary.BigEndian.AppendUint32(nil, uint32(errno))
	if msg := err.Error(); msg != "" {
		return append(b, msg...)
	}
	return append(b, "write failed"...)
}

// execAckError is the error an answer's payload says, nil for none.
func execAckError(payload []byte) error {
	if len(payload) < 4 {
		return nil
	}
	if errno := syscall.Errno(binary.BigEndian.Uint32(payload)); errno > 0 {
		return &os.PathError{Op: "write", Path: "the caller's stdout", Err: errno}
	}
	return errors.New(string(payload[4:]))
}

// serveExec runs one command for the peer pid on c, then closes the connection (serveConn).
func (s *ResidentServer) serveExec(ctx context.Context, c *net.UnixConn, req residentReq, body []byte, pid int) {
	call, ok := decodeCall(body)
	if s.Exec == nil || req.Program == "" || req.Program != programID() || pid <= 0 || !ok {
		_ = writeFrame(c, residentResp{State: "notrun", Err: "the resident does not run commands for this program"}, nil)
		return
	}
	if s.Busy != nil {
		defer s.Busy()() // released as serveExec returns: after the exit code is written
	}
	s.guards.Add(1) // busy: a long await keeps the resident from its idle end
	defer func() {
		s.guards.Add(-1)
		s.last.Store(time.Now().UnixNano())
	}()
	accepted := binary.BigEndian.AppendUint32(nil, uint32(len(execAccepted)))
	if _, err := c.Write(append(accepted, execAccepted...)); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone, left := context.WithCancel(ctx)
	defer left()
	acks := make(chan []byte, 1)
	dead := make(chan struct{})
	go func() {
		// The caller sends its answers and at most its cancel; the read fails once it goes.
		defer close(dead)
		defer left()
		in := bufio.NewReader(c)
		for {
			kind, payload, err := readExecFrame(in)
			if err != nil {
				return
			}
			switch kind {
			case execCancel:
				cancel()
			case execAck:
				acks <- payload
			}
		}
	}()
	var mu sync.Mutex
	out := func(kind byte) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			for rest := p; len(rest) > 0; {
				n := min(len(rest), maxFrame)
				if _, err := c.Write(appendExecFrame(nil, kind, rest[:n])); err != nil {
					return len(p) - len(rest), err
				}
				if kind == execStdout {
					select {
					case a := <-acks:
						if err := execAckError(a); err != nil {
							return len(p) - len(rest), err
						}
					case <-dead:
						return len(p) - len(rest), net.ErrClosed
					}
				}
				rest = rest[n:]
			}
			return len(p), nil
		})
	}
	call.PID, call.Gone, call.Tmux = pid, gone, localRouter{s}
	callstack.Grow() // nothing to do once grown (serving), unless the collector shrank it meanwhile
	code := s.Exec(ctx, call, out(execStdout), out(execStderr))
	mu.Lock()
	defer mu.Unlock()
	if _, err := c.Write(appendExecFrame(nil, execExit, binary.BigEndian.AppendUint32(nil, uint32(int32(code))))); err != nil {
		s.logf("the caller (pid %d) of %q went before its exit code %d", pid, first(call.Args), code)
	}
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

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
