package cli

// The end-to-end harness: the real wcomm binary against a private tmux server per test, with real
// programs (bash, cat, python3 fixtures) in real panes. Nothing here touches the default tmux
// server: every tmux call names the test's own socket, and every wcomm call either runs "inside"
// one of the test's panes ($TMUX names the test's socket) or passes -S.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/internal/sshtest"
	"github.com/wcomm/wcomm/internal/testhome"
	"github.com/wcomm/wcomm/internal/tmuxtest"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/lock"
)

// fixtures is the folder of the python3 fixtures, relative to this package.
var fixtures = filepath.Join("..", "..", "testdata", "fixtures")

// recorderPy is the raw-mode recorder of bracketed pastes shared with paneops' delivery tests.
var recorderPy = filepath.Join("..", "..", "paneops", "testdata", "recorder.py")

// referenceDir holds the bash implementation of the seed's plain procedure.
var referenceDir = filepath.Join("..", "..", "testdata", "reference")

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// The two programs, by import path (go build takes them from any folder of the module).
const (
	wcommPkg    = "github.com/wcomm/wcomm/cmd/wcomm"
	wcommMCPPkg = "github.com/wcomm/wcomm/cmd/wcomm-mcp"
	// wcommBridgePkg runs the answer channels, wcommUIPkg the console; wcomm starts them from
	// beside itself.
	wcommBridgePkg = "github.com/wcomm/wcomm/cmd/wcomm-bridge"
	wcommUIPkg     = "github.com/wcomm/wcomm/cmd/wcomm-ui"
)

