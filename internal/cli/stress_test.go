package cli

// The reliability suite (`make stress`; shortened in CI): bounded loops against a private tmux
// server, each ending by itself, each reading every file back and comparing it with what was sent.
// WCOMM_STRESS_SCALE scales the loops: 1 is the full run (16 senders x 100 messages, ...); the
// default 0.1 keeps CI under two minutes. WCOMM_STRESS_SUMMARY names a file that receives the
// totals (messages sent, lost, duplicated; faults injected, survived), one line each.
//
// The programs in the panes are this test binary itself (sxHelper): a scripted worker,
// a line logger, a raw byte logger, a process spawner. They start in milliseconds and need nothing
// but the binary, so the loops measure wcomm and not an interpreter's start-up.
//
// Helpers here are prefixed sx (bx in the benchmark) so they cannot clash with harness_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// ---------------------------------------------------------------------------------------------
// Scale and totals

// sxBlock keeps a pane program alive until it is signalled (the test kills its pane). Waiting on
// a signal channel, not a bare select, keeps the runtime from calling it a deadlock.
func sxBlock() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	<-sig
}

// sxScale reads WCOMM_STRESS_SCALE (default 0.1, the CI size).
func sxScale(t testing.TB) float64 { return envScale(t, "WCOMM_STRESS_SCALE", 0.1, 100) }

// envScale reads a positive scale factor from the environment variable name, at most max.
func envScale(t testing.TB, name string, def, max float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	require.NoError(t, err, "%s=%q: want a number such as 0.1 or 1", name, v)
	require.True(t, f > 0 && f <= max, "%s=%q: want a number in (0, %g]", name, v, max)
	return f
}

// sxN scales a full-run count, never below lo.
func sxN(full int, scale float64, lo int) int {
	return max(lo, int(math.Round(float64(full)*scale)))
}

// sxTotals adds up what every stress test did, for the summary at the end of the run.
var sxTotals struct {
	sync.Mutex
	sent, lost, duplicated, faults, survived int
}

func sxCount(sent, lost, duplicated, faults, survived int) {
	sxTotals.Lock()
	defer sxTotals.Unlock()
	sxTotals.sent += sent
	sxTotals.lost += lost
	sxTotals.duplicated += duplicated
	sxTotals.faults += faults
	sxTotals.survived += survived
}

// sxFault counts one injected fault, and it as survived when the test has not failed by the end
// of check.
func sxFault(t *testing.T, check func()) {
	t.Helper()
	check()
	survived := 0
	if !t.Failed() {
		survived = 1
	}
	sxCount(0, 0, 0, 1, survived)
}

// ---------------------------------------------------------------------------------------------
// Helper processes: this test binary, started in a pane with SX_HELPER=1

// sxHelper becomes one of the helper programs when this test binary was started as one, in a pane
// with SX_HELPER=1, and exits; else it returns at once. TestMain calls it before testscript's Main
// and the scratch HOME: both make a temp folder that only a return from the tests removes, and a
// helper ends by its own exit or killed with its pane, which left two folders behind each time.
func sxHelper() {
	if os.Getenv("SX_HELPER") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(sxHelperMain(args))
}

// sxWorkerCfg configures the scripted worker helper.
type sxWorkerCfg struct {
	// Mode is "hold" (log each request, never answer), "wcomm" (answer with wcomm notify), "mcp"
	// (answer with the notify tool of a wcomm MCP server kept open) or "ref" (answer with the
	// reference respond.sh).
	Mode   string `json:"mode"`
	Log    string `json:"log"`
	Bin    string `json:"bin"`
	Sock   string `json:"sock"`
	Root   string `json:"root"`
	Delay  string `json:"delay"` // --enter-delay for notify; REF_ENTER_DELAY (seconds) for respond.sh
	RefDir string `json:"ref_dir"`

	// mcp is the worker's own `wcomm mcp`, in mode "mcp": it answers with the notify tool, as an
	// agent holding wcomm's MCP server does, with no process started per answer; through a
	// minimal client, as the outside harness's worker does (mcpMin).
	mcp *mcpMin
}

// sxReceipt is one request as the worker received it, with what answering it did.
type sxReceipt struct {
	ID       string `json:"id"`
	Header   string `json:"header"`
	Body     string `json:"body"`
	Response string `json:"response"`
	Form     string `json:"form"`   // paste or pointer
	Merged   bool   `json:"merged"` // the header did not start its line: two pastes ran together
	Code     int    `json:"code"`
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
}

func sxHelperMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "sx helper: want MODE LOG [ARGS]")
		return 2
	}
	mode, log := args[0], args[1]
	ready := func() { _ = os.WriteFile(log+".ready", nil, 0o600) }
	switch mode {
	case "lines":
		return sxHelperLines(log, ready)
	case "raw":
		return sxHelperRaw(log, ready)
	case "worker":
		return sxHelperWorker(log, ready)
	case "spawn":
		n, _ := strconv.Atoi(args[2])
		for i := 0; i < n; i++ {
			c := exec.Command("sleep", "86400")
			if err := c.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "spawn:", err)
				return 1
			}
		}
		ready()
		sxBlock()
	case "agent":
		// The agent's name comes from the environment, so it shows in the child's command line
		// only, where the seed's find_agent_pane looks (a direct child of the pane's process).
		sleep, err := exec.LookPath("sleep")
		if err != nil {
			return 1
		}
		c := &exec.Cmd{Path: sleep, Args: []string{os.Getenv("SX_AGENT"), "86400"}}
		if err := c.Start(); err != nil {
			return 1
		}
		ready()
		sxBlock()
	default:
		if h, ok := sxMoreHelpers[mode]; ok {
			return h(args[2:], ready)
		}
	}
	return 2
}

// sxMoreHelpers are helper modes of files built only with a tag (the bench's floor worker).
var sxMoreHelpers = map[string]func(args []string, ready func()) int{}

func sxAppendJSON(f *os.File, v any) {
	b, _ := json.Marshal(v)
	_, _ = f.Write(append(b, '\n'))
}

// sxHelperLines logs each line typed or pasted into the pane (cooked mode) as {"line": TEXT}.
func sxHelperLines(log string, ready func()) int {
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 1
	}
	ready()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		sxAppendJSON(f, map[string]string{"line": sc.Text()})
	}
	return 0
}

// sxHelperRaw puts the tty in raw mode and appends every byte it receives to the log: the ground
// truth of what reached the application.
func sxHelperRaw(log string, ready func()) int {
	stty := exec.Command("stty", "raw", "-echo")
	stty.Stdin = os.Stdin
	if err := stty.Run(); err != nil {
		return 1
	}
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 1
	}
	ready()
	buf := make([]byte, 64<<10)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			_, _ = f.Write(buf[:n])
		}
		if err != nil {
			return 0
		}
	}
}

const sxPointerMark = " too long to paste: read it whole from "

// sxHelperWorker reads requests pasted into its pane (cooked mode, line by line) and, per its
// config, logs them and answers each with "ack ID" and the body it received. Like a program that
// reads lines, it acts when the request's last line (the fallback "tmux load-buffer ..." notify
// command, in both wcomm's and the seed's requests) is submitted: by the Enter that wcomm sends
// after the paste, or by the newline that ends the seed's paste itself.
func sxHelperWorker(cfgPath string, ready func()) int {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return 1
	}
	var cfg sxWorkerCfg
	if err := json.Unmarshal(data, &cfg); err != nil {
		return 1
	}
	logf, err := os.OpenFile(cfg.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 1
	}
	if cfg.Mode == "mcp" {
		// The server runs as this pane (TMUX and TMUX_PANE are the pane's own).
		cmd := exec.Command(cfg.Bin, "mcp", "-S", cfg.Sock, "--root", cfg.Root)
		cmd.Env = append(os.Environ(), "WCOMM_ENTER_DELAY="+cfg.Delay)
		c, err := startMCPMin(cmd, "wcomm-sx-worker")
		if err != nil {
			fmt.Fprintln(os.Stderr, "sx worker: start wcomm mcp:", err)
			return 1
		}
		defer c.close()
		cfg.mcp = c
	}
	ready()
	var cur *sxReceipt
	inBody := false
	var body []string
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if i := strings.Index(line, "[WORKER capability="); i >= 0 {
			header := line[i:]
			if j := strings.Index(header, sxPointerMark); j >= 0 {
				path, _, _ := strings.Cut(header[j+len(sxPointerMark):], " and follow")
				r := sxFromFile(path)
				r.Merged, r.Form = i > 0, "pointer"
				sxAnswer(cfg, logf, r)
				cur = nil
				continue
			}
			cur = &sxReceipt{Header: header, ID: sxField(header, "id"), Merged: i > 0, Form: "paste"}
			inBody, body = true, nil
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case line == "[RESPONSE INSTRUCTIONS]":
			inBody = false
		case inBody:
			body = append(body, line)
		case strings.HasPrefix(line, "Response file: ") && cur.Response == "":
			// The blank line before the instructions block is not part of the body.
			if n := len(body); n > 0 && body[n-1] == "" {
				body = body[:n-1]
			}
			cur.Body = strings.Join(body, "\n")
			cur.Response = strings.TrimPrefix(line, "Response file: ")
		case strings.HasPrefix(line, "tmux load-buffer ") && cur.Response != "":
			sxAnswer(cfg, logf, cur)
			cur = nil
		}
	}
	return 0
}

