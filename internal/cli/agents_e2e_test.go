//go:build agents

package cli

// Delivery into the real agent TUIs: Claude Code, Codex CLI, Gemini CLI, Qwen Code, GitHub
// Copilot CLI and OpenCode, installed from npm by testdata/agents/install.sh into a cache folder, each talking only to
// testdata/agents/mockmodel.py on 127.0.0.1. The model's prompt log is the ground truth: a message
// was submitted once, whole and in order when the log holds exactly its text, once, in send order.
//
// Run: make e2e-agents (go test -tags agents -race -run Agents -timeout 60m ./internal/cli);
// make e2e-agents AGENT_SENDS=10 for a shorter pass (WCOMM_AGENT_SENDS).
// WCOMM_AGENTS_DIR names the install folder (default: the user cache folder's wcomm-agents);
// WCOMM_AGENTS_REPORT, when set, receives the results table as markdown. A TUI that cannot run
// here fails with the reason; nothing is skipped.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// agentsDir is the harness folder, relative to this package.
var agentsDir = filepath.Join("..", "..", "testdata", "agents")

// defaultAgentSends is how many messages each TUI gets in a row; WCOMM_AGENT_SENDS sets another
// count (make e2e-agents AGENT_SENDS=N; CI's shorter pass), never fewer than minAgentSends.
const defaultAgentSends = 50

// minAgentSends keeps a short pass long enough to mix every size (one line, 40 lines, 100 KB)
// several times and to queue sends behind a busy agent.
const minAgentSends = 10

// agentSendCount is the count of this run.
func agentSendCount(t *testing.T) int {
	t.Helper()
	v := os.Getenv("WCOMM_AGENT_SENDS")
	if v == "" {
		return defaultAgentSends
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "WCOMM_AGENT_SENDS=%q is not a number", v)
	require.GreaterOrEqual(t, n, minAgentSends, "WCOMM_AGENT_SENDS=%d: a pass sends at least %d", n, minAgentSends)
	return n
}

// agentStartBound bounds an agent's start, until its input box shows empty and idle.
const agentStartBound = 5 * time.Minute

// agentBound bounds one agent's whole run.
const agentBound = 10 * time.Minute

var (
	installOnce sync.Once
	installDir  string
	installErr  error
)

// installAgents runs install.sh once per test run (it returns at once when the pinned versions
// are there) and returns the folder.
func installAgents(t *testing.T) string {
	t.Helper()
	installOnce.Do(func() {
		dir := os.Getenv("WCOMM_AGENTS_DIR")
		if dir == "" {
			cache, err := os.UserCacheDir()
			if err != nil {
				cache = os.TempDir()
			}
			dir = filepath.Join(cache, "wcomm-agents")
		}
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				installErr = fmt.Errorf("%s is not installed: the agent TUIs cannot run here; install Node.js 20 or later", tool)
				return
			}
		}
		script, err := filepath.Abs(filepath.Join(agentsDir, "install.sh"))
		if err != nil {
			installErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, "bash", script, dir).CombinedOutput()
		if err != nil {
			installErr = fmt.Errorf("install.sh %s failed (%v): the agent TUIs cannot run here:\n%s", dir, err, out)
			return
		}
		if len(out) > 0 {
			fmt.Fprintf(os.Stderr, "install.sh took %s:\n%s", time.Since(start).Round(time.Second), out)
		}
		installDir = dir
	})
	require.NoError(t, installErr)
	return installDir
}

// mockModel is a running mockmodel.py and its prompt log.
type mockModel struct {
	port string
	log  string
}

// prompt is one line of the model's prompt log.
type prompt struct {
	Agent  string  `json:"agent"`
	Prompt string  `json:"prompt"`
	T      float64 `json:"t"`
}

