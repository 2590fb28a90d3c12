package tmuxd

// The resident client, the calling side. A tmux client costs a process start (2 to 4 ms on a
// small virtual machine, and as much again of CPU), and a send makes two or three calls. The
// resident (ResidentServer, one per root and tmux server, started on demand and ending when idle)
// keeps one control-mode client open and runs the calls of every wcomm process of the root
// through it, for a write and a read on a unix socket. The socket lives in a folder of this user
// (0700), is itself this user's, and the process at its other end must run as this user
// (SO_PEERCRED), each side checking the other: a socket another user planted is never used.
// Whatever the resident cannot do, or when it is not there, the call starts its own client.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// residentMaxStdin bounds what a call hands the resident on stdin: a larger message is written
// to tmux by a client of its own, so that it is never held twice in memory (here and in the
// resident) nor copied through a file.
const residentMaxStdin = 1 << 20

// residentRetry is how long after the resident did not answer a dial is tried again; the calls
// in between start a client each. After this process started the resident, the first retries
// come sooner (residentFirstRetry, doubled at each miss up to residentRetry): the resident is up
// some 10-20 ms after its start, and a process that lives on (an MCP server) otherwise started a
// tmux client per call for its first two seconds (measured: about 180 of an MCP server's first
// 600 round trips). A dial that misses costs a stat or two and a connect refused.
const (
	residentFirstRetry = 10 * time.Millisecond
	residentRetry      = 2 * time.Second
)

// residentTimeout bounds one call through the resident beyond the caller's own context: the
// resident's control client gives up after paneops.ControlTimeout.
const residentTimeout = paneops.ControlTimeout + 2*time.Second

// Resident is the calling side of the resident client of one root and tmux server. It is safe
// for concurrent use; calls share one connection, one at a time.
type Resident struct {
	dir   string // the folder of the socket: this user's, 0700, checked by whoever made it
	name  string // the socket's name in it
	start func() error

	mu      sync.Mutex
	conn    *net.UnixConn
	off     time.Time     // no dial before this
	pause   time.Duration // the last wait between dials that missed
	started bool
	// later: a call that finds no resident does not start one; StartLater's caller does, once
	// the command has shown that its tmux server is there.
	later bool
	now   func() time.Time // the clock of off (tests); nil: time.Now
}

// NewResident is the calling side of the resident listening on name in dir (ResidentSocket).
// start, when not nil, starts the resident when none answers, once until one has answered: the
// calls go on without it meanwhile.
func NewResident(dir, name string, start func() error) *Resident {
	return &Resident{dir: dir, name: name, start: start}
}

// ResidentKey names the resident of the tmux server that s reaches from a process whose $TMUX
// is tmuxEnv and whose $TMUX_TMPDIR is tmpdir: a digest of the server's socket, so one resident
// runs per server and root, whatever the names the callers used for the server.
func ResidentKey(s paneops.Server, tmuxEnv, tmpdir string) string {
	sock := s.Socket
	switch {
	case sock != "":
	case s.Name != "" || tmuxEnv == "":
		name := s.Name
		if name == "" {
			name = "default"
		}
		if tmpdir == "" {
			tmpdir = "/tmp"
		}
		sock = filepath.Join(tmpdir, "tmux-"+strconv.Itoa(os.Getuid()), name)
	default:
		sock, _, _ = cutComma(tmuxEnv)
	}
	if abs, err := filepath.Abs(sock); err == nil {
		sock = abs
	}
	return messages.ContentSHA256([]byte(sock))[:16]
}

