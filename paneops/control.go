package paneops

// A tmux client kept open in control mode (tmux(1), CONTROL MODE) for reads that repeat. The
// console reads the panes and their screens every second; a tmux client started for each read
// costs a process start, which on a small virtual machine is about 10 ms of CPU, so two reads a
// second alone would take 2 % of a core while nothing changes. One client kept open answers the
// same commands for a write and a read on a pipe.
//
// The client attaches read-only, without pane output and without a say in window sizes
// (attach-session -f ignore-size,no-output,read-only, tmux 3.2), and without copying its
// environment into the session (-E). It still counts as an attached client while it runs
// (list-clients shows it). When it cannot start or breaks, the calls fall back on a client per
// call, as before, and a new start is tried a few seconds later.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// controlFlags are the attached client's flags: it reads, it never types, sizes or receives output.
const controlFlags = "ignore-size,no-output,read-only"

// ControlTimeout bounds one exchange with the control client: a server that does not answer a
// read in this time is treated as gone, and the next call starts a new client.
const ControlTimeout = 5 * time.Second

// controlRetry is how long after a failed start the next start is tried; the calls made in
// between start a client each, as without control mode.
const controlRetry = 5 * time.Second

// Control is a tmux client kept open in control mode, attached to Target's session. Its Client
// runs commands without stdin through it. It is safe for concurrent use; Close ends the client.
type Control struct {
	spawn  Client // the socket flags, and the calls that fall back
	target string
	flags  string // attach-session -f

	mu     sync.Mutex
	conn   *controlConn
	retry  time.Time
	closed bool
	// changes hears of the panes' changes from the clients' notifications (control_watch.go);
	// once Changes was called (watching), each client started subscribes to them.
	changes  chan struct{}
	watching bool
	outs     []chan struct{} // the readers of Changes
	// ttys, when set, hears of the panes' output from the kernel (control_ttys_linux.go), and
	// the clients do not subscribe.
	ttys *ttyWatch
}

// controlConn is one running control client.
type controlConn struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	// lines is stdout, in batches: the lines read in one go (what one read of the pipe brought),
	// so that a call's answer of a dozen lines wakes its caller once or twice, not per line.
	// Closed when the client ends.
	lines chan []string
	// pending holds the lines of a batch that exchange has not read yet (k.mu held).
	pending []string
	done    chan struct{} // closed when the client ends
	// spoke is set once the client wrote its first line: the server has then made it a control
	// client (tmux writes nothing to one before). Killed before that, tmux 3.3a's server crashes
	// (control_stop on a client whose control state was never made), every session with it.
	spoke atomic.Bool
	// server is the server it attached to; turn lets go of that server's turn (control_turn.go),
	// held from its start until it spoke.
	server Server
	turn   func()
	// heard is set once tmux said the subscription's value (control_watch.go): tmux says it
	// at its first check, a second after the subscription, whatever the panes do.
	heard atomic.Bool
}

// Control returns a control-mode client that will attach to session target ("" for the one
// tmux picks). It starts on the first call. The target names a session, not a pane or a window:
// attach-session makes a window it is given the session's current one.
func (c *Client) Control(target string) *Control {
	return c.ControlFlags(target, controlFlags)
}

// ControlFlags is Control with other client flags (attach-session -f): a test harness that opens
// windows through it leaves out read-only.
func (c *Client) ControlFlags(target, flags string) *Control {
	return &Control{spawn: Client{Server: c.Server, Bin: c.Bin}, target: target, flags: flags, changes: make(chan struct{}, 1)}
}

// ControlTyping is Control for a client that also types (send-keys, paste-buffer): the
// long-lived MCP server's and the resident's, which deliver. It still takes no part in window
// sizes and receives no pane output.
func (c *Client) ControlTyping(target string) *Control {
	return c.ControlFlags(target, typingFlags)
}

// typingFlags are the flags of a control client that types (send-keys, paste-buffer), so it is
// not read-only; it takes no part in window sizes and receives no pane output.
const typingFlags = "ignore-size,no-output"