// startModel starts mockmodel.py on a free loopback port; it ends with the test.
func startModel(t *testing.T, dir string) mockModel {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(agentsDir, "mockmodel.py"))
	require.NoError(t, err)
	m := mockModel{log: filepath.Join(dir, "prompts.jsonl")}
	portFile := filepath.Join(dir, "port")
	cmd := exec.Command("python3", script, "--port", "0", "--port-file", portFile, "--log", m.log,
		"--requests", filepath.Join(dir, "requests.jsonl"), "--max-seconds", "2400")
	stderr, err := os.Create(filepath.Join(dir, "model.err"))
	require.NoError(t, err)
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		stderr.Close()
	})
	// A minute: Python's start takes seconds on a loaded machine.
	waitFor(t, time.Minute, func() bool {
		data, err := os.ReadFile(portFile)
		m.port = strings.TrimSpace(string(data))
		return err == nil && m.port != ""
	}, "mockmodel.py to listen (see %s)", stderr.Name())
	return m
}

// prompts returns the logged prompts of one agent.
func (m mockModel) prompts(t *testing.T, agent string) []prompt {
	t.Helper()
	data, err := os.ReadFile(m.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []prompt
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var p prompt
		require.NoError(t, json.Unmarshal([]byte(line), &p), "prompt log line %q", line)
		if p.Agent == agent {
			out = append(out, p)
		}
	}
	return out
}

// agentPane starts one TUI in a new window of the world and waits, at most agentStartBound, until
// its input box is on screen, empty and idle. A TUI that never gets there fails the test with its
// last screen and its start-up errors.
func (w *world) agentPane(agent, installed string, m mockModel) string {
	w.t.Helper()
	return w.agentPaneEnv(agent, installed, m, nil)
}

// agentPaneEnv is agentPane with variables for start-agent.sh (NAME=VALUE: CLAUDE_PERMISSION_MODE,
// CODEX_DAEMON, AGENT_HOME, WCOMM_*).
func (w *world) agentPaneEnv(agent, installed string, m mockModel, env []string) string {
	w.t.Helper()
	script, err := filepath.Abs(filepath.Join(agentsDir, "start-agent.sh"))
	require.NoError(w.t, err)
	work := filepath.Join(w.work, "work-"+agent)
	errFile := filepath.Join(w.work, "start-"+agent+".err")
	// wcomm on PATH, for the worker's tool calls ("RUN: wcomm notify ..."). Set by the wrapper:
	// tmux gives a new pane the PATH of the client that made it, whatever new-window -e says.
	argv := append([]string{"bash", "-c", `PATH=$1:$PATH; shift; exec env "$@" 2>>"$0"`, errFile, filepath.Dir(w.bin)}, env...)
	pane := w.pane(w.work, append(argv, script, agent, installed, work, m.port)...)
	w.tmux("set-option", "-p", "-t", pane, "remain-on-exit", "on")
	if agent == "opencode" {
		// On a wide pane OpenCode draws a sidebar, and at 160 columns still its working folder, on
		// the rows of its input box, where its profile reads them as text in the box; at 100
		// columns the box holds only what was typed (docs/delivery.md).
		w.tmux("resize-window", "-t", pane, "-x", "100")
	}
	w.t.Cleanup(func() { killPaneTree(w, pane) })
	prof := profile.Defaults().Lookup(agent)
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	// OpenCode's start is CPU-bound (about 5 s on an idle machine, 164 s measured at a load
	// average of 28 on 2 cores): the bound is generous, the poll ends as soon as the box shows.
	deadline := time.Now().Add(agentStartBound)
	var last string
	for {
		if dead, _ := w.paneDead(pane); dead {
			stderr, _ := os.ReadFile(errFile)
			w.t.Fatalf("%s cannot run here: its TUI exited at start; errors: %s; last screen:\n%s", agent, stderr, w.capture(pane))
		}
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		if err == nil {
			in := prof.Inspect(s)
			if in.Empty() && !in.Busy {
				return pane
			}
		}
		last = w.capture(pane)
		if time.Now().After(deadline) {
			stderr, _ := os.ReadFile(errFile)
			w.t.Fatalf("%s cannot run here: no empty input box after %s; errors: %s; last screen:\n%s", agent, agentStartBound, stderr, last)
		}
		time.Sleep(100 * time.Millisecond) // the polling interval
	}
}