// TestMain also makes this test binary the wcomm command of the testscript scripts
// (script_test.go): run as "wcomm" by a script, it is the real program's Run().
func TestMain(m *testing.M) {
	sshtest.Supervise() // a remote test's sshd host, when started as one
	sxHelper()          // a stress test's helper program, when started as one
	testscript.Main(removingBinDir{m}, map[string]func(){
		"wcomm": func() { os.Exit(Run(Companions{}, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// removingBinDir runs the tests with a scratch HOME (testhome: never the user's settings), then
// removes the binaries they built (testscript.Main exits). The isolation is here, not in TestMain:
// the test binary run as a script's "wcomm" keeps the HOME its script gives it.
type removingBinDir struct{ m *testing.M }

func (r removingBinDir) Run() int {
	cleanup, err := testhome.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	code := r.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}

// wcommBin builds the binary once per test run, on first use, so that tests of this package that
// need no tmux do not pay for the build. wcomm-mcp is built beside it, where 'wcomm mcp' finds it.
func wcommBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "wcomm-e2e-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "wcomm")
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), wcommPkg, wcommMCPPkg, wcommBridgePkg, wcommUIPkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build and make install build them
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// requireTmux skips without tmux, unless REQUIRE_TMUX=1 (CI), where a missing tmux fails the run
// (the shared gate, tmuxtest.Require).
func requireTmux(t *testing.T) {
	t.Helper()
	tmuxtest.Require(t)
	_, err := exec.LookPath("python3")
	require.NoError(t, err, "the end-to-end fixtures need python3")
}

// cleanEnv is the test process's environment without anything that would point a tmux client or
// wcomm at another server, pane or root.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "WCOMM_") || strings.HasPrefix(k, "REF_") {
			continue
		}
		env = append(env, kv)
	}
	if os.Getenv("TERM") == "" {
		env = append(env, "TERM=xterm-256color")
	}
	return env
}

// world is one test's private tmux server, its wcomm root and the built binary.
type world struct {
	t    *testing.T
	srv  *tmuxtest.Server
	bin  string
	dir  string // short temp folder holding the socket (socket paths must stay under ~100 bytes)
	sock string
	pid  int      // the server's pid, for $TMUX
	root string   // WCOMM_ROOT of every call and every pane
	work string   // a scratch folder for files the test makes
	env  []string // more environment for every call
}

// session is the tmux session every pane of a world lives in.
const session = "e2e"

// newWorld starts a private tmux server whose first pane idles, so the server lives until the
// test ends whatever the other panes do. The server's environment, and so every pane's, holds
// WCOMM_ROOT and WCOMM_BIN.
func newWorld(t *testing.T) *world {
	t.Helper()
	requireTmux(t)
	w := &world{t: t, bin: wcommBin(t), root: filepath.Join(t.TempDir(), "root"), work: t.TempDir()}
	w.srv = tmuxtest.New(t)
	w.dir, w.sock = w.srv.Dir, w.srv.Sock
	t.Cleanup(func() {
		// Before tmuxtest's own cleanup (cleanups run last first): the server goes first.
		w.srv.Kill()
		// Deliverers started by the test's sends end once they find the server gone; wait for
		// them before the root is removed under them.
		waitNoDeliverer(t, w.root)
	})
	w.startServer()
	return w
}

// startServer starts the world's server on its socket (again, after killServer), its first
// window idling in session.
func (w *world) startServer() {
	w.t.Helper()
	env := append(cleanEnv(), "WCOMM_ROOT="+w.root, "WCOMM_BIN="+w.bin, "WCOMM_ENTER_DELAY=50ms")
	w.srv.Start(w.t, tmuxtest.Options{Session: session, Window: "keeper", Width: 250, Height: 50, Env: env,
		Argv: []string{"sleep", "86400"}})
	w.pid = w.srv.PID
	// A big scrollback keeps whole requests in capture-pane's reach.
	w.tmux("set-option", "-g", "history-limit", "10000")
}

// killServer ends the world's server: kill-server, or with crash a SIGKILL of its process. It
// returns once the process has exited, so a restart cannot race its exit.
func (w *world) killServer(crash bool) {
	if crash && w.pid > 0 {
		_ = syscall.Kill(w.pid, syscall.SIGKILL)
	} else {
		_ = exec.Command("tmux", "-S", w.sock, "kill-server").Run()
	}
	if w.pid > 0 {
		// A zombie has exited: the daemonised server's parent is pid 1, which may take seconds to
		// reap it.
		deadline := time.Now().Add(10 * time.Second)
		for !exited(w.pid) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // the polling interval, to the deadline above
		}
	}
}

// exited reports whether pid has exited: no such process, or a zombie not yet reaped.
func exited(pid int) bool {
	f, err := procStatFields(pid)
	return err != nil || f[0] == "Z" || f[0] == "X"
}

// waitNoDeliverer waits until no deliverer holds an outbox under root.
func waitNoDeliverer(t *testing.T, root string) {
	t.Helper()
	locks, _ := filepath.Glob(filepath.Join(root, ".outbox", "*", "deliverer.lock"))
	for _, l := range locks {
		waitFor(t, 20*time.Second, func() bool { return !flocked(l) }, "the deliverer holding %s to exit", l)
	}
	// A send's guard holds no lock: it ends once its sender has, and may record the outcome of
	// a delivery as it goes, in the root that is about to be removed. A sender that outlives the
	// test (an MCP server's) keeps its guard: this waits a little for the others, and does not
	// fail for those. The resident tmux client a send started ends once the server is gone, and
	// logs why in the root's .tmuxd as it goes (or is still starting, making its files there).
	abs, _ := filepath.Abs(root)
	for deadline := time.Now().Add(3 * time.Second); len(deliverersOf(abs)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// deliverersOf are the pids of the 'wcomm __deliver' processes (deliverers and guards) and the
// 'wcomm __tmuxd' ones (resident tmux clients) of root.
func deliverersOf(root string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		data, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if (slices.Contains(args, "__deliver") || slices.Contains(args, "__tmuxd")) && slices.Contains(args, root) {
			out = append(out, filepath.Base(filepath.Dir(c)))
		}
	}
	return out
}

// tmuxOn runs tmux (-u: its formats keep their tabs whatever the locale) on the server at sock
// and returns stdout, or the error with tmux's stderr. A hung server fails the call in 30 s.
func tmuxOn(sock string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-u", "-S", sock}, args...)...)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// tmuxErr runs tmux on the world's socket.
func (w *world) tmuxErr(args ...string) (string, error) { return tmuxOn(w.sock, args...) }

// markRecord is what the server records of the last marked paste ("PASTED") or Enter
// ("ENTERED") into pane, "" when nothing: a hidden variable of its global environment.
func (w *world) markRecord(kind, pane string) string {
	name := "WCOMM_" + kind + "_" + strings.TrimPrefix(pane, "%")
	out, err := w.tmuxErr("show-environment", "-g", "-h", name)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(out), name+"=")
}

func (w *world) tmux(args ...string) string {
	w.t.Helper()
	out, err := w.tmuxErr(args...)
	require.NoError(w.t, err)
	return out
}

// pane opens a new window running argv (executed directly, no shell) in cwd (the world's work
// folder when empty) and returns its pane id.
func (w *world) pane(cwd string, argv ...string) string {
	w.t.Helper()
	return w.paneEnv(cwd, nil, argv...)
}

// paneEnv is pane with extra environment variables (KEY=VALUE) for the pane's program.
func (w *world) paneEnv(cwd string, env []string, argv ...string) string {
	w.t.Helper()
	return w.newWindow(session, cwd, env, argv...)
}

// window opens a new window of session sess running argv (no shell) in the work folder, with extra
// environment variables, and returns its pane id.
func (w *world) window(sess string, env []string, argv ...string) string {
	w.t.Helper()
	return w.newWindow(sess, "", env, argv...)
}

func (w *world) newWindow(sess, cwd string, env []string, argv ...string) string {
	w.t.Helper()
	if cwd == "" {
		cwd = w.work
	}
	args := []string{"new-window", "-d", "-P", "-F", "#{pane_id}", "-t", sess + ":", "-c", cwd}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(append(args, "--"), argv...)
	id := strings.TrimSpace(w.tmux(args...))
	require.Regexp(w.t, `^%\d+$`, id)
	return id
}

// awaitLockIn is the lock a waiting await holds on exchange seq of session folder dir.
func awaitLockIn(dir string, seq int) string { return filepath.Join(dir, messages.AwaitLockName(seq)) }

// bashPane opens an interactive bash without start-up files and waits for its prompt.
func (w *world) bashPane(cwd string) string {
	w.t.Helper()
	p := w.pane(cwd, "bash", "--norc", "--noprofile", "-i")
	w.waitScreen(p, "$ ", "# ")
	return p
}

// catPane opens a pane running cat (cooked mode: it echoes what it is given, twice on screen).
func (w *world) catPane() string {
	w.t.Helper()
	return w.pane("", "cat")
}

// recorderPane opens a recorder of bracketed pastes and returns the pane and its log.
func (w *world) recorderPane() (pane, log string) {
	w.t.Helper()
	log = filepath.Join(w.work, fmt.Sprintf("recorder-%d.jsonl", time.Now().UnixNano()))
	script, err := filepath.Abs(recorderPy)
	require.NoError(w.t, err)
	pane = w.pane("", "python3", script, log)
	w.waitScreen(pane, "RECORDER READY")
	return pane, log
}

// workerPane opens the scripted worker (testdata/fixtures/worker.py). With gate, it holds each
// answer until the test opens the gate for that request (openGate).
func (w *world) workerPane(gate bool) (pane, log, gateDir string) {
	w.t.Helper()
	log = filepath.Join(w.work, fmt.Sprintf("worker-%d.jsonl", time.Now().UnixNano()))
	script, err := filepath.Abs(filepath.Join(fixtures, "worker.py"))
	require.NoError(w.t, err)
	argv := []string{"python3", script, log}
	if gate {
		gateDir = filepath.Join(w.work, fmt.Sprintf("gate-%d", time.Now().UnixNano()))
		require.NoError(w.t, os.Mkdir(gateDir, 0o700))
		argv = append(argv, gateDir)
	}
	pane = w.pane("", argv...)
	w.waitScreen(pane, "WORKER READY")
	return pane, log, gateDir
}

// openGate lets the gated worker answer request id ("all": every request).
func openGate(t *testing.T, gateDir, id string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(gateDir, id), nil, 0o600))
}

