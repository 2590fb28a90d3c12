// Package tmuxtest runs private tmux servers for the tests of every package: the one gate that
// skips a test without tmux, or fails it where REQUIRE_TMUX=1 (CI) says tmux must be there; a
// socket in a new short temp folder (socket paths are limited to about 100 bytes); a server with
// no config file; and its end, with the folder, when the test ends. Other tests' servers run at
// the same time: a server is only ever addressed, and killed, by its own -S socket.
package tmuxtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Required reports whether the run requires tmux and the programs the end-to-end tests run in
// panes (REQUIRE_TMUX=1, as CI sets it): then a missing one fails the test instead of skipping it.
func Required() bool { return os.Getenv("REQUIRE_TMUX") == "1" }

// Require returns the path of tmux. Without tmux it skips the test, or fails it when Required.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if Required() {
			t.Fatalf("tmux is not installed but REQUIRE_TMUX=1: %v", err)
		}
		t.Skipf("tmux is not installed (%v); set REQUIRE_TMUX=1 to make this a failure", err)
	}
	return bin
}

// Server is one test's private tmux server.
type Server struct {
	Bin  string // tmux
	Dir  string // the short temp folder that holds the socket; removed when the test ends
	Sock string // the socket, to pass as -S
	// PID is the server's process, set by Start.
	PID int
}

// Options say how Start makes the server's first session.
type Options struct {
	Session       string   // the session's name
	Window        string   // the first window's name ("" leaves it to tmux)
	Width, Height int      // the session's size
	Env           []string // the environment of the server, and so of every pane (nil: this process's)
	Argv          []string // the first pane's program: it should idle, so the server lives
}

// New makes a server's socket folder and arranges for the server to be killed (by its own socket)
// and the folder removed when the test ends; Start starts it.
func New(t testing.TB) *Server {
	t.Helper()
	bin := Require(t)
	dir, err := os.MkdirTemp("", "wc")
	if err != nil {
		t.Fatalf("make a socket folder: %v", err)
	}
	s := &Server{Bin: bin, Dir: dir, Sock: filepath.Join(dir, "s")}
	if len(s.Sock) >= 100 {
		t.Fatalf("socket path %s is too long for tmux: set TMPDIR to a short folder", s.Sock)
	}
	t.Cleanup(func() {
		if s.Kill() {
			t.Logf("the tmux server (pid %d) outlived kill-server for %s and was killed", s.PID, killWait)
		}
		_ = os.RemoveAll(dir)
	})
	return s
}

// Start starts the server (again, after Kill) with no config file and o's first session, and
// reads its pid.
func (s *Server) Start(t testing.TB, o Options) {
	t.Helper()
	args := []string{"-S", s.Sock, "-f", "/dev/null", "new-session", "-d", "-s", o.Session,
		"-x", strconv.Itoa(o.Width), "-y", strconv.Itoa(o.Height)}
	if o.Window != "" {
		args = append(args, "-n", o.Window)
	}
	args = append(append(args, "--"), o.Argv...)
	cmd := exec.Command(s.Bin, args...)
	cmd.Env = o.Env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start a private tmux server: %v: %s", err, out)
	}
	out, err := s.Run("display-message", "-p", "#{pid}")
	if err == nil {
		s.PID, err = strconv.Atoi(strings.TrimSpace(out))
	}
	if err != nil {
		t.Fatalf("read the tmux server's pid: %v", err)
	}
}

// Run runs a tmux command on the server (-u: formats keep their tabs whatever the locale) and
// returns its stdout; the error carries its stderr. A hung server fails the call in 30 s.
func (s *Server) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Bin, append([]string{"-u", "-S", s.Sock}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &Error{Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return string(out), nil
}

// killWait is how long Kill gives the server to end after kill-server.
var killWait = 5 * time.Second

// Kill ends the server with kill-server, and returns once its process is gone. A tmux 3.3a server
// can outlive kill-server (and SIGTERM): it waits for its clients to go first, and one was seen
// running on after its test, its socket's folder removed, with five control clients still
// attached whose programs were gone, the server holding their pipes (about one server a full run
// of the suites). A server still running after killWait is killed (SIGKILL), and its clients then
// end with their connection; killed reports that it was.
func (s *Server) Kill() (killed bool) {
	_ = exec.Command(s.Bin, "-S", s.Sock, "kill-server").Run()
	if s.PID <= 0 {
		return false
	}
	deadline := time.Now().Add(killWait)
	for running(s.PID, s.Sock) {
		if !time.Now().Before(deadline) {
			_ = syscall.Kill(s.PID, syscall.SIGKILL)
			return true
		}
		time.Sleep(10 * time.Millisecond) // the polling interval, to the deadline above
	}
	return false
}

// running reports whether pid is still a server of sock: its command line names the socket (so a
// pid used again by another process is never taken for it; a zombie has no command line).
func running(pid int, sock string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.Contains(b, []byte(sock))
}

// Error is a tmux command that failed, with what it said.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	return "tmux " + strings.Join(e.Args, " ") + ": " + e.Err.Error() + ": " + e.Stderr
}

// Unwrap returns the exec error.
func (e *Error) Unwrap() error { return e.Err }