// sxFromFile reads a request that was delivered as a pointer line.
func sxFromFile(path string) *sxReceipt {
	data, err := os.ReadFile(path)
	if err != nil {
		return &sxReceipt{Stderr: err.Error(), Code: -1}
	}
	text := string(data)
	header, rest, _ := strings.Cut(text, "\n")
	r := &sxReceipt{Header: header, ID: sxField(header, "id")}
	if i := strings.LastIndex(rest, "\n[RESPONSE INSTRUCTIONS]\n"); i >= 0 {
		r.Body = strings.TrimSuffix(rest[:i], "\n")
		block := rest[i:]
		if j := strings.Index(block, "\nResponse file: "); j >= 0 {
			r.Response, _, _ = strings.Cut(block[j+len("\nResponse file: "):], "\n")
		}
	}
	return r
}

// sxField returns the value of key=value in a header line.
func sxField(header, key string) string {
	for _, f := range strings.Fields(strings.Trim(header, "[]")) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return strings.TrimSuffix(v, "]")
		}
	}
	return ""
}

func sxAnswer(cfg sxWorkerCfg, logf *os.File, r *sxReceipt) {
	answer := "ack " + r.ID + "\n" + r.Body
	var cmd *exec.Cmd
	switch cfg.Mode {
	case "wcomm":
		cmd = exec.Command(cfg.Bin, "notify", "-S", cfg.Sock, "--root", cfg.Root, "--response", r.Response,
			"--enter-delay", cfg.Delay, "--json", "--file", "-")
	case "mcp":
		var te *mcpToolError
		switch err := cfg.mcp.tool("notify", map[string]any{"response": r.Response, "message": answer}, nil); {
		case errors.As(err, &te):
			r.Code, r.Stderr = 1, sxTail(string(te.content))
		case err != nil:
			r.Code, r.Stderr = -1, err.Error()
		}
		sxAppendJSON(logf, r)
		return
	case "ref":
		cmd = exec.Command("bash", filepath.Join(cfg.RefDir, "respond.sh"), sxRequestFor(r.Response), "-")
		cmd.Env = append(os.Environ(), "REF_TMUX_SOCKET="+cfg.Sock, "REF_ENTER_DELAY="+cfg.Delay)
	default:
		sxAppendJSON(logf, r)
		return
	}
	cmd.Stdin = strings.NewReader(answer)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r.Code = cmd.ProcessState.ExitCode()
	if err != nil && r.Code == 0 {
		r.Code = -1
	}
	r.Stdout, r.Stderr = sxTail(stdout.String()), sxTail(stderr.String()+sxErrText(err))
	sxAppendJSON(logf, r)
}

func sxErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func sxTail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// sxRequestFor maps DIR/NNN-response.md to DIR/(NNN-1)-request.md, as a seed worker would.
func sxRequestFor(response string) string {
	num, _ := strings.CutSuffix(filepath.Base(response), "-response.md")
	n, _ := strconv.Atoi(num)
	return filepath.Join(filepath.Dir(response), fmt.Sprintf("%03d-request.md", n-1))
}

// ---------------------------------------------------------------------------------------------
// A private tmux server with helper panes

// sxServer is a world (harness_test.go) whose dead panes stay, with the helper programs of the
// reliability suite.
type sxServer struct {
	*world
	seq int
}

const sxSession = session

// sxNew starts a private server whose first window idles, so the server lives until cleanup.
func sxNew(t *testing.T) *sxServer {
	t.Helper()
	s := &sxServer{world: newWorld(t)}
	s.keepDeadPanes()
	return s
}

// startServer starts the server again after killServer, as sxNew made it.
func (s *sxServer) startServer() {
	s.t.Helper()
	s.world.startServer()
	s.keepDeadPanes()
}

// keepDeadPanes makes dead panes stay, so a test can see them dead (and wcomm must refuse to
// paste into them).
func (s *sxServer) keepDeadPanes() { s.tmux("set-option", "-g", "remain-on-exit", "on") }

// helperArgv is the command line of a helper process.
func sxHelperArgv(t testing.TB, mode string, args ...string) []string {
	self, err := os.Executable()
	require.NoError(t, err)
	return append([]string{self, "-test.run=^$", "--", mode}, args...) // -test.run: no test, should SX_HELPER be missing
}

// helper opens a pane running the helper in mode and waits until it is ready.
func (s *sxServer) helper(sess string, env []string, mode, log string, args ...string) string {
	s.t.Helper()
	env = append([]string{"SX_HELPER=1"}, env...)
	p := s.window(sess, env, sxHelperArgv(s.t, mode, append([]string{log}, args...)...)...)
	s.waitReady(log)
	return p
}

func (s *sxServer) waitReady(log string) {
	s.t.Helper()
	waitFor(s.t, 20*time.Second, func() bool {
		_, err := os.Stat(log + ".ready")
		return err == nil
	}, "helper with log %s to start", log)
	_ = os.Remove(log + ".ready")
}

func (s *sxServer) file(prefix string) string {
	s.seq++
	return filepath.Join(s.work, fmt.Sprintf("%s-%d", prefix, s.seq))
}

// linesPane opens a line logger (an orchestrator's pane stand-in) and returns it and its log.
func (s *sxServer) linesPane() (pane, log string) {
	s.t.Helper()
	log = s.file("lines") + ".jsonl"
	return s.helper(sxSession, nil, "lines", log), log
}

// rawPane opens a raw byte logger and returns it and its log.
func (s *sxServer) rawPane() (pane, log string) {
	s.t.Helper()
	log = s.file("raw") + ".log"
	return s.helper(sxSession, nil, "raw", log), log
}

// workerPane opens the scripted worker in mode ("hold", "wcomm", "ref") and returns it and its log.
func (s *sxServer) workerPane(mode, delay string) (pane, log string) {
	s.t.Helper()
	return s.workerIn(sxSession, mode, delay)
}

func (s *sxServer) workerIn(sess, mode, delay string) (pane, log string) {
	s.t.Helper()
	return s.workerInEnv(sess, mode, delay, nil)
}

// workerInEnv is workerIn with more environment for the worker's window.
func (s *sxServer) workerInEnv(sess, mode, delay string, env []string) (pane, log string) {
	s.t.Helper()
	cfgPath, log := s.workerCfg(mode, delay)
	return s.helper(sess, env, "worker", cfgPath), log
}

func (s *sxServer) workerCfg(mode, delay string) (cfgPath, log string) {
	s.t.Helper()
	base := s.file("worker")
	log = base + ".jsonl"
	ref, err := filepath.Abs(referenceDir)
	require.NoError(s.t, err)
	cfg, err := json.Marshal(sxWorkerCfg{Mode: mode, Log: log, Bin: s.bin, Sock: s.sock, Root: s.root, Delay: delay, RefDir: ref})
	require.NoError(s.t, err)
	require.NoError(s.t, os.WriteFile(base+".json", cfg, 0o600))
	// The helper's "log" argument is the config; its readiness file is named after it.
	return base + ".json", log
}

// respawnWorker replaces the program of pane with a fresh worker and returns the new log.
func (s *sxServer) respawnWorker(pane, mode, delay string) string {
	s.t.Helper()
	cfgPath, log := s.workerCfg(mode, delay)
	args := []string{"respawn-pane", "-k", "-t", pane, "-c", s.work, "-e", "SX_HELPER=1", "--"}
	s.tmux(append(args, sxHelperArgv(s.t, "worker", cfgPath)...)...)
	s.waitReady(cfgPath)
	return log
}

func (s *sxServer) alive() bool { return s.serverAlive() }

// ---------------------------------------------------------------------------------------------
// Running wcomm

// sxOut is one finished process.
type sxOut struct {
	Args   []string
	Stdout string
	Stderr string
	Code   int // -1: killed by a signal or not started
	Took   time.Duration
	CPU    time.Duration // user and system time of the process
	RSSKiB int64         // peak resident set of the process and its waited-for children
}

func (o sxOut) String() string {
	return fmt.Sprintf("%s: exit %d\nstdout: %s\nstderr: %s", strings.Join(o.Args, " "), o.Code, sxTail(o.Stdout), sxTail(o.Stderr))
}

// sxExec runs argv to completion (at most timeout) with env and stdin, and never fails the test:
// a process that cannot start reports Code -1 with the reason in Stderr.
func sxExec(timeout time.Duration, env []string, stdin []byte, argv ...string) sxOut {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	o := sxOut{Args: argv, Took: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String(), Code: -1}
	if cmd.ProcessState != nil {
		o.Code = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			o.RSSKiB = ru.Maxrss
		}
		o.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil && o.Code <= 0 {
		o.Code = -1
		o.Stderr += "\n(" + err.Error() + ")"
	}
	return o
}

// wcommArgv puts the server and root flags after the command name, where wcomm reads them.
func (s *sxServer) wcommArgv(cmd string, args ...string) []string {
	return append([]string{s.bin, cmd, "-S", s.sock, "--root", s.root}, args...)
}

// wcomm runs one wcomm command outside any pane.
func (s *sxServer) wcomm(stdin []byte, cmd string, args ...string) sxOut {
	return sxExec(2*time.Minute, cleanEnv(), stdin, s.wcommArgv(cmd, args...)...)
}