// capture returns the pane's screen and scrollback, wrapped lines joined.
func (w *world) capture(pane string) string {
	w.t.Helper()
	return w.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
}

// waitScreen waits until the pane shows one of the texts and returns the screen.
func (w *world) waitScreen(pane string, texts ...string) string {
	w.t.Helper()
	var screen string
	waitFor(w.t, 10*time.Second, func() bool {
		out, err := w.tmuxErr("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
		if err != nil {
			return false
		}
		screen = out
		for _, s := range texts {
			if strings.Contains(screen, s) {
				return true
			}
		}
		return false
	}, "pane %s to show %q; screen:\n%s", pane, texts, &screen)
	return screen
}

// settle makes sure everything written to a bash pane so far has been handled: it types an echo
// of a fresh marker with send-keys (harmless text, typed as keys on purpose) and waits for the
// marker's output. The pty is a FIFO, so whatever reached the pane before is on screen by then.
func (w *world) settle(pane string) string {
	w.t.Helper()
	mark := fmt.Sprintf("SETTLED%d", time.Now().UnixNano())
	w.tmux("send-keys", "-t", pane, "-l", "echo "+mark[:4]+"''"+mark[4:])
	w.tmux("send-keys", "-t", pane, "Enter")
	return w.waitScreen(pane, "\n"+mark)
}

// paneDead reports whether the pane exists and is dead; exists is false once it is gone.
func (w *world) paneDead(pane string) (dead, exists bool) { return paneDeadVia(w.tmuxErr, pane) }

// serverAlive reports whether the world's server still answers.
func (w *world) serverAlive() bool { return serverAliveVia(w.tmuxErr, w.pid) }

// paneDeadVia asks a server, through its tmux call, whether pane exists and is dead.
func paneDeadVia(tmuxErr func(...string) (string, error), pane string) (dead, exists bool) {
	out, err := tmuxErr("list-panes", "-a", "-F", "#{pane_id} #{pane_dead}")
	if err != nil {
		return false, false
	}
	for _, line := range strings.Split(out, "\n") {
		id, d, _ := strings.Cut(line, " ")
		if id == pane {
			return d == "1", true
		}
	}
	return false, false
}

// serverAliveVia reports whether the server with this pid still answers (a restarted one has
// another pid).
func serverAliveVia(tmuxErr func(...string) (string, error), pid int) bool {
	out, err := tmuxErr("display-message", "-p", "#{pid}")
	return err == nil && strings.TrimSpace(out) == strconv.Itoa(pid)
}

// buffers lists the server's paste buffers.
func (w *world) buffers() []string {
	w.t.Helper()
	out := w.tmux("list-buffers", "-F", "#{buffer_name}")
	return strings.Fields(out)
}

// result is what one wcomm run did.
type result struct {
	args   []string
	stdout string
	stderr string
	code   int
}

func (r result) String() string {
	return fmt.Sprintf("wcomm %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// call says how to run wcomm: inside a pane (its $TMUX and $TMUX_PANE, as every process in a
// pane inherits them) or outside any pane, with stdin and extra environment.
type call struct {
	pane  string // "" = outside any pane
	stdin []byte
	env   []string
}

// cmd builds the wcomm process for a call.
func (w *world) cmd(ctx context.Context, c call, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.bin, args...)
	cmd.Env = append(cleanEnv(), "WCOMM_ROOT="+w.root)
	if c.pane != "" {
		cmd.Env = append(cmd.Env, fmt.Sprintf("TMUX=%s,%d,0", w.sock, w.pid), "TMUX_PANE="+c.pane)
	}
	cmd.Env = append(cmd.Env, w.env...)
	cmd.Env = append(cmd.Env, c.env...)
	cmd.Dir = w.work
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	cmd.WaitDelay = time.Second
	return cmd
}

// run runs wcomm to completion (at most a minute) and returns what it did.
func (w *world) run(c call, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := w.cmd(ctx, c, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return finish(w.t, args, cmd.Run(), &stdout, &stderr)
}

// in runs wcomm as if inside pane.
func (w *world) in(pane string, args ...string) result {
	w.t.Helper()
	return w.run(call{pane: pane}, args...)
}

func finish(t *testing.T, args []string, err error, stdout, stderr *bytes.Buffer) result {
	t.Helper()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run wcomm %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return r
}

// bg is a process running in the background: a wcomm run of a world (world.start) or of the
// stress tests (sxServer.start).
type bg struct {
	cmd      *exec.Cmd
	finished chan struct{} // closed when the process has ended; res is set then
	res      result
}

// start runs wcomm in the background; wait collects it. A run still going when the test ends is
// killed.
func (w *world) start(c call, args ...string) *bg {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	return startBg(w.t, w.cmd(ctx, c, args...), args, cancel)
}

// startBg starts cmd in the background and collects it; cancel (if any) is called once it ends.
// A process still running when the test ends is killed.
func startBg(t *testing.T, cmd *exec.Cmd, args []string, cancel func()) *bg {
	t.Helper()
	if cancel == nil {
		cancel = func() {}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", strings.Join(cmd.Args, " "), err)
	}
	b := &bg{cmd: cmd, finished: make(chan struct{})}
	go func() {
		defer close(b.finished)
		defer cancel()
		err := cmd.Wait()
		r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.Exited():
			r.code = ee.ExitCode()
		default:
			r.code = -1
			r.stderr += "\n(harness: " + err.Error() + ")"
		}
		b.res = r
	}()
	t.Cleanup(func() {
		select {
		case <-b.finished:
		default:
			_ = cmd.Process.Kill()
			<-b.finished
		}
	})
	return b
}

// wait returns the background run's result, failing after timeout.
func (b *bg) wait(t *testing.T, timeout time.Duration) result {
	t.Helper()
	select {
	case <-b.finished:
		return b.res
	case <-time.After(timeout):
		_ = b.cmd.Process.Kill()
		<-b.finished
		t.Fatalf("wcomm %s still running after %s; killed\n%s", strings.Join(b.cmd.Args[1:], " "), timeout, b.res)
		return result{}
	}
}

// exited reports whether the background run has ended.
func (b *bg) exited() bool {
	select {
	case <-b.finished:
		return true
	default:
		return false
	}
}

// waitFor polls cond every 10 ms until it holds or timeout passes, then fails with the message.
// Arguments that are *string are dereferenced when the message is printed, so the message can
// show the last state cond saw.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			for i, a := range args {
				if p, ok := a.(*string); ok {
					args[i] = *p
				}
			}
			t.Fatalf("timed out after %s waiting for "+format, append([]any{timeout}, args...)...)
		}
		time.Sleep(10 * time.Millisecond) // the polling interval
	}
}