// killPaneTree ends the processes of a pane this test started (an agent's node processes may
// outlive their pane), then the pane.
func killPaneTree(w *world, pane string) {
	out, err := w.tmuxErr("display-message", "-p", "-t", pane, "#{pane_pid}")
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "%d", &pid); err != nil || pid <= 0 {
		return
	}
	pids := []int{pid}
	if t, err := proc.Scan(); err == nil {
		for _, p := range t.Descendants(pid) {
			pids = append(pids, p.PID)
		}
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	_, _ = w.tmuxErr("kill-pane", "-t", pane)
	// An agent writes its session files on its way out after a SIGTERM: the test's folders are
	// removed right after this cleanup, so wait for every process to be gone, and kill what is
	// left after a while, lest a late write leave a folder that is not empty.
	if !allGone(pids, 10*time.Second) {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		allGone(pids, 10*time.Second)
	}
}

// allGone polls until none of pids runs (a zombie writes nothing), or the deadline passes.
func allGone(pids []int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		alive := false
		for _, p := range pids {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			if err != nil {
				continue
			}
			if i := strings.LastIndexByte(string(stat), ')'); i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z' {
				alive = true
				break
			}
		}
		if !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // the polling interval, not a wait for a result
	}
}

// keepOnFailure copies a failed run's evidence (the model's prompt and request logs, the
// messages, the root with every delivery record) into WCOMM_AGENTS_KEEP/AGENT, when set, before
// the test's folders are removed: a lost message is found by comparing the delivery records with
// what reached the model.
func keepOnFailure(t *testing.T, w *world, agent string) {
	dir := os.Getenv("WCOMM_AGENTS_KEEP")
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dst := filepath.Join(dir, agent+"-"+time.Now().Format("150405"))
		for _, src := range []string{w.work, w.root} {
			if err := os.CopyFS(filepath.Join(dst, filepath.Base(src)), os.DirFS(src)); err != nil {
				t.Logf("keep %s: %v", src, err)
			}
		}
		t.Logf("the run's evidence is kept in %s", dst)
	})
}

// keepScreenOnFailure writes the pane's screen with its scrollback into WCOMM_AGENTS_KEEP, when
// set, if the test failed; it runs before the pane is killed.
func keepScreenOnFailure(t *testing.T, w *world, pane string) {
	dir := os.Getenv("WCOMM_AGENTS_KEEP")
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		out, err := w.tmuxErr("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
		if err == nil {
			_ = os.WriteFile(filepath.Join(w.work, "screen.txt"), []byte(out), 0o600)
		}
	})
}

// agentBody is message i of the run: one line, 40 lines or 100 KB, each unique.
func agentBody(agent string, i int) string {
	tag := fmt.Sprintf("%s message %02d", agent, i)
	switch i % 3 {
	case 0:
		return tag + ": a one-line request, please answer ok"
	case 1:
		var b strings.Builder
		for l := 1; l <= 40; l++ {
			fmt.Fprintf(&b, "%s, line %02d of 40: some words to make the line longer\n", tag, l)
		}
		return b.String()
	default:
		var b strings.Builder
		for l := 0; b.Len() < 100<<10; l++ {
			fmt.Fprintf(&b, "%s, line %05d of a hundred kilobytes: padding padding padding padding\n", tag, l)
		}
		return b.String()
	}
}

func sum12s(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:12]
}

// delivered is what the delivery log of one exchange says.
type delivered struct {
	form, sum, profile, evidence string
	verified                     bool
	enters                       int
	written, submitted           time.Time
}