// wcommIn runs one wcomm command as if inside pane ($TMUX names this server, $TMUX_PANE the pane).
func (s *sxServer) wcommIn(pane string, stdin []byte, cmd string, args ...string) sxOut {
	env := append(cleanEnv(), fmt.Sprintf("TMUX=%s,%d,0", s.sock, s.pid), "TMUX_PANE="+pane)
	return sxExec(2*time.Minute, env, stdin, s.wcommArgv(cmd, args...)...)
}

// send sends body from orch to worker (Enter delay 0) and returns the exchange.
func (s *sxServer) send(orch, worker string, body []byte, extra ...string) (*exchange.Exchange, sxOut) {
	args := append([]string{"--to", worker, "--from", orch, "--enter-delay", "0", "--json", "--file", "-"}, extra...)
	out := s.wcomm(body, "send", args...)
	if out.Code != 0 {
		return nil, out
	}
	var x exchange.Exchange
	if err := json.Unmarshal([]byte(out.Stdout), &x); err != nil {
		out.Code, out.Stderr = -1, out.Stderr+"\n(send --json printed no exchange: "+err.Error()+")"
		return nil, out
	}
	return &x, out
}

func (s *sxServer) mustSend(orch, worker string, body []byte) *exchange.Exchange {
	s.t.Helper()
	x, out := s.send(orch, worker, body)
	require.Equal(s.t, 0, out.Code, "%s", out)
	return x
}

func (s *sxServer) notify(response string, body []byte, delay string) (*tmuxcomm.NotifyResult, sxOut) {
	out := s.wcomm(body, "notify", "--response", response, "--enter-delay", delay, "--json", "--file", "-")
	var res tmuxcomm.NotifyResult
	if out.Code == 0 {
		if err := json.Unmarshal([]byte(out.Stdout), &res); err != nil {
			out.Code, out.Stderr = -1, out.Stderr+"\n(notify --json printed no result: "+err.Error()+")"
		}
	}
	return &res, out
}

// sxBG is a background run (bg) whose wait says what it did in the stress tests' terms (sxOut).
type sxBG struct{ *bg }

func (s *sxServer) start(stdin []byte, cmd string, args ...string) sxBG {
	s.t.Helper()
	argv := s.wcommArgv(cmd, args...)
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = cleanEnv()
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	return sxBG{startBg(s.t, c, argv[1:], nil)}
}

func (b sxBG) wait(t *testing.T, timeout time.Duration) sxOut {
	t.Helper()
	r := b.bg.wait(t, timeout)
	return sxOut{Args: b.cmd.Args, Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// ---------------------------------------------------------------------------------------------
// Reading logs and files back

func sxReceipts(t *testing.T, log string) []sxReceipt {
	t.Helper()
	data, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []sxReceipt
	for _, line := range sxComplete(data) {
		if line == "" {
			continue
		}
		var r sxReceipt
		require.NoError(t, json.Unmarshal([]byte(line), &r), "worker log line %q", line)
		out = append(out, r)
	}
	return out
}

func sxLines(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, line := range sxComplete(data) {
		if line == "" {
			continue
		}
		var m map[string]string
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line log %q", line)
		out = append(out, m["line"])
	}
	return out
}

// sxComplete is the lines of a worker's log that were written whole: read while the worker
// appends, the log may end in part of a line, which a later read has whole.
func sxComplete(data []byte) []string {
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	return strings.Split(string(data[:end]), "\n")
}

// waitReceipt waits until the worker logged the request whose response file is response.
func sxWaitReceipt(t *testing.T, log, response string) sxReceipt {
	t.Helper()
	var got sxReceipt
	waitFor(t, 30*time.Second, func() bool {
		for _, r := range sxReceipts(t, log) {
			if r.Response == response {
				got = r
				return true
			}
		}
		return false
	}, "the worker to receive the request answered at %s", response)
	return got
}

// sxMark types a marker line into a line-logger pane and waits for it in the log: the pty is a
// FIFO, so anything pasted into the pane before is logged by then.
func (s *sxServer) sxMark(pane, log string) []string {
	s.t.Helper()
	mark := fmt.Sprintf("SXMARK-%d", time.Now().UnixNano())
	s.tmux("send-keys", "-t", pane, "-l", mark)
	s.tmux("send-keys", "-t", pane, "Enter")
	var lines []string
	waitFor(s.t, 20*time.Second, func() bool {
		lines = sxLines(s.t, log)
		return len(lines) > 0 && strings.Contains(lines[len(lines)-1], mark)
	}, "marker %s in %s", mark, log)
	return lines[:len(lines)-1]
}

// sxNotifications returns the response paths of the RESPONSE lines in a line log, and the lines
// where a RESPONSE line did not start the line (merged with other input).
func sxNotifications(lines []string) (paths []string, merged []string) {
	for _, l := range lines {
		i := strings.Index(l, "[RESPONSE ")
		if i < 0 {
			continue
		}
		if i > 0 {
			merged = append(merged, l)
		}
		if n, err := messages.FindNotification(l[i:]); err == nil {
			paths = append(paths, n.Path)
		} else {
			merged = append(merged, l)
		}
	}
	return paths, merged
}

func sxReadRequest(t *testing.T, path string) messages.Request {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	req, err := messages.ParseRequest(data)
	require.NoError(t, err, "parse %s", path)
	return req
}

// sxReadResponse returns the parsed response file, or ok false when it does not exist.
func sxReadResponse(t *testing.T, path string) (messages.Response, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return messages.Response{}, false
	}
	require.NoError(t, err)
	resp, err := messages.ParseResponse(data)
	require.NoError(t, err, "parse %s:\n%s", path, sxTail(string(data)))
	return resp, true
}

// sxRequestFiles lists every NNN-request.md under root.
func sxRequestFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*", "*-request.md"))
	require.NoError(t, err)
	sort.Strings(files)
	return files
}

func sxNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sxTrimNL(s string) string { return strings.TrimRight(s, "\n") }

// ---------------------------------------------------------------------------------------------
// The stress tests