// Client is a Client whose calls without stdin go through the control client.
func (k *Control) Client() *Client {
	cl := k.spawn
	cl.ctl = k
	return &cl
}

// Close ends the control client.
func (k *Control) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	k.stop()
	if k.ttys != nil {
		_ = k.ttys.Close()
	}
	return nil
}

// Start starts the control client now rather than at the first call, so its start overlaps
// other work; a start that fails is left to the calls, which fall back. A client that ended
// (its server stopped) and that no call has dropped yet is dropped first.
func (k *Control) Start() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn != nil && k.conn.ended() {
		k.stop()
	}
	if k.conn == nil && !k.closed && time.Now().After(k.retry) {
		if err := k.start(); err != nil {
			k.retry = time.Now().Add(controlRetry)
		}
	}
}

// stop ends the running client, if any (k.mu held).
func (k *Control) stop() {
	if k.conn == nil {
		return
	}
	// Its detach tells the other control clients: not while one of wcomm's is being made one.
	release := controlTurn(k.conn.server)
	defer release()
	_ = k.conn.in.Close() // the client detaches and exits when its input ends
	done := make(chan struct{})
	cmd := k.conn.cmd
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		if k.conn.spoke.Load() {
			_ = cmd.Process.Kill()
			<-done
		}
		// One that has not spoken yet is left to end by its input's end, in the background:
		// killing it then would crash the tmux server (spoke).
	}
	k.conn = nil
}

// serverListens reports, as ErrNoServer, that no tmux server takes a connection on s's socket: a
// connection the server drops as soon as it is closed (2,000 of them in a row left tmux 3.3a's
// server as it was), where asking through a tmux client would cost a process.
func serverListens(s Server) error {
	sock := socketFile(s)
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return fmt.Errorf("%w on %s (%v)", ErrNoServer, sock, err)
	}
	return c.Close()
}

// start runs the control client (k.mu held).
func (k *Control) start() error {
	args := []string{"-C", "attach-session", "-E", "-f", k.flags}
	if k.target != "" {
		args = append(args, "-t", k.target)
	}
	cl := k.spawn
	env := os.Environ()
	if cl.Server == (Server{}) {
		// The default server is the one $TMUX names; the variable itself is left out below.
		if sock, _, _ := strings.Cut(os.Getenv("TMUX"), ","); sock != "" {
			cl.Server.Socket = sock
		}
	}
	// attach-session starts a tmux server when none answers on the socket, and that server reads
	// the user's tmux config before it finds no session and ends: a command of wcomm's never starts
	// one (a `panes --host` run outside tmux did). So the socket is asked first.
	if err := serverListens(cl.Server); err != nil {
		return err
	}
	argv := cl.argv(args)
	path, err := lookPath(argv[0])
	if err != nil {
		return err
	}
	cmd := exec.Command(path, argv[1:]...)
	// Without TMUX: attach-session refuses a client it takes for nested in a pane.
	cmd.Env = withoutEnv(env, "TMUX", "TMUX_PANE")
	// Not killed with this process (dieWithParent), unlike a client per call: a control client
	// killed before the server has made it one crashes tmux 3.3a's server (spoke), and a wcomm
	// killed just after starting it would do that. Its input's end, which this process's end
	// is, ends it as well, gracefully; a line this process wrote before it ended may still run
	// then, which the fence of every delivery's call already answers (deliver_fence.go).
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	turn := controlTurn(cl.Server)
	if err := cmd.Start(); err != nil {
		turn()
		return err
	}
	conn := &controlConn{cmd: cmd, in: in, lines: make(chan []string, 256), done: make(chan struct{}), server: cl.Server, turn: turn}
	time.AfterFunc(controlTurnWait, turn) // held no longer than that, spoken or not
	changes := k.changes
	go func() {
		defer close(conn.done)
		defer close(conn.lines)
		defer conn.turn()
		r := bufio.NewReaderSize(out, 64<<10)
		// The answers' blocks go to exchange; between blocks come the notifications, which
		// exchange would skip: they are taken here, so that a client nobody calls for hours
		// never fills its buffer with them, and those about the panes are told to changes.
		block := ""
		var batch []string
		for {
			raw, err := r.ReadString('\n')
			line := strings.TrimSuffix(raw, "\n")
			if raw != "" && !conn.spoke.Load() {
				conn.spoke.Store(true)
				conn.turn()
			}
			switch {
			case raw == "":
			case block != "":
				if line == "%end "+block || line == "%error "+block {
					block = ""
				}
				batch = append(batch, line)
			case strings.HasPrefix(line, "%begin "):
				block = strings.TrimPrefix(line, "%begin ")
				batch = append(batch, line)
			case strings.HasPrefix(line, "%"):
				if strings.HasPrefix(line, "%subscription-changed "+changesName+" ") {
					conn.heard.Store(true)
				}
				if panesNotice(line) {
					select {
					case changes <- struct{}{}:
					default:
					}
				}
			default:
				batch = append(batch, line) // out of step: exchange says so
			}
			// The batch goes once nothing more of a line waits in the buffer: the next read
			// would wait on the pipe.
			if len(batch) > 0 && (err != nil || bytes.IndexByte(peekBuffered(r), '\n') < 0) {
				conn.lines <- batch
				batch = nil
			}
			if err != nil {
				return
			}
		}
	}()
	k.conn = conn
	if k.watching && k.ttys == nil {
		// A subscription tmux refuses leaves the client for the calls, unheard: its readers
		// poll (control_watch.go). One that broke the client ends it.
		if err := k.subscribe(); errors.Is(err, errControl) {
			k.stop()
			return err
		}
	}
	return nil
}