// flocked reports whether some process holds an flock on path.
func flocked(path string) bool { return lock.IsLocked(path) }

// jsonLines reads a JSON-lines log written by a fixture; a missing file is an empty log.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "log line %q", line)
		out = append(out, m)
	}
	return out
}

// waitLog waits until a fixture's log holds an entry for which match is true, and returns it.
func waitLog(t *testing.T, path string, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var found map[string]any
	var seen string
	waitFor(t, 15*time.Second, func() bool {
		entries := jsonLines(t, path)
		b, _ := json.Marshal(entries)
		seen = string(b)
		for _, e := range entries {
			if match(e) {
				found = e
				return true
			}
		}
		return false
	}, "%s in %s; log: %s", what, path, &seen)
	return found
}

// event matches a worker log entry by event and request id.
func event(name, id string) func(map[string]any) bool {
	return func(e map[string]any) bool { return e["event"] == name && (id == "" || e["id"] == id) }
}

// withPeakRSS makes cmd run under a small python3 parent that writes the program's peak resident
// set (KiB) to file and exits with its status. Taken from this process's wait, the figure would
// be at least this test process's own: a child started by a vfork-like clone keeps, across its
// exec, the high-water mark of the memory it shared (under the full suite with -race, 412 MiB).
func withPeakRSS(t *testing.T, cmd *exec.Cmd, file string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	cmd.Args = append([]string{py, "-c", peakRSSScript, file, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = py
}

// peakRSSScript runs argv[2:] as a child and writes its peak resident set (KiB) to argv[1].
const peakRSSScript = `import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) & 0xff)
`

// readPeakRSS reads what peakRSSScript wrote, in KiB.
func readPeakRSS(t *testing.T, file string) int64 {
	t.Helper()
	kib, err := strconv.ParseInt(strings.TrimSpace(readString(t, file)), 10, 64)
	require.NoError(t, err)
	return kib
}