// TestStressManySenders: 16 senders (4 orchestrator panes, 4 senders each, so both the sequence
// claim within one session folder and the worker pane's lock are contended) send 100 messages
// each to one worker pane, which answers every one with wcomm notify. Every request file, every
// request as the worker received it, every response file and every RESPONSE line is read back.
func TestStressManySenders(t *testing.T) {
	scale := sxScale(t)
	const senders = 16
	per := sxN(100, scale, 2)
	s := sxNew(t)
	orchs, ologs := make([]string, 4), make([]string, 4)
	for i := range orchs {
		orchs[i], ologs[i] = s.linesPane()
	}
	worker, wlog := s.workerPane("wcomm", "0s")

	type sent struct {
		orch int
		body string
		x    *exchange.Exchange
	}
	var (
		mu    sync.Mutex
		all   []sent
		fails []string
		wg    sync.WaitGroup
	)
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for m := 0; m < per; m++ {
				body := fmt.Sprintf("stress sender=%02d msg=%03d nonce=%s\nsecond line of %02d/%03d: keep me whole", i, m, sxNonce(), i, m)
				x, out := s.send(orchs[i%4], worker, []byte(body))
				mu.Lock()
				if x == nil {
					fails = append(fails, out.String())
				} else {
					all = append(all, sent{orch: i % 4, body: body, x: x})
				}
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	require.Empty(t, fails, "every send must succeed")
	total := senders * per
	require.Len(t, all, total)

	// The worker answers in its own time: wait until it has handled every request.
	waitFor(t, 2*time.Minute+time.Duration(total)*100*time.Millisecond, func() bool {
		return len(sxReceipts(t, wlog)) >= total
	}, "the worker to answer %d requests", total)

	receipts := map[string][]sxReceipt{}
	for _, r := range sxReceipts(t, wlog) {
		receipts[r.Response] = append(receipts[r.Response], r)
		assert.False(t, r.Merged, "request %s reached the worker merged with other input: %q", r.ID, r.Header)
		assert.Equal(t, 0, r.Code, "notify for %s: %s", r.ID, r.Stderr)
	}
	notified := map[string]int{}
	for i := range orchs {
		paths, merged := sxNotifications(s.sxMark(orchs[i], ologs[i]))
		assert.Empty(t, merged, "RESPONSE lines merged in pane %s", orchs[i])
		for _, p := range paths {
			notified[p]++
		}
	}

	lost, dups, ids := 0, 0, map[string]int{}
	byPath := map[string]int{}
	for _, m := range all {
		byPath[m.x.RequestPath]++
		ids[m.x.ID]++
		ok := true
		req := sxReadRequest(t, m.x.RequestPath)
		ok = assert.Equal(t, m.body, req.Body, "request file %s", m.x.RequestPath) && ok
		ok = assert.Equal(t, m.x.ID, req.Header.ID) && ok
		ok = assert.Equal(t, messages.PaneID(orchs[m.orch]), req.Header.Orchestrator) && ok
		rs := receipts[m.x.ResponsePath]
		if assert.Len(t, rs, 1, "the worker must receive %s exactly once", m.x.RequestPath) {
			ok = assert.Equal(t, m.body, rs[0].Body, "what the worker received for %s", m.x.ID) && ok
		} else {
			ok = false
		}
		if len(rs) > 1 {
			dups += len(rs) - 1
		}
		resp, found := sxReadResponse(t, m.x.ResponsePath)
		if assert.True(t, found, "response %s", m.x.ResponsePath) {
			ok = assert.Equal(t, m.x.ID, resp.Header.ID) && ok
			ok = assert.Equal(t, "ack "+m.x.ID+"\n"+m.body, sxTrimNL(resp.Body), "response %s", m.x.ResponsePath) && ok
		} else {
			ok = false
		}
		switch n := notified[m.x.ResponsePath]; {
		case n == 0:
			ok = false
			t.Errorf("no RESPONSE line for %s reached orchestrator %s", m.x.ResponsePath, orchs[m.orch])
		case n > 1:
			dups += n - 1
			t.Errorf("%d RESPONSE lines for %s", n, m.x.ResponsePath)
		}
		if !ok {
			lost++
		}
	}
	for p, n := range byPath {
		if n > 1 {
			dups += n - 1
			t.Errorf("%d sends wrote the same request file %s", n, p)
		}
	}
	assert.Len(t, sxRequestFiles(t, s.root), total, "request files under the root")
	collisions := 0
	for _, n := range ids {
		collisions += n - 1
	}
	// Ids carry 16 random bits per second (the seed's format); exchanges are told apart by their
	// files, so a collision is reported, not failed.
	t.Logf("many senders: %d senders x %d messages: sent %d, lost %d, duplicated %d, id collisions %d",
		senders, per, total, lost, dups, collisions)
	sxCount(total, lost, dups, 0, 0)
}

// TestStressFanInNotify: 8 workers notify one orchestrator pane at the same moment, round after
// round; every RESPONSE line must arrive once, whole, on a line of its own.
func TestStressFanInNotify(t *testing.T) {
	scale := sxScale(t)
	const workers = 8
	rounds := sxN(25, scale, 2)
	s := sxNew(t)
	orch, olog := s.linesPane()
	wpanes, wlogs := make([]string, workers), make([]string, workers)
	for i := range wpanes {
		wpanes[i], wlogs[i] = s.workerPane("hold", "0s")
	}
	type pair struct {
		x      *exchange.Exchange
		answer string
	}
	var all []pair
	queued := 0
	for r := 0; r < rounds; r++ {
		round := make([]pair, workers)
		for i := range wpanes {
			x := s.mustSend(orch, wpanes[i], []byte(fmt.Sprintf("fan-in round %d worker %d %s", r, i, sxNonce())))
			sxWaitReceipt(t, wlogs[i], x.ResponsePath)
			round[i] = pair{x: x, answer: fmt.Sprintf("answer of worker %d in round %d: %s", i, r, sxNonce())}
		}
		// All notifies start together; each holds the orchestrator pane's lock for its paste and
		// a 20 ms Enter delay, so they queue on it.
		var wg sync.WaitGroup
		outs := make([]sxOut, workers)
		results := make([]*tmuxcomm.NotifyResult, workers)
		startGun := make(chan struct{})
		for i := range round {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-startGun
				results[i], outs[i] = s.notify(round[i].x.ResponsePath, []byte(round[i].answer), "20ms")
			}(i)
		}
		close(startGun)
		wg.Wait()
		for i := range outs {
			require.Equal(t, 0, outs[i].Code, "%s", outs[i])
			// A notify that waited its bound for the pane's lock queues its line in the
			// orchestrator's outbox (a loaded machine), and the deliverer types it once the
			// pane is free: either way the line arrives once, which is what is counted below.
			assert.Contains(t, []tmuxcomm.Signal{tmuxcomm.SignalPasted, tmuxcomm.SignalQueued}, results[i].Signal)
			if results[i].Signal == tmuxcomm.SignalQueued {
				queued++
			}
		}
		all = append(all, round...)
	}
	var paths []string
	var merged []string
	waitFor(t, 60*time.Second, func() bool {
		paths, merged = sxNotifications(s.sxMark(orch, olog))
		return len(paths) >= len(all)
	}, "every RESPONSE line, %d queued among them, typed into the orchestrator's pane", queued)
	assert.Empty(t, merged, "RESPONSE lines merged in the orchestrator's pane")
	count := map[string]int{}
	for _, p := range paths {
		count[p]++
	}
	lost, dups := 0, 0
	for _, p := range all {
		n := count[p.x.ResponsePath]
		if n == 0 {
			lost++
		}
		if n > 1 {
			dups += n - 1
		}
		resp, found := sxReadResponse(t, p.x.ResponsePath)
		if assert.True(t, found) {
			if !assert.Equal(t, p.answer, sxTrimNL(resp.Body)) && n > 0 {
				lost++
			}
		}
	}
	assert.Zero(t, lost, "RESPONSE lines or responses lost")
	assert.Zero(t, dups, "RESPONSE lines duplicated")
	assert.Len(t, paths, len(all), "one RESPONSE line per answer, nothing else")
	t.Logf("fan-in: %d workers x %d rounds: notified %d (%d queued), lost %d, duplicated %d", workers, rounds, len(all), queued, lost, dups)
	sxCount(len(all), lost, dups, 0, 0)
}

// TestStressWorkerKilled: the worker dies after receiving a request; the answer written by a
// notify that is killed at a random moment is either absent or whole.
func TestStressWorkerKilled(t *testing.T) {
	scale := sxScale(t)
	t.Run("worker process killed before answering", func(t *testing.T) {
		s := sxNew(t)
		orch, _ := s.linesPane()
		worker, wlog := s.workerPane("hold", "0s")
		body := "work that will not be finished " + sxNonce()
		x := s.mustSend(orch, worker, []byte(body))
		sxWaitReceipt(t, wlog, x.ResponsePath)
		sxFault(t, func() {
			require.NoError(t, syscall.Kill(s.panePID(worker), syscall.SIGKILL))
			waitFor(t, 10*time.Second, func() bool { d, _ := s.paneDead(worker); return d }, "pane %s to die", worker)
			before := sxRequestFiles(t, s.root)

			out := s.wcomm(nil, "await", x.ID, "--timeout", "300ms")
			assert.Equal(t, exitTimeout, out.Code, "%s", out)
			assert.Contains(t, out.Stderr, x.ResponsePath, "the timeout names where the answer will be")

			out = s.wcomm(nil, "history", "--json")
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Contains(t, out.Stdout, `"status": "pending"`)

			// A dead pane is refused before anything is written (and nothing is pasted into it:
			// that would crash a tmux 3.3a server).
			_, out = s.send(orch, worker, []byte("to a dead pane"))
			assert.NotEqual(t, 0, out.Code, "%s", out)
			assert.Contains(t, out.Stderr, "dead")
			assert.Equal(t, before, sxRequestFiles(t, s.root), "no request file for a refused send")
			assert.True(t, s.alive(), "the tmux server survives")

			// The worker comes back (same pane id) and answers the request it had received.
			wlog = s.respawnWorker(worker, "wcomm", "0s")
			res, out := s.notify(x.ResponsePath, []byte("answered after a restart"), "0s")
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Equal(t, tmuxcomm.SignalPasted, res.Signal)
			out = s.wcomm(nil, "await", x.ID, "--timeout", "10s")
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Equal(t, "answered after a restart", sxTrimNL(out.Stdout))

			// And the new worker answers new work.
			x2 := s.mustSend(orch, worker, []byte("new work "+sxNonce()))
			out = s.wcomm(nil, "await", x2.ID, "--timeout", "30s")
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Contains(t, out.Stdout, "ack "+x2.ID)
		})
		sxCount(2, 0, 0, 0, 0)
	})

	t.Run("notify killed while writing the response", func(t *testing.T) {
		s := sxNew(t)
		orch, _ := s.linesPane()
		worker, wlog := s.workerPane("hold", "0s")
		rounds := sxN(20, scale, 3)
		size := 8 << 20
		if scale >= 1 {
			size = 32 << 20
		}
		big := bytes.Repeat([]byte("0123456789abcdef the response body goes on and on\n"), size/51)
		// One notify that runs to the end tells how long the kill window is on this machine.
		x0 := s.mustSend(orch, worker, []byte("calibration "+sxNonce()))
		sxWaitReceipt(t, wlog, x0.ResponsePath)
		_, out := s.notify(x0.ResponsePath, big, "0s")
		require.Equal(t, 0, out.Code, "%s", out)
		window := max(out.Took*6/5, 10*time.Millisecond)
		whole, absent := 0, 0
		for r := 0; r < rounds; r++ {
			x := s.mustSend(orch, worker, []byte(fmt.Sprintf("round %d %s", r, sxNonce())))
			sxWaitReceipt(t, wlog, x.ResponsePath)
			sxFault(t, func() {
				n := s.start(big, "notify", "--response", x.ResponsePath, "--enter-delay", "0", "--file", "-")
				// Kill anywhere from start-up to just after the end of a whole run.
				time.Sleep(time.Duration(mrand.Int64N(int64(window))))
				_ = n.cmd.Process.Kill()
				n.wait(t, 30*time.Second)
				resp, found := sxReadResponse(t, x.ResponsePath)
				if found {
					whole++
					assert.Equal(t, sxTrimNL(string(big)), sxTrimNL(resp.Body), "a response file that exists is whole")
					_, out := s.notify(x.ResponsePath, []byte("second answer"), "0s")
					assert.Equal(t, exitFailure, out.Code, "the first answer stands: %s", out)
				} else {
					absent++
					_, out := s.notify(x.ResponsePath, []byte("second answer"), "0s")
					require.Equal(t, 0, out.Code, "%s", out)
				}
				out := s.wcomm(nil, "history", "--json")
				require.Equal(t, 0, out.Code, "%s", out)
				assert.NotContains(t, out.Stdout, `"status": "damaged"`)
				out = s.wcomm(nil, "await", x.ID, "--timeout", "10s")
				require.Equal(t, 0, out.Code, "%s", out)
				if found {
					assert.Equal(t, sxTrimNL(string(big)), sxTrimNL(out.Stdout))
				} else {
					assert.Equal(t, "second answer", sxTrimNL(out.Stdout))
				}
			})
		}
		t.Logf("notify of %d MiB killed %d times within %s: %d responses whole, %d absent, none partial", size>>20, rounds, window, whole, absent)
		sxCount(rounds, 0, 0, 0, 0)
	})
}