func withoutEnv(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// errControl is a control client that broke or answered out of step.
var errControl = errors.New("tmux control client out of step")

// RouteState is the outcome of a call handed to a control client or to the resident client.
type RouteState int

const (
	RouteNotRun RouteState = iota // never reached tmux: the caller runs it itself
	RouteDone                     // answered: out and err are tmux's
	RouteLost                     // sent, then the client broke before answering: tmux may have run it, now or later
)

// Route runs one command list (args as for Client.Run) through the control client. RouteNotRun
// when the control client is not available: the caller then starts a client for the call.
func (k *Control) Route(ctx context.Context, args []string) (out string, st RouteState, err error) {
	cmds, ok := controlLines(args)
	if !ok {
		return "", RouteNotRun, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return "", RouteNotRun, nil
	}
	if k.conn == nil {
		if time.Now().Before(k.retry) {
			return "", RouteNotRun, nil
		}
		if err := k.start(); err != nil {
			k.retry = time.Now().Add(controlRetry)
			return "", RouteNotRun, nil
		}
	}
	out, err = k.exchange(ctx, args, cmds)
	if errors.Is(err, errControl) {
		// Out of step, ended (the session closed, the server stopped) or too slow: drop it; a
		// later call starts a new one. The commands were written, so tmux may have run them.
		k.stop()
		k.retry = time.Now().Add(controlRetry)
		if ctx.Err() != nil {
			return "", RouteDone, &Error{Argv: k.spawn.argv(args), ExitCode: -1, Err: ctx.Err()}
		}
		return "", RouteLost, nil
	}
	return out, RouteDone, err
}

// Done is closed when the running control client ends (its server stopped, or a call dropped
// it); nil when none runs, or the one that ran has ended. A process that keeps the client open waits on it instead of looking
// at it on a ticker, which would wake it while nothing happens.
func (k *Control) Done() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn == nil || k.conn.ended() {
		return nil
	}
	return k.conn.done
}

// ended reports whether the client's output has ended.
func (c *controlConn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Running reports whether the control client runs now (started and not broken).
func (k *Control) Running() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.conn != nil && !k.conn.ended()
}

// PID is the process id of the running control client, 0 when none runs.
func (k *Control) PID() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn == nil {
		return 0
	}
	return k.conn.cmd.Process.Pid
}