func readDelivery(t *testing.T, x exchangeJSON) delivered {
	t.Helper()
	var d delivered
	for _, ev := range jsonLines(t, filepath.Join(x.Dir, fmt.Sprintf("%03d-delivery.jsonl", x.Seq))) {
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(ev["at"]))
		detail, _ := ev["detail"].(map[string]any)
		str := func(k string) string { s, _ := detail[k].(string); return s }
		switch ev["state"] {
		case "written":
			d.written = at
		case "pasted":
			d.form, d.sum, d.profile = str("form"), str("sha256"), str("profile")
		case "submitted":
			d.submitted = at
			d.verified = str("verified") == "true"
			d.evidence = str("evidence")
			fmt.Sscanf(str("enters"), "%d", &d.enters)
		}
	}
	return d
}

// honestlyUnverified tells the deliveries that end submitted but unverified, and say why: the paste
// was never seen in the box, or the box was gone from the screen after the Enter. Neither screen
// proves the submission, so the delivery does not claim it; the prompts that reached the model
// are what proves it here.
func honestlyUnverified(evidence string) bool {
	return strings.Contains(evidence, "never seen") || strings.Contains(evidence, "not on screen after Enter")
}

// agentResult is one line of the results table.
type agentResult struct {
	agent             string
	sent, submitted   int
	retried           int
	median, medianRun time.Duration
	refusedHuman      bool
}

var (
	resultsMu sync.Mutex
	results   []agentResult
)

func TestAgents(t *testing.T) {
	installed := installAgents(t)
	// Crush is not in this run: its npm package downloads its program from GitHub when installed,
	// which a machine without access to GitHub cannot do (see docs/delivery.md).
	agents := []string{"claude", "codex", "gemini", "qwen", "copilot", "opencode"}
	if only := os.Getenv("WCOMM_AGENTS_ONLY"); only != "" {
		agents = strings.Split(only, ",") // a chosen few (WCOMM_AGENTS_ONLY=opencode,qwen)
	}
	for _, agent := range agents {
		t.Run(agent, func(t *testing.T) { runAgent(t, agent, installed) })
	}
	report(t)
}