// TestStressOrchestratorGone: the orchestrator's pane is gone (or dead) when the worker notifies:
// notify keeps the response and says so, nothing is pasted anywhere, await still returns it.
func TestStressOrchestratorGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill func(s *sxServer, pane string)
		want string
	}{
		{"pane killed", func(s *sxServer, pane string) { s.tmux("kill-pane", "-t", pane) }, "no longer exists"},
		{"pane dead", func(s *sxServer, pane string) {
			require.NoError(s.t, syscall.Kill(s.panePID(pane), syscall.SIGKILL))
			waitFor(s.t, 10*time.Second, func() bool { d, _ := s.paneDead(pane); return d }, "pane %s to die", pane)
		}, "is dead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sxNew(t)
			orch, _ := s.linesPane()
			worker, wlog := s.workerPane("hold", "0s")
			x := s.mustSend(orch, worker, []byte("question from a doomed orchestrator"))
			sxWaitReceipt(t, wlog, x.ResponsePath)
			sxFault(t, func() {
				tc.kill(s, orch)
				res, out := s.notify(x.ResponsePath, []byte("the answer nobody reads yet"), "0s")
				assert.Equal(t, exitFailure, out.Code, "%s", out)
				assert.Contains(t, out.Stderr, "orchestrator pane")
				assert.Contains(t, out.Stderr, tc.want)
				assert.Contains(t, out.Stderr, x.ResponsePath, "notify says where the answer is kept")
				_ = res
				assert.True(t, s.alive(), "the tmux server survives")
				resp, found := sxReadResponse(t, x.ResponsePath)
				require.True(t, found, "the response is kept")
				assert.Equal(t, "the answer nobody reads yet", sxTrimNL(resp.Body))
				out = s.wcomm(nil, "await", x.ID, "--timeout", "5s")
				require.Equal(t, 0, out.Code, "%s", out)
				assert.Equal(t, "the answer nobody reads yet", sxTrimNL(out.Stdout))
				out = s.wcomm(nil, "show", x.ID, "--json")
				require.Equal(t, 0, out.Code, "%s", out)
				assert.Contains(t, out.Stdout, exchange.StateNotifyLost)
			})
			sxCount(1, 0, 0, 0, 0)
		})
	}
}

// TestStressServerRestart: the tmux server dies and a new one starts on the same socket, where
// pane ids start again at %0, so the new panes carry the old ids. An old session folder must never
// be taken for the new panes: a send makes a new folder, and notify for an old exchange refuses to
// paste into the new pane of the same id.
func TestStressServerRestart(t *testing.T) {
	scale := sxScale(t)
	rounds := sxN(6, scale, 2)
	s := sxNew(t)
	for r := 0; r < rounds; r++ {
		if r > 0 {
			// Each round starts from a fresh server, so its panes get the ids %1 and %2 again.
			s.killServer(false)
			s.startServer()
		}
		orch, olog := s.linesPane()
		worker, wlog := s.workerPane("hold", "0s")
		x1 := s.mustSend(orch, worker, []byte(fmt.Sprintf("before the restart, round %d", r)))
		sxWaitReceipt(t, wlog, x1.ResponsePath)
		crash := r%2 == 1
		sxFault(t, func() {
			s.killServer(crash)
			s.startServer()
			orch2, olog2 := s.linesPane()
			worker2, wlog2 := s.workerPane("hold", "0s")
			require.Equal(t, orch, orch2, "pane ids restart: the new orchestrator pane has the old id")
			require.Equal(t, worker, worker2)
			_ = olog

			// Without a reference, neither side may pick up the old server's exchange.
			out := s.wcommIn(orch2, nil, "await", "--timeout", "200ms")
			assert.Equal(t, exitNotFound, out.Code, "await in the new pane %s must not wait for the old exchange: %s", orch2, out)
			out = s.wcommIn(worker2, []byte("wrong answer"), "notify", "--enter-delay", "0", "-")
			assert.Equal(t, exitNotFound, out.Code, "notify in the new pane %s must not answer the old exchange: %s", worker2, out)

			// Notify for the old exchange keeps the answer but pastes nothing into the new pane.
			_, out = s.notify(x1.ResponsePath, []byte("late answer"), "0s")
			assert.Equal(t, exitFailure, out.Code, "%s", out)
			assert.Contains(t, out.Stderr, "restarted")
			paths, _ := sxNotifications(s.sxMark(orch2, olog2))
			assert.Empty(t, paths, "no RESPONSE line may reach the new pane %s", orch2)

			// A send on the new server makes a new session folder.
			x2 := s.mustSend(orch2, worker2, []byte(fmt.Sprintf("after the restart, round %d", r)))
			assert.NotEqual(t, x1.Dir, x2.Dir, "a new server's send must not reuse the old session folder")
			rec := sxWaitReceipt(t, wlog2, x2.ResponsePath)
			assert.Equal(t, x2.ID, rec.ID)
			res, out := s.notify(x2.ResponsePath, []byte("fresh answer"), "0s")
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Equal(t, tmuxcomm.SignalPasted, res.Signal)
			paths, _ = sxNotifications(s.sxMark(orch2, olog2))
			assert.Equal(t, []string{x2.ResponsePath}, paths)

			for _, c := range []struct{ id, want string }{{x1.ID, "late answer"}, {x2.ID, "fresh answer"}} {
				out = s.wcomm(nil, "await", c.id, "--timeout", "5s")
				require.Equal(t, 0, out.Code, "%s", out)
				assert.Equal(t, c.want, sxTrimNL(out.Stdout))
			}
		})
	}
	sxCount(2*rounds, 0, 0, 0, 0)
}

// TestStressAwaitRestart: a waiting await is killed and started again; the new one returns the
// response, whether it was waiting when notify ran or the response came in between.
func TestStressAwaitRestart(t *testing.T) {
	scale := sxScale(t)
	rounds := sxN(20, scale, 3)
	s := sxNew(t)
	orch, _ := s.linesPane()
	worker, wlog := s.workerPane("hold", "0s")
	signals := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT}
	for r := 0; r < rounds; r++ {
		x := s.mustSend(orch, worker, []byte(fmt.Sprintf("await round %d %s", r, sxNonce())))
		sxWaitReceipt(t, wlog, x.ResponsePath)
		answer := fmt.Sprintf("answer %d %s", r, sxNonce())
		lock := awaitLockIn(x.Dir, x.Seq)
		sxFault(t, func() {
			a1 := s.start(nil, "await", x.ID, "--timeout", "60s")
			waitFor(t, 10*time.Second, func() bool { return flocked(lock) }, "await to hold %s", lock)
			require.NoError(t, a1.cmd.Process.Signal(signals[r%len(signals)]))
			o := a1.wait(t, 10*time.Second)
			assert.NotEqual(t, 0, o.Code, "a killed await does not report success")
			waitFor(t, 10*time.Second, func() bool { return !flocked(lock) }, "the killed await's lock to go")

			if r%2 == 0 {
				// The new await is waiting when notify runs: it is the signal, nothing is pasted.
				a2 := s.start(nil, "await", x.ID, "--timeout", "60s")
				waitFor(t, 10*time.Second, func() bool { return flocked(lock) }, "the new await to hold %s", lock)
				res, out := s.notify(x.ResponsePath, []byte(answer), "0s")
				require.Equal(t, 0, out.Code, "%s", out)
				assert.Equal(t, tmuxcomm.SignalAwait, res.Signal)
				o = a2.wait(t, 30*time.Second)
			} else {
				// The answer comes while no await runs: the line is pasted, and the new await
				// finds the response at once.
				res, out := s.notify(x.ResponsePath, []byte(answer), "0s")
				require.Equal(t, 0, out.Code, "%s", out)
				assert.Equal(t, tmuxcomm.SignalPasted, res.Signal)
				o = s.wcomm(nil, "await", x.ID, "--timeout", "10s")
			}
			require.Equal(t, 0, o.Code, "%s", o)
			assert.Equal(t, answer, sxTrimNL(o.Stdout))
		})
	}
	sxCount(rounds, 0, 0, 0, 0)
}