// exchange writes the command list as one line, then a marker line, and reads their answers
// (k.mu held). Each command's answer is a block: "%begin TIME NUMBER 1", its output lines, then
// "%end" or "%error" with the same three numbers (flag 1: the command came from this client).
// A command that if-shell runs gets a block of its own, so the blocks are read up to the
// marker's, whatever their number. tmux stops a command list at its first error, as it does for
// a client of its own, so the marker has a line of its own. Lines outside a block are
// notifications and are skipped. The marker's block must hold only the marker, a random word no
// pane can print: a row of a pane that imitates an %end line throws the reading out of step,
// which is caught here, never taken for output.
func (k *Control) exchange(ctx context.Context, args []string, cmds []string) (string, error) {
	var nb [8]byte
	_, _ = rand.Read(nb[:])
	marker := "\x1ewcomm-end " + hex.EncodeToString(nb[:])
	line := strings.Join(cmds, " ; ") + "\n" + "display-message -p " + controlQuote(marker) + "\n"
	if _, err := io.WriteString(k.conn.in, line); err != nil {
		return "", errControl
	}
	timer := time.NewTimer(ControlTimeout)
	defer timer.Stop()
	c := k.conn
	next := func() (string, error) {
		if len(c.pending) == 0 {
			select {
			case b, open := <-c.lines:
				if !open {
					return "", errControl
				}
				c.pending = b
			case <-ctx.Done():
				return "", errControl
			case <-timer.C:
				return "", errControl
			}
		}
		l := c.pending[0]
		c.pending = c.pending[1:]
		return l, nil
	}
	var stdout strings.Builder
	var failed *Error
	for {
		var begin string
		for {
			l, err := next()
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(l, "%begin ") && strings.HasSuffix(l, " 1") {
				begin = strings.TrimPrefix(l, "%begin ")
				break
			}
			if !strings.HasPrefix(l, "%") {
				return "", errControl // only notifications come between blocks
			}
		}
		var body []string
		isErr := false
		for {
			l, err := next()
			if err != nil {
				return "", err
			}
			if l == "%end "+begin {
				break
			}
			if l == "%error "+begin {
				isErr = true
				break
			}
			body = append(body, l)
		}
		if len(body) == 1 && body[0] == marker {
			if isErr {
				return "", errControl
			}
			break
		}
		text := ""
		if len(body) > 0 {
			text = strings.Join(body, "\n") + "\n"
		}
		switch {
		case failed != nil:
		case isErr:
			argv := k.spawn.argv(args)
			failed = NewError(argv, 1, text, fmt.Errorf("tmux exited with status 1"))
		default:
			stdout.WriteString(text)
		}
	}
	if failed != nil {
		return stdout.String(), failed
	}
	return stdout.String(), nil
}

// controlLines splits a command list (args as for Client.Run, ";" between commands) into
// command lines, each argument double-quoted. ok is false for an empty list.
func controlLines(args []string) ([]string, bool) {
	var lines []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, " "))
		}
		cur = nil
	}
	for _, a := range args {
		if a == ";" {
			flush()
			continue
		}
		cur = append(cur, controlQuote(a))
	}
	flush()
	return lines, len(lines) > 0
}

// controlQuote is s in double quotes for tmux's command parser: backslash, the quote and "$"
// (which would expand a variable) are escaped, and control characters and "~" are written as
// octal escapes, so a newline or a tab in a format reaches tmux as the same byte the argv form
// carries.
func controlQuote(s string) string {
	// Sized once: a message is quoted whole for every paste, and growing the builder by doubling,
	// with a formatted print for each newline, was a tenth of the resident's CPU over 8 pairs
	// (measured).
	var b strings.Builder
	b.Grow(len(s) + len(s)/8 + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '"' || c == '$':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f || c == '~':
			// '~' too: tmux expands a leading one to a home folder even inside double quotes.
			b.Write([]byte{'\\', '0' + c>>6, '0' + c>>3&7, '0' + c&7})
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// peekBuffered is what r holds already read from its source, without reading more.
func peekBuffered(r *bufio.Reader) []byte {
	b, _ := r.Peek(r.Buffered())
	return b
}