func cutComma(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// residentReq is one call handed to the resident: a command list, or the guard of a delivery.
// Stdin bytes follow the header on the wire.
type residentReq struct {
	Op     string   `json:"op"` // "run", "guard" or "exec"
	Args   []string `json:"args,omitempty"`
	Stdin  int      `json:"stdin,omitempty"` // length of the bytes after the header
	Server string   `json:"server,omitempty"`
	Socket string   `json:"socket,omitempty"`
	Pane   string   `json:"pane,omitempty"`
	// exec (resident_exec.go): the caller's program; its call follows the header, encoded
	// (execCall).
	Program string `json:"program,omitempty"`
}

// residentResp is the resident's answer.
type residentResp struct {
	State  string `json:"state"` // "done", "notrun", "lost"; exec's "accepted" (execAccepted)
	Out    string `json:"out,omitempty"`
	Code   int    `json:"code,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	Err    string `json:"err,omitempty"`
}

// maxFrame bounds a frame's header; stdin is bounded by residentMaxStdin.
const maxFrame = 1 << 20

// writeFrame writes a length-prefixed JSON header, then body.
func writeFrame(w io.Writer, v any, body []byte) error {
	head, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 4, 4+len(head)+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(head)))
	buf = append(buf, head...)
	buf = append(buf, body...)
	_, err = w.Write(buf)
	return err
}

// readFrame reads a header written by writeFrame into v.
func readFrame(r io.Reader, v any) error {
	head, err := readHead(r)
	if err != nil {
		return err
	}
	return json.Unmarshal(head, v)
}

// readHead reads the bytes of a header written by writeFrame.
func readHead(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes: more than %d", size, maxFrame)
	}
	head := make([]byte, size)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	return head, nil
}

// socketPath is the resident's socket, once its folder and the socket are checked as this
// user's own (dial and dialExec connect to nothing else).
func (r *Resident) socketPath() (string, error) {
	if err := ownedBy(r.dir, true); err != nil {
		return "", err
	}
	path := filepath.Join(r.dir, r.name)
	if err := ownedBy(path, false); err != nil {
		return "", err
	}
	return path, nil
}

// dial connects to the resident, checking the socket and the peer.
func (r *Resident) dial(ctx context.Context) (*net.UnixConn, error) {
	path, err := r.socketPath()
	if err != nil {
		return nil, err
	}
	var conn *net.UnixConn
	err = withShortPath(path, func(p string) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", p)
		if err != nil {
			return err
		}
		conn = c.(*net.UnixConn)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := PeerUID(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// ownedBy checks that path is this user's and not a symlink; dir: a folder no one else can
// enter (0700).
func ownedBy(path string, dir bool) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink: not used", path)
	case ok && int(sys.Uid) != os.Getuid():
		return fmt.Errorf("%s is owned by uid %d, not by you (uid %d): not used", path, sys.Uid, os.Getuid())
	case dir && (!st.IsDir() || st.Mode().Perm() != 0o700):
		return fmt.Errorf("%s is not a folder of mode 0700: not used", path)
	case !dir && st.Mode()&os.ModeSocket == 0:
		return fmt.Errorf("%s is not a socket: not used", path)
	}
	return nil
}

// PeerUID is the uid of the process at the other end of c (SO_PEERCRED); an error when it is
// not this process's own uid.
func PeerUID(c *net.UnixConn) (int, error) {
	cred, err := peerCred(c)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), sameUser(int(cred.Uid))
}

// sameUser is an error when uid, a peer's, is not this process's own.
func sameUser(uid int) error {
	if uid != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not as you (uid %d)", uid, os.Getuid())
	}
	return nil
}

func peerCred(c *net.UnixConn) (*syscall.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if cerr != nil {
		return nil, fmt.Errorf("read the peer's credentials: %w", cerr)
	}
	return cred, nil
}

// withShortPath calls f with path, or, when path is longer than a unix socket's address can
// hold (108 bytes), with the same file reached through /proc/self/fd and an open handle of its
// folder.
func withShortPath(path string, f func(string) error) error {
	if len(path) < 100 {
		return f(path)
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return f("/proc/self/fd/" + strconv.Itoa(fd) + "/" + filepath.Base(path))
}

// conn returns the open connection, dialing (and starting the resident once) when there is
// none (r.mu held); nil when the resident does not answer.
func (r *Resident) connLocked(ctx context.Context) *net.UnixConn {
	if r.conn != nil {
		return r.conn
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	if now().Before(r.off) {
		return nil
	}
	c, err := r.dial(ctx)
	if err != nil {
		switch {
		case r.start != nil && !r.started && !r.later:
			r.started = true
			_ = r.start()
			r.pause = residentFirstRetry
		case r.started && r.pause > 0:
			r.pause = min(2*r.pause, residentRetry)
		default:
			r.pause = residentRetry
		}
		r.off = now().Add(r.pause)
		return nil
	}
	// One answered: should it end some day (killed, or idle while this process lived on, as an
	// MCP server does), the next call that finds none starts one again.
	r.started, r.pause = false, 0
	r.conn = c
	return c
}

// StartLater makes r's calls go on without starting the resident when none answers; Started
// starts it then. For commands that read (find, panes): starting the resident before a tmux call
// proved the server there would have its control client start a server on that socket
// (attach-session starts one), and would make the root of a command that failed.
func (r *Resident) StartLater() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.later = true
}

// Start starts the resident when none answered this process's calls, once per process.
func (r *Resident) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == nil && r.start != nil && !r.started {
		r.started = true
		_ = r.start()
	}
}

func (r *Resident) dropLocked() {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
}

// Close closes the connection to the resident.
func (r *Resident) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked()
}

// Route hands one call to the resident (paneops.Router). argv is the call's whole command line,
// for its errors.
func (r *Resident) Route(ctx context.Context, argv []string, stdin io.Reader, args []string) (string, paneops.RouteState, error) {
	if r == nil { // a nil *Resident handed to Client.WithResident: no resident, as before
		return "", paneops.RouteNotRun, nil
	}
	body, ok := stdinBody(stdin, args)
	if !ok {
		return "", paneops.RouteNotRun, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	conn := r.connLocked(ctx)
	if conn == nil {
		return "", paneops.RouteNotRun, nil
	}
	deadline := time.Now().Add(residentTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if err := writeFrame(conn, residentReq{Op: "run", Args: args, Stdin: len(body)}, body); err != nil {
		// A frame cut short is read by nobody: the resident runs only whole ones.
		r.dropLocked()
		return "", paneops.RouteNotRun, nil
	}
	var resp residentResp
	if err := readFrame(conn, &resp); err != nil {
		r.dropLocked()
		if ctx.Err() != nil {
			return "", paneops.RouteDone, &paneops.Error{Argv: argv, ExitCode: -1, Err: ctx.Err()}
		}
		return "", paneops.RouteLost, nil
	}
	return resp.result(argv)
}

// stdinBody is the bytes of a call's stdin when the resident can take them: a whole message
// (a bytes.Reader) loaded by the call's first command. ok false: the call is not for the
// resident.
func stdinBody(stdin io.Reader, args []string) (body []byte, ok bool) {
	if stdin == nil {
		return nil, true
	}
	br, isBytes := stdin.(*bytes.Reader)
	if !isBytes || br.Len() > residentMaxStdin || !loadsStdin(args) {
		return nil, false
	}
	body = make([]byte, br.Len())
	if _, err := br.ReadAt(body, br.Size()-int64(br.Len())); err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return body, true
}

// result is the answer to a call as a paneops.Router returns it.
func (resp residentResp) result(argv []string) (string, paneops.RouteState, error) {
	switch resp.State {
	case "done":
	case "notrun":
		return "", paneops.RouteNotRun, nil
	default:
		return "", paneops.RouteLost, nil
	}
	if resp.Code == 0 && resp.Err == "" {
		return resp.Out, paneops.RouteDone, nil
	}
	if resp.Code < 0 {
		return resp.Out, paneops.RouteDone, &paneops.Error{Argv: argv, ExitCode: -1, Stderr: resp.Stderr, Err: errors.New(resp.Err)}
	}
	return resp.Out, paneops.RouteDone, paneops.NewError(argv, resp.Code, resp.Stderr, fmt.Errorf("tmux exited with status %d", resp.Code))
}

// loadsStdin reports whether stdin goes only to a first command "load-buffer ... -", the one
// shape the resident takes stdin for (it loads the bytes from a file of its own).
func loadsStdin(args []string) bool {
	end := len(args)
	for i, a := range args {
		if a == ";" {
			end = i
			break
		}
	}
	return end >= 2 && args[0] == "load-buffer" && args[end-1] == "-"
}

// Guard hands the guard of this process's deliveries into pane to the resident: it sleeps on
// this process's exit and finishes a delivery this process left between paste and Enter. The
// connection stays open for the life of the process; should the resident end first, lost is
// called, which starts a guard of another kind. An error: the resident did not take it.
func (r *Resident) Guard(ctx context.Context, server, socket string, pane messages.PaneID, lost func()) error {
	conn, err := r.dial(ctx)
	if err != nil {
		r.mu.Lock()
		if r.start != nil && !r.started {
			r.started = true
			_ = r.start()
		}
		r.mu.Unlock()
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(residentTimeout))
	if err := writeFrame(conn, residentReq{Op: "guard", Server: server, Socket: socket, Pane: string(pane)}, nil); err != nil {
		conn.Close()
		return err
	}
	var resp residentResp
	if err := readFrame(conn, &resp); err != nil || resp.State != "done" {
		conn.Close()
		if err == nil {
			err = fmt.Errorf("the resident tmux client did not take the guard: %s", resp.Err)
		}
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	go func() {
		// Nothing more is sent either way: a read returns only when the resident ends.
		var b [1]byte
		_, _ = conn.Read(b[:])
		conn.Close()
		if lost != nil {
			lost()
		}
	}()
	return nil
}