// TestStressCrashBeforeRename: a writer that died between writing its temp file and renaming it
// leaves a .tmp-* file; a seed writer that is still writing leaves a half file. Neither is ever
// shown as a response by await, parse, show or history.
func TestStressCrashBeforeRename(t *testing.T) {
	t.Run("temp files left by a crash", func(t *testing.T) {
		s := sxNew(t)
		orch, _ := s.linesPane()
		worker, wlog := s.workerPane("hold", "0s")
		x := s.mustSend(orch, worker, []byte("a request whose answer crashes halfway"))
		sxWaitReceipt(t, wlog, x.ResponsePath)
		const partial = "PARTIAL-ANSWER-MUST-NOT-SHOW"
		sxFault(t, func() {
			head := messages.ResponseHeader{ID: x.ID, StartedAt: x.StartedAt, Orchestrator: x.Orchestrator, Worker: x.Worker, RequestBytes: -1}
			tmpResp := filepath.Join(x.Dir, ".tmp-1234567")
			require.NoError(t, os.WriteFile(tmpResp, []byte(head.String()+"\n"+partial), 0o600))
			req := messages.RequestHeader{Capability: messages.ReadOnly, ID: x.ID, StartedAt: x.StartedAt, Orchestrator: x.Orchestrator, Worker: x.Worker, Bytes: -1}
			require.NoError(t, os.WriteFile(filepath.Join(x.Dir, ".tmp-7654321"), []byte(req.String()+"\n"+partial), 0o600))

			out := s.wcomm(nil, "await", x.ID, "--timeout", "300ms")
			assert.Equal(t, exitTimeout, out.Code, "%s", out)
			assert.NotContains(t, out.Stdout+out.Stderr, partial)

			line := messages.Notification{StartedAt: x.StartedAt, Orchestrator: x.Orchestrator, Worker: x.Worker, Path: x.ResponsePath}.String()
			out = s.wcomm(nil, "parse", "--json", line)
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Contains(t, out.Stdout, `"status": "pending"`)
			assert.NotContains(t, out.Stdout, partial)

			tmpLine := messages.Notification{StartedAt: x.StartedAt, Orchestrator: x.Orchestrator, Worker: x.Worker, Path: x.ResponsePath}.String()
			tmpLine = strings.Replace(tmpLine, x.ResponsePath, tmpResp, 1)
			out = s.wcomm(nil, "parse", tmpLine)
			assert.NotEqual(t, 0, out.Code, "a temp file is not a response: %s", out)
			assert.NotContains(t, out.Stdout, partial)

			for _, args := range [][]string{{"history", "--json"}, {"history"}, {"show", x.ID, "--json"}} {
				out = s.wcomm(nil, args[0], args[1:]...)
				require.Equal(t, 0, out.Code, "%s", out)
				assert.NotContains(t, out.Stdout, partial, "wcomm %s", strings.Join(args, " "))
				assert.NotContains(t, out.Stdout, ".tmp-", "wcomm %s lists no temp file", strings.Join(args, " "))
			}

			// The sequence is not disturbed by the leftovers, and the real answer goes through.
			x2 := s.mustSend(orch, worker, []byte("the next request"))
			assert.Equal(t, x.Seq+2, x2.Seq)
			_, out = s.notify(x.ResponsePath, []byte("the whole answer"), "0s")
			require.Equal(t, 0, out.Code, "%s", out)
			out = s.wcomm(nil, "await", x.ID, "--timeout", "5s")
			require.Equal(t, 0, out.Code, "%s", out)
			assert.Equal(t, "the whole answer", sxTrimNL(out.Stdout))
		})
		sxCount(2, 0, 0, 0, 0)
	})

	t.Run("seed writer still writing", func(t *testing.T) {
		s := sxNew(t)
		orch, _ := s.linesPane()
		worker, wlog := s.workerPane("hold", "0s")
		x := s.mustSend(orch, worker, []byte("a request answered by a plain cat > file"))
		sxWaitReceipt(t, wlog, x.ResponsePath)
		sxFault(t, func() {
			a := s.start(nil, "await", x.ID, "--timeout", "60s")
			lock := awaitLockIn(x.Dir, x.Seq)
			waitFor(t, 10*time.Second, func() bool { return flocked(lock) }, "await to hold %s", lock)
			// The seed's `cat > file`: the file exists, half written, its writer still running.
			head := messages.ResponseHeader{ID: x.ID, StartedAt: x.StartedAt, Orchestrator: x.Orchestrator, Worker: x.Worker, RequestBytes: -1}
			f, err := os.OpenFile(x.ResponsePath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			require.NoError(t, err)
			_, err = f.WriteString(head.String() + "\nfirst half, ")
			require.NoError(t, err)
			// A negative check needs a window: await must still be waiting a while later.
			deadline := time.Now().Add(500 * time.Millisecond)
			for time.Now().Before(deadline) {
				require.False(t, a.exited(), "await returned a response whose writer still holds it")
				time.Sleep(20 * time.Millisecond)
			}
			_, err = f.WriteString("second half\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
			o := a.wait(t, 30*time.Second)
			require.Equal(t, 0, o.Code, "%s", o)
			assert.Equal(t, "first half, second half", sxTrimNL(o.Stdout))
		})
		sxCount(1, 0, 0, 0, 0)
	})
}

// TestSendWaitIDCollision guards a bug the stress run found. Request ids carry 16 random bits per
// second (the seed's format; the full run saw one collision in 1,600 sends), and `send --wait`
// used to await the exchange it had just sent by its id: when another exchange had drawn the same
// id in a session folder that sorts later, the lookup by id found that one first, and send --wait
// printed the other exchange's answer as its own. It awaits by its response path now.
func TestSendWaitIDCollision(t *testing.T) {
	s := sxNew(t)
	orch, _ := s.linesPane()
	worker, _ := s.workerPane("hold", "0s")
	// A long Enter delay holds send --wait between writing its request and awaiting it.
	bg := s.start([]byte("the real question"), "send", "--to", worker, "--from", orch, "--enter-delay", "1s",
		"--wait", "--timeout", "1s", "--file", "-")
	var reqPath string
	waitFor(t, 10*time.Second, func() bool {
		files := sxRequestFiles(t, s.root)
		if len(files) == 1 {
			reqPath = files[0]
			return true
		}
		return false
	}, "send to write its request")
	h := sxReadRequest(t, reqPath).Header

	// Another pair's exchange, in a folder that sorts after the sender's, drew the same id.
	other := filepath.Join(s.root, h.StartedAt+"-o999-w998")
	require.NoError(t, os.Mkdir(other, 0o700))
	resp := filepath.Join(other, "002-response.md")
	oreq := messages.Request{Header: messages.RequestHeader{Capability: messages.ReadOnly, ID: h.ID, StartedAt: h.StartedAt,
		Orchestrator: "%999", Worker: "%998", Bytes: -1}, Body: "someone else's question",
		Instructions: messages.Instructions{ResponsePath: resp}}
	require.NoError(t, os.WriteFile(filepath.Join(other, "001-request.md"), []byte(messages.FormatRequest(oreq)), 0o600))
	oresp := messages.Response{Header: messages.ResponseHeader{ID: h.ID, StartedAt: h.StartedAt, Orchestrator: "%999",
		Worker: "%998", RequestBytes: -1}, Body: "SOMEONE ELSE'S ANSWER"}
	require.NoError(t, os.WriteFile(resp, []byte(messages.FormatResponse(oresp)), 0o600))

	o := bg.wait(t, 30*time.Second)
	assert.NotContains(t, o.Stdout, "SOMEONE ELSE'S ANSWER", "send --wait printed the answer of another exchange with the same id")
	assert.Equal(t, exitTimeout, o.Code, "nobody answered the real request, so send --wait must time out: %s", o)
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs

// sxHostile is the world a hostile case runs in.
type sxHostile struct {
	t       *testing.T
	s       *sxServer
	orch    string
	raw     string // a raw byte logger: what reaches an application
	rawLog  string
	outside string // a folder next to the root that nothing may read or change
	canary  string // the content of outside/secret.txt; it must never be printed
	x       *exchange.Exchange
}

// corpus reads testdata/hostile/NAME with {{ROOT}}, {{OUTSIDE}}, {{SESSION}}, {{ORCH}},
// {{WORKER}}, {{STARTED}} and {{ID}} filled in from the case's world.
func (h *sxHostile) corpus(name string) []byte {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hostile", name))
	require.NoError(h.t, err)
	r := strings.NewReplacer("{{ROOT}}", h.s.root, "{{OUTSIDE}}", h.outside, "{{SESSION}}", h.x.Dir,
		"{{ORCH}}", string(h.x.Orchestrator), "{{WORKER}}", string(h.x.Worker), "{{STARTED}}", h.x.StartedAt, "{{ID}}", h.x.ID)
	return []byte(r.Replace(string(data)))
}

// plantedSession makes a session folder by hand (as an attacker could) and returns its path.
func (h *sxHostile) plantedSession(name string) string {
	h.t.Helper()
	dir := filepath.Join(h.s.root, name)
	require.NoError(h.t, os.MkdirAll(dir, 0o700))
	return dir
}

// sendRaw sends body to the raw logger and waits until the bytes reached it.
func (h *sxHostile) sendRaw(body []byte) sxOut {
	h.t.Helper()
	x, out := h.s.send(h.orch, h.raw, body)
	if x != nil {
		waitFor(h.t, 20*time.Second, func() bool {
			data, _ := os.ReadFile(h.rawLog)
			return bytes.Contains(data, []byte("id="+x.ID))
		}, "request %s to reach the pane", x.ID)
		got, err := os.ReadFile(x.RequestPath)
		require.NoError(h.t, err)
		req, err := messages.ParseRequest(got)
		require.NoError(h.t, err)
		assert.Equal(h.t, sxTrimNL(string(body)), sxTrimNL(req.Body), "the request file keeps the original bytes")
	}
	return out
}

// pasteClean checks that nothing but text, CR and LF reached the application: no escape sequence,
// no control character that the tty or the app would act on.
func (h *sxHostile) pasteClean() {
	h.t.Helper()
	data, err := os.ReadFile(h.rawLog)
	require.NoError(h.t, err)
	for i, r := range string(data) {
		bad := r < 0x20 && r != '\r' && r != '\n' || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		if bad {
			h.t.Errorf("control character %U reached the pane at byte %d: %q", r, i, data[max(0, i-20):min(len(data), i+20)])
			return
		}
	}
	assert.True(h.t, h.s.alive(), "the tmux server survives")
	dead, exists := h.s.paneDead(h.raw)
	assert.True(h.t, exists && !dead, "the receiving application survives")
}

// TestStressHostile feeds the corpus in testdata/hostile/ (and inputs that can only be made at run
// time: planted symlinks, FIFOs, a foreign root, huge and empty messages) to wcomm. Each case is
// refused with a clear error (want "refused: SUBSTRING": a non-zero exit whose message holds
// SUBSTRING), flagged by a listing that goes on (want "flagged: SUBSTRING": history and parse
// exit 0 and name the bad file in their output), or delivered harmlessly (want "delivered
// harmlessly": exit 0, nothing but clean text reached the pane, and the case's own checks).
// No case may print the canary kept next to the root, or change anything outside the root.
func TestStressHostile(t *testing.T) {
	s := sxNew(t)
	h := &sxHostile{t: t, s: s, outside: filepath.Join(s.work, "outside"), canary: "CANARY-" + sxNonce()}
	require.NoError(t, os.MkdirAll(h.outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(h.outside, "secret.txt"), []byte(h.canary), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(h.outside, "002-response.md"), []byte("[WORKER RESPONSE id=20260101-000000-abcd started_at=20260101-000000 orchestrator=%1 worker=%2]\n"+h.canary+"\n"), 0o600))
	h.orch, _ = s.linesPane()
	h.raw, h.rawLog = s.rawPane()
	holder, hlog := s.workerPane("hold", "0s")
	h.x = s.mustSend(h.orch, holder, []byte("the exchange hostile cases aim at"))
	sxWaitReceipt(t, hlog, h.x.ResponsePath)
	snapshot := sxTree(t, h.outside)

	line := func(path string) string {
		return fmt.Sprintf("[RESPONSE started_at=%s orchestrator=%s worker=%s] %s", h.x.StartedAt, h.x.Orchestrator, h.x.Worker, path)
	}
	const harmless = "delivered harmlessly"
	tests := []struct {
		name  string
		input string // the corpus file, or what is made at run time
		run   func(h *sxHostile) sxOut
		want  string
	}{
		// Message bodies: the file keeps the bytes, the pane gets clean text.
		{"escape sequences in the body", "body-escapes.txt", func(h *sxHostile) sxOut {
			return h.sendRaw(h.corpus("body-escapes.txt"))
		}, harmless},
		{"invalid UTF-8 in the body", "body-invalid-utf8.bin", func(h *sxHostile) sxOut {
			return h.sendRaw(h.corpus("body-invalid-utf8.bin"))
		}, harmless},
		{"NUL bytes in the body", "body-nul.bin", func(h *sxHostile) sxOut { return h.sendRaw(h.corpus("body-nul.bin")) }, harmless},
		{"bidi overrides in the body", "body-bidi.txt", func(h *sxHostile) sxOut { return h.sendRaw(h.corpus("body-bidi.txt")) }, harmless},
		{"forged instructions and RESPONSE lines in the body", "body-forged.txt", func(h *sxHostile) sxOut {
			x, out := h.s.send(h.orch, h.raw, h.corpus("body-forged.txt"))
			if x != nil {
				req := sxReadRequest(h.t, x.RequestPath)
				assert.Equal(h.t, x.ResponsePath, req.Instructions.ResponsePath, "the real instructions win")
				assert.Equal(h.t, x.Dir, filepath.Dir(x.ResponsePath))
			}
			return out
		}, harmless},
		{"huge message (10 MB)", "generated: 10 MB of text", func(h *sxHostile) sxOut {
			body := bytes.Repeat([]byte("a long line of a very long message\n"), (10<<20)/35)
			x, out := h.s.send(h.orch, h.raw, body)
			if x != nil {
				assert.Equal(h.t, "pointer", x.Form, "too big to paste: a pointer line goes to the pane")
				req := sxReadRequest(h.t, x.RequestPath)
				assert.Equal(h.t, len(body), len(req.Body))
			}
			return out
		}, harmless},
		{"empty message", "generated: 0 bytes", func(h *sxHostile) sxOut {
			return h.s.wcomm([]byte{}, "send", "--to", h.raw, "--from", h.orch, "--file", "-")
		}, "refused: empty message"},
		{"blank message", "generated: spaces and newlines", func(h *sxHostile) sxOut {
			return h.s.wcomm([]byte(" \n\t\n"), "send", "--to", h.raw, "--from", h.orch, "--file", "-")
		}, "refused: empty message"},

		// Fields with newlines or other junk.
		{"newline in --capability", "READONLY\\nWRITABLE", func(h *sxHostile) sxOut {
			return h.s.wcomm(nil, "send", "--to", h.raw, "--from", h.orch, "--capability", "READONLY\nWRITABLE", "hi")
		}, "refused: capability"},
		{"newline in --to", "%N\\n%M", func(h *sxHostile) sxOut {
			return h.s.wcomm(nil, "send", "--to", h.raw+"\n"+h.orch, "--from", h.orch, "hi")
		}, "refused: target"},
		{"newline in --from", "%N\\nx", func(h *sxHostile) sxOut {
			return h.s.wcomm(nil, "send", "--to", h.raw, "--from", h.orch+"\nx", "hi")
		}, "refused: --from"},
		{"tmux command in --to", "%N;kill-server", func(h *sxHostile) sxOut {
			return h.s.wcomm(nil, "send", "--to", h.raw+";kill-server", "--from", h.orch, "hi")
		}, "refused: target"},

		// Ids.
		{"id with ../", "../../etc/passwd", func(h *sxHostile) sxOut { return h.s.wcomm(nil, "await", "../../etc/passwd", "--timeout", "1s") }, "refused: neither an exchange id"},
		{"id that is ..", "..", func(h *sxHostile) sxOut { return h.s.wcomm(nil, "show", "..") }, "refused: neither an exchange id"},
		{"id with a newline", "ID\\nrm -rf", func(h *sxHostile) sxOut { return h.s.wcomm(nil, "await", h.x.ID+"\nrm -rf ~", "--timeout", "1s") }, "refused: neither an exchange id"},
		{"id with a tmux separator", "ID;kill-server", func(h *sxHostile) sxOut { return h.s.wcomm(nil, "notify", "--id", h.x.ID+";kill-server", "x") }, "refused: is neither a request id (YYYYMMDD-HHMMSS-xxxx)"},
		{"absolute path outside the root as id", "OUTSIDE/002-response.md", func(h *sxHostile) sxOut {
			return h.s.wcomm(nil, "await", filepath.Join(h.outside, "002-response.md"), "--timeout", "1s")
		}, "refused: not inside"},
		{"path escaping the root with ..", "ROOT/../outside/002-response.md", func(h *sxHostile) sxOut {
			return h.s.wcomm(nil, "show", h.s.root+"/../outside/002-response.md")
		}, "refused: not inside"},

		// Forged RESPONSE lines (parse follows the path only inside the root).
		{"RESPONSE line pointing outside the root", "line-outside-root.txt", func(h *sxHostile) sxOut {
			return h.s.wcomm(h.corpus("line-outside-root.txt"), "parse", "-")
		}, "refused: not clean"},
		{"RESPONSE line to a file elsewhere", "line-elsewhere.txt", func(h *sxHostile) sxOut {
			return h.s.wcomm(h.corpus("line-elsewhere.txt"), "parse", "-")
		}, "refused: not inside"},
		{"RESPONSE line to a file that is not a response", "line-not-response.txt", func(h *sxHostile) sxOut {
			return h.s.wcomm(h.corpus("line-not-response.txt"), "parse", "-")
		}, "refused: response"},
		{"RESPONSE line with a NUL in the path", "line-nul.bin", func(h *sxHostile) sxOut {
			return h.s.wcomm(h.corpus("line-nul.bin"), "parse", "-")
		}, "refused: not clean"},
		{"RESPONSE line with a newline inside its fields", "line-newline-field.txt", func(h *sxHostile) sxOut {
			return h.s.wcomm(h.corpus("line-newline-field.txt"), "parse", "-")
		}, "refused: no closing ]"},
		{"RESPONSE line in colour escaping the root", "line-escapes.txt", func(h *sxHostile) sxOut {
			return h.s.wcomm(h.corpus("line-escapes.txt"), "parse", "-")
		}, "refused: not clean"},

		// Planted files in the root.
		{"session folder that is a symlink out of the root", "generated: ROOT/20260101-000000-o1-w2 -> OUTSIDE", func(h *sxHostile) sxOut {
			link := filepath.Join(h.s.root, "20260101-000000-o1-w2")
			require.NoError(h.t, os.Symlink(h.outside, link))
			defer os.Remove(link)
			return h.s.wcomm(nil, "parse", line(filepath.Join(link, "002-response.md")))
		}, "refused: not inside"},
		{"response file that is a symlink", "generated: SESSION/NNN-response.md -> OUTSIDE/secret.txt", func(h *sxHostile) sxOut {
			require.NoError(h.t, os.Symlink(filepath.Join(h.outside, "secret.txt"), h.x.ResponsePath))
			defer os.Remove(h.x.ResponsePath)
			return h.s.wcomm(nil, "await", h.x.ID, "--timeout", "2s")
		}, "refused: not a regular file"},
		{"response file that is a symlink, read by parse", "generated: SESSION/NNN-response.md -> OUTSIDE/secret.txt", func(h *sxHostile) sxOut {
			require.NoError(h.t, os.Symlink(filepath.Join(h.outside, "secret.txt"), h.x.ResponsePath))
			defer os.Remove(h.x.ResponsePath)
			return h.s.wcomm(nil, "parse", line(h.x.ResponsePath))
		}, "flagged: symlink"},
		{"response file that is a FIFO", "generated: mkfifo SESSION/NNN-response.md", func(h *sxHostile) sxOut {
			require.NoError(h.t, syscall.Mkfifo(h.x.ResponsePath, 0o600))
			defer os.Remove(h.x.ResponsePath)
			return h.s.wcomm(nil, "await", h.x.ID, "--timeout", "2s")
		}, "refused: not a regular file"},
		{"request file that is a symlink", "generated: SESSION/901-request.md -> OUTSIDE/secret.txt", func(h *sxHostile) sxOut {
			p := filepath.Join(h.x.Dir, "901-request.md")
			require.NoError(h.t, os.Symlink(filepath.Join(h.outside, "secret.txt"), p))
			defer os.Remove(p)
			return h.s.wcomm(nil, "history", "--json")
		}, "flagged: symlink"},
		{"root lock that is a symlink", "generated: ROOT/.wcomm.lock -> OUTSIDE/secret.txt", func(h *sxHostile) sxOut {
			root := filepath.Join(h.s.work, "root-locklink")
			require.NoError(h.t, os.MkdirAll(root, 0o700))
			require.NoError(h.t, os.Symlink(filepath.Join(h.outside, "secret.txt"), filepath.Join(root, ".wcomm.lock")))
			return sxExec(time.Minute, cleanEnv(), nil, h.s.bin, "send", "-S", h.s.sock, "--root", root, "--to", h.raw, "--from", h.orch, "hi")
		}, "refused: lock root"},
		{"lock folder that is a symlink", "generated: ROOT/.locks -> OUTSIDE", func(h *sxHostile) sxOut {
			root := filepath.Join(h.s.work, "root-locksdir")
			require.NoError(h.t, os.MkdirAll(root, 0o700))
			require.NoError(h.t, os.Symlink(h.outside, filepath.Join(root, ".locks")))
			return sxExec(time.Minute, cleanEnv(), nil, h.s.bin, "send", "-S", h.s.sock, "--root", root, "--to", h.raw, "--from", h.orch, "hi")
		}, "refused: symlink"},
		{"delivery log that is a symlink", "generated: SESSION/NNN-delivery.jsonl -> OUTSIDE/secret.txt", func(h *sxHostile) sxOut {
			// The next request of the holder's session is number Seq+2.
			p := filepath.Join(h.x.Dir, fmt.Sprintf("%03d-delivery.jsonl", h.x.Seq+2))
			require.NoError(h.t, os.Symlink(filepath.Join(h.outside, "secret.txt"), p))
			_, out := h.s.send(h.orch, string(h.x.Worker), []byte("a request whose log is a planted symlink"))
			_, err := os.Lstat(filepath.Join(h.x.Dir, fmt.Sprintf("%03d-request.md", h.x.Seq+2)))
			assert.True(h.t, errors.Is(err, os.ErrNotExist), "a request that cannot be recorded is taken back")
			return out
		}, "refused: nothing was sent"},
		{"root that is a symlink", "generated: --root LINK -> OUTSIDE", func(h *sxHostile) sxOut {
			link := filepath.Join(h.s.work, "root-link")
			require.NoError(h.t, os.Symlink(h.outside, link))
			return sxExec(time.Minute, cleanEnv(), nil, h.s.bin, "send", "-S", h.s.sock, "--root", link, "--to", h.raw, "--from", h.orch, "hi")
		}, "refused: symlink"},
		{"root owned by another uid", "generated: chown 65534 (as root) or a system folder", func(h *sxHostile) sxOut {
			root := "/"
			if os.Getuid() == 0 {
				root = filepath.Join(h.s.work, "root-foreign")
				require.NoError(h.t, os.MkdirAll(root, 0o700))
				require.NoError(h.t, os.Chown(root, 65534, 65534))
			}
			return sxExec(time.Minute, cleanEnv(), nil, h.s.bin, "send", "-S", h.s.sock, "--root", root, "--to", h.raw, "--from", h.orch, "hi")
		}, "refused: owned by uid"},
		{"request with a hostile header", "request-hostile-header.md", func(h *sxHostile) sxOut {
			dir := h.plantedSession("20260101-000001-o1-w2")
			require.NoError(h.t, os.WriteFile(filepath.Join(dir, "001-request.md"), h.corpus("request-hostile-header.md"), 0o600))
			return h.s.wcomm([]byte("an answer"), "notify", "--response", filepath.Join(dir, "002-response.md"), "--file", "-")
		}, "refused: damaged"},
		{"request naming a response file outside its folder", "request-outside-response.md", func(h *sxHostile) sxOut {
			dir := h.plantedSession("20260101-000002-o1-w2")
			require.NoError(h.t, os.WriteFile(filepath.Join(dir, "001-request.md"), h.corpus("request-outside-response.md"), 0o600))
			out := h.s.wcomm([]byte("an answer"), "notify", "--response", filepath.Join(dir, "002-response.md"), "--enter-delay", "0", "--file", "-")
			_, err := os.Stat(filepath.Join(dir, "002-response.md"))
			assert.NoError(h.t, err, "the answer stays in the session folder")
			return out
		}, harmless},
		{"session folder name with ..", "generated: ROOT/20260101-000000-o1-w2..", func(h *sxHostile) sxOut {
			h.plantedSession("20260101-000000-o1-w2..")
			return h.s.wcomm(nil, "history", "--json")
		}, "flagged: 20260101-000000-o1-w2.."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := s.t
			h.t, s.t = t, t
			defer func() { h.t, s.t = parent, parent }()
			sxFault(t, func() {
				out := tc.run(h)
				all := out.Stdout + out.Stderr
				first, _, _ := strings.Cut(strings.TrimSpace(out.Stderr), "\n")
				t.Logf("want %s; got exit %d: %s", tc.want, out.Code, first)
				assert.NotContains(t, all, h.canary, "the canary outside the root must never be printed")
				assert.NotContains(t, out.Stderr, "panic:", "%s", out)
				if sub, ok := strings.CutPrefix(tc.want, "refused: "); ok {
					assert.Contains(t, all, sub, "%s", out)
					assert.Greater(t, out.Code, 0, "a refusal exits non-zero (and no crash): %s", out)
				} else if sub, ok := strings.CutPrefix(tc.want, "flagged: "); ok {
					assert.Equal(t, 0, out.Code, "%s", out)
					assert.Contains(t, out.Stdout, sub, "%s", out)
				} else {
					assert.Equal(t, 0, out.Code, "%s", out)
					h.pasteClean()
				}
				assert.Equal(t, snapshot, sxTree(t, h.outside), "nothing outside the root changes")
				assert.True(t, s.alive(), "the tmux server survives")
			})
		})
	}
	t.Logf("hostile corpus: %d cases", len(tests))
}

// sxTree lists a folder's files with their sizes and modes, to detect any change.
func sxTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		data := ""
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			data = string(b)
		}
		out[p] = fmt.Sprintf("%v %d %s", fi.Mode(), fi.Size(), data)
		return nil
	}))
	return out
}

// TestStressSummary prints the totals of the run, one line each (keep it the last test of the
// file: tests run in source order). With WCOMM_STRESS_SUMMARY set, the lines go to that file too.
func TestStressSummary(t *testing.T) {
	sxTotals.Lock()
	defer sxTotals.Unlock()
	lines := []string{
		fmt.Sprintf("stress: messages sent: %d", sxTotals.sent),
		fmt.Sprintf("stress: messages lost: %d", sxTotals.lost),
		fmt.Sprintf("stress: messages duplicated: %d", sxTotals.duplicated),
		fmt.Sprintf("stress: faults injected: %d", sxTotals.faults),
		fmt.Sprintf("stress: faults survived: %d", sxTotals.survived),
	}
	for _, l := range lines {
		t.Log(l)
	}
	if p := os.Getenv("WCOMM_STRESS_SUMMARY"); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	}
	assert.Zero(t, sxTotals.lost, "messages lost")
	assert.Zero(t, sxTotals.duplicated, "messages duplicated")
	assert.Equal(t, sxTotals.faults, sxTotals.survived, "faults survived")
}