// runAgent sends agentSendCount messages of mixed sizes to a freshly started agent, then one into a
// pane holding a person's half-typed text.
func runAgent(t *testing.T, agent, installed string) {
	start := time.Now()
	agentSends := agentSendCount(t)
	w := newWorld(t)
	keepOnFailure(t, w, agent)
	m := startModel(t, w.work)
	orch := w.bashPane("")
	pane := w.agentPane(agent, installed, m)
	keepScreenOnFailure(t, w, pane)
	prof := profile.Defaults().Lookup(agent)
	if agent == "claude" {
		// This run measures typing; TestAgentsClaudeSocket covers Claude Code's own door.
		closeDoor(t, w, installed, pane)
	}

	res := agentResult{agent: agent}
	var sums []string
	var xs []exchangeJSON
	var runs, times []time.Duration
	for i := range agentSends {
		require.Less(t, time.Since(start), agentBound, "%s: the run is over its bound", agent)
		body := agentBody(agent, i)
		msg := filepath.Join(w.work, fmt.Sprintf("msg-%s-%02d.md", agent, i))
		require.NoError(t, os.WriteFile(msg, []byte(body), 0o600))
		t0 := time.Now()
		r := w.in(orch, "send", "--to", pane, "--json", "--file", msg)
		runs = append(runs, time.Since(t0))
		res.sent++
		require.Equal(t, 0, r.code, "%s send %d:\n%s\nscreen:\n%s", agent, i, r, w.capture(pane))
		xs = append(xs, decode[exchangeJSON](t, r))
	}
	// A send to an agent still busy with the previous message queues it in the agent's outbox;
	// its deliverer types it in, in order, as soon as the agent is idle again.
	for i, x := range xs {
		var d delivered
		var seen string
		waitFor(t, 3*time.Minute, func() bool {
			d = readDelivery(t, x)
			if d.submitted.IsZero() {
				seen = "delivery log:\n" + readString(t, filepath.Join(x.Dir, fmt.Sprintf("%03d-delivery.jsonl", x.Seq))) +
					"screen:\n" + w.capture(pane)
			}
			return !d.submitted.IsZero()
		}, "%s send %d (%s) to be submitted; %s", agent, i, x.ID, &seen)
		assert.Equal(t, agent, d.profile, "send %d detected the agent", i)
		// Copilot CLI keeps a paste of 32 KB or more as a file in its workspace and gives its
		// model a reference (measured on 1.0.102; 16 KB still came inline): its profile bounds
		// pastes at 16 KB, so the 100 KB messages go as pointer lines.
		wantForm := "paste"
		if prof.PasteLimit > 0 && len(agentBody(agent, i)) > prof.PasteLimit {
			wantForm = "pointer"
		}
		assert.Equal(t, wantForm, d.form, "send %d: %d KB", i, len(agentBody(agent, i))>>10)
		if honestlyUnverified(d.evidence) {
			// Honestly unverified: the agent took the paste without ever showing it, or took its
			// box off the screen at the Enter (a held-up Gemini CLI on a loaded machine); what
			// reached the model is checked below.
			t.Logf("%s send %d: unverified: %s", agent, i, d.evidence)
		} else {
			assert.True(t, d.verified, "send %d: the screen showed the submission: %s", i, d.evidence)
		}
		if d.enters > 1 {
			res.retried++
			t.Logf("%s send %d (%d bytes) needed %d Enters: %s", agent, i, len(agentBody(agent, i)), d.enters, d.evidence)
		}
		times = append(times, d.submitted.Sub(d.written))
		sums = append(sums, d.sum)
	}

	// Every message reached the model once, whole, in order.
	var got []prompt
	var seen string
	waitFor(t, 3*time.Minute, func() bool {
		got = m.prompts(t, agent)
		seen = fmt.Sprintf("%d so far; screen:\n%s", len(got), w.capture(pane))
		return len(got) >= agentSends
	}, "%d prompts from %s in %s: %s", agentSends, agent, m.log, &seen)
	gotSums := make([]string, len(got))
	for i, p := range got {
		gotSums[i] = sum12s(strings.TrimSpace(p.Prompt))
	}
	for i, s := range sums {
		n := 0
		for _, g := range gotSums {
			if g == s {
				n++
			}
		}
		if i < len(gotSums) && gotSums[i] == s && n == 1 {
			res.submitted++
		} else {
			t.Errorf("%s message %d (%s, %s) is not the model's prompt %d exactly once", agent, i, xs[i].ID, s, i)
		}
	}
	assert.Equal(t, sums, gotSums, "%s: the model's prompts, in order, are the pasted messages", agent)

	// A person's half-typed prompt: the fail-fast send is refused and nothing is touched.
	human := "half typed by a human, not to be sent"
	w.tmux("send-keys", "-t", pane, "-l", human)
	screen := w.waitScreen(pane, human)
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	waitFor(t, 10*time.Second, func() bool {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		return err == nil && !prof.Inspect(s).Busy
	}, "%s to be idle", agent)
	box := func() []string {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		require.NoError(t, err)
		return prof.Inspect(s).Lines
	}
	before := box()
	require.Equal(t, []string{human}, before, "the person's text is in the box; screen:\n%s", screen)
	r := w.in(orch, "send", "--to", pane, "--no-queue", "--busy-wait", "2s", "--", "this message must not reach the agent")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "someone else's text", "%s", r)
	assert.Contains(t, r.stderr, "nothing was pasted")
	// The box is untouched (the rest of the screen is the agent's to redraw: hints come and go).
	assert.Equal(t, before, box(), "the input box is untouched; screen now:\n%s", w.capture(pane))
	m2 := regexpRequest.FindStringSubmatch(r.stderr)
	require.NotNil(t, m2, "%s", r)
	rs := w.in(orch, "show", "--json", m2[1])
	requireCode(t, 0, rs)
	x := decode[exchangeJSON](t, rs)
	assert.Equal(t, "refused", x.State)
	assert.Equal(t, "undelivered", x.Status)
	var states []string
	for _, ev := range jsonLines(t, filepath.Join(x.Dir, fmt.Sprintf("%03d-delivery.jsonl", x.Seq))) {
		states = append(states, fmt.Sprint(ev["state"]))
	}
	assert.Equal(t, []string{"written", "refused"}, states, "nothing was pasted")
	// The person clears the line; the next message is the next prompt: the refused one never was.
	w.tmux("send-keys", "-t", pane, "-N", fmt.Sprint(len(human)), "BSpace")
	final := w.in(orch, "send", "--to", pane, "--json", "--", agent+" final message after the refusal")
	requireCode(t, 0, final)
	var fd delivered
	waitFor(t, time.Minute, func() bool {
		fd = readDelivery(t, decode[exchangeJSON](t, final))
		return !fd.submitted.IsZero()
	}, "the final message of %s to be submitted", agent)
	waitFor(t, time.Minute, func() bool { return len(m.prompts(t, agent)) > agentSends }, "the final prompt of %s", agent)
	after := m.prompts(t, agent)
	require.Len(t, after, agentSends+1, "one more prompt, and only one")
	assert.Equal(t, fd.sum, sum12s(strings.TrimSpace(after[agentSends].Prompt)))
	res.refusedHuman = !t.Failed()

	res.median, res.medianRun = median(times), median(runs)
	resultsMu.Lock()
	results = append(results, res)
	resultsMu.Unlock()
	t.Logf("%s: %d/%d submitted once, whole, in order; %d needed another Enter; median written->submitted %s, median send run %s; total %s",
		agent, res.submitted, res.sent, res.retried, res.median, res.medianRun, time.Since(start).Round(time.Second))
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

// report logs the results table and writes it to WCOMM_AGENTS_REPORT when set.
func report(t *testing.T) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	var b strings.Builder
	b.WriteString("| agent | submitted / sent | needed another Enter | median written→submitted | median `wcomm send` run | half-typed text refused |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %s | %s | %v |\n", r.agent, r.submitted, r.sent, r.retried, r.median, r.medianRun, r.refusedHuman)
	}
	t.Logf("results:\n%s", b.String())
	if path := os.Getenv("WCOMM_AGENTS_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	}
}

// TestAgentsClaudeWorkerRoundTrip is the whole protocol with a real agent as the worker: a
// scripted Claude Code receives a request whose body holds "RUN: wcomm notify --response PATH
// 'answer'", runs it through its Bash tool, and the orchestrator's await returns the answer.
func TestAgentsClaudeWorkerRoundTrip(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	orch := w.bashPane("")
	worker := w.agentPane("claude", installed, m)

	// The first exchange opens the pair's session folder, so the second one's response path is
	// known before it is sent: the same folder, 004-response.md.
	first := w.send(orch, worker, "hello, no answer file needed for this one")
	response := filepath.Join(first.Dir, "004-response.md")
	body := "Please answer this request with the tool call below.\nRUN: wcomm notify --response " + response + " 'the answer is 42'"
	s := w.send(orch, worker, body)
	require.Equal(t, response, s.Response)

	r := w.in(orch, "await", s.ID, "--timeout", "50s")
	requireCode(t, 0, r)
	assert.Equal(t, "the answer is 42\n", r.stdout)
	rs := w.in(orch, "show", "--json", s.ID)
	requireCode(t, 0, rs)
	x := decode[exchangeJSON](t, rs)
	assert.Equal(t, "answered", x.Status)
	assert.Equal(t, "ok", x.Integrity, "the worker's wcomm read the request it was sent: %v", x.Problems)
	resp := readString(t, response)
	assert.True(t, strings.HasPrefix(resp, fmt.Sprintf("[WORKER RESPONSE id=%s ", s.ID)), "%s", resp)
	// The orchestrator is a bash pane: the RESPONSE line, when pasted, came as a comment.
	assert.NotContains(t, w.capture(orch), "command not found")
}

// regexpRequest finds the kept request in send's error output.
var regexpRequest = regexp.MustCompile(`request kept at (\S+-request\.md)`)
