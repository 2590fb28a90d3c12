package cli

// The lifecycle commands end to end: spawn, names, stop, restart and worktrees, with the real
// binary, a private tmux server and real programs (the line reader fixture, cat).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineReaderArgv is the command of a line reader logging to a new file of the world's, and the log.
func (w *world) lineReaderArgv(tag string) ([]string, string) {
	w.t.Helper()
	script, err := filepath.Abs(filepath.Join(fixtures, "linereader.py"))
	require.NoError(w.t, err)
	log := filepath.Join(w.work, fmt.Sprintf("reader-%s-%d.jsonl", tag, time.Now().UnixNano()))
	return []string{"python3", script, log}, log
}

// linesWith counts the logged lines of a line reader that contain text.
func linesWith(t *testing.T, log, text string) int {
	n := 0
	for _, l := range jsonLines(t, log) {
		if s, _ := l["line"].(string); strings.Contains(s, text) {
			n++
		}
	}
	return n
}

// paneIDs lists the server's pane ids.
func (w *world) paneIDs() []string {
	w.t.Helper()
	return strings.Fields(w.tmux("list-panes", "-a", "-F", "#{pane_id}"))
}

// orchestrator opens the pane the test's commands run in.
func (w *world) orchestrator() string {
	w.t.Helper()
	return w.pane("", "sleep", "86400")
}

func TestSpawnNamedWorkerGetsItsPromptOnce(t *testing.T) {
	w := newWorld(t)
	orch := w.orchestrator()
	argv, log := w.lineReaderArgv("alpha")
	r := w.in(orch, append([]string{"spawn", "--name", "alpha", "--prompt", "FIRST-PROMPT-7q", "--"}, argv...)...)
	require.Equal(t, 0, r.code, r.String())
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Regexp(t, `^%\d+$`, lines[0], "the pane id alone on the first line")
	pane := lines[0]
	require.Len(t, lines, 2, "the first prompt's exchange id on the second line")

	waitFor(t, 20*time.Second, func() bool { return linesWith(t, log, "FIRST-PROMPT-7q") > 0 }, "the first prompt to reach the reader")
	// A send by name reaches the same pane; the reader reads in order, so by the time it has the
	// second message, a first prompt typed twice would be there twice.
	s := w.in(orch, "send", "--to", "alpha", "SECOND-MESSAGE-7q")
	require.Equal(t, 0, s.code, s.String())
	waitFor(t, 20*time.Second, func() bool { return linesWith(t, log, "SECOND-MESSAGE-7q") > 0 }, "the send by name to reach the reader")
	assert.Equal(t, 1, linesWith(t, log, "FIRST-PROMPT-7q"), "the first prompt exactly once")
	assert.Contains(t, s.stdout, "-w"+strings.TrimPrefix(pane, "%")+"/", "the send went to the named pane")

	// The first prompt is an exchange like any other: history shows it.
	h := w.in(orch, "history", "--json")
	require.Equal(t, 0, h.code, h.String())
	assert.Contains(t, h.stdout, lines[1])

	// panes shows the name, in text and JSON.
	p := w.in(orch, "panes", "--json")
	require.Equal(t, 0, p.code, p.String())
	var infos []map[string]any
	require.NoError(t, json.Unmarshal([]byte(p.stdout), &infos))
	found := false
	for _, i := range infos {
		if i["pane_id"] == pane {
			found = true
			assert.Equal(t, "alpha", i["name"])
		}
	}
	assert.True(t, found, p.stdout)
	p = w.in(orch, "panes")
	assert.Regexp(t, `(?m)^`+pane+`\s+alpha\s`, p.stdout)

	// A name held by a pane is refused, and nothing starts.
	before := w.paneIDs()
	taken := w.in(orch, "spawn", "--name", "alpha", "--", "cat")
	assert.Equal(t, 1, taken.code, taken.String())
	assert.Contains(t, taken.stderr, "held by pane "+pane)
	assert.Equal(t, before, w.paneIDs(), "nothing was started")
}

func TestSpawnFourAtOnceEachPromptOnce(t *testing.T) {
	w := newWorld(t)
	orch := w.orchestrator()
	logs := make([]string, 4)
	runs := make([]*bg, 4)
	for i := range runs {
		argv, log := w.lineReaderArgv(fmt.Sprint(i))
		logs[i] = log
		runs[i] = w.start(call{pane: orch}, append([]string{"spawn", "--name", fmt.Sprintf("w%d", i),
			"--prompt", fmt.Sprintf("PROMPT-OF-%d-x", i), "--"}, argv...)...)
	}
	var wg sync.WaitGroup
	res := make([]result, 4)
	for i, b := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = b.wait(t, 90*time.Second) }()
	}
	wg.Wait()
	for i, r := range res {
		require.Equal(t, 0, r.code, r.String())
		waitFor(t, 20*time.Second, func() bool { return linesWith(t, logs[i], fmt.Sprintf("PROMPT-OF-%d-x", i)) > 0 }, "prompt %d", i)
	}
	for i := range res {
		// The second message settles the reader (see above), then each prompt is counted.
		s := w.in(orch, "send", "--to", fmt.Sprintf("w%d", i), "SETTLE-MARK")
		require.Equal(t, 0, s.code, s.String())
		waitFor(t, 20*time.Second, func() bool { return linesWith(t, logs[i], "SETTLE-MARK") > 0 }, "settle %d", i)
		for j := range res {
			want := 0
			if i == j {
				want = 1
			}
			assert.Equal(t, want, linesWith(t, logs[i], fmt.Sprintf("PROMPT-OF-%d-x", j)), "reader %d, prompt %d", i, j)
		}
	}
}

func TestSpawnRefusalsLeaveNoPane(t *testing.T) {
	w := newWorld(t)
	orch := w.orchestrator()
	before := w.paneIDs()

	r := w.in(orch, "spawn", "nosuchagent")
	assert.Equal(t, 4, r.code, r.String())
	assert.Contains(t, r.stderr, "claude, codex")

	r = w.in(orch, "spawn", "--name", "ghost", "--", "no-such-command-wcomm")
	assert.Equal(t, 1, r.code, r.String())
	assert.Contains(t, r.stderr, "not found")

	// A program that exits at once: its pane is removed, and the spawn says so.
	r = w.in(orch, "spawn", "--name", "ghost", "--", "false")
	assert.Equal(t, 1, r.code, r.String())
	assert.Contains(t, r.stderr, "exited")

	// A program never quiet: the timeout says what it saw (exit 3) and removes the pane.
	r = w.in(orch, "spawn", "--ready-timeout", "1s", "--", "sh", "-c", "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.05; done")
	assert.Equal(t, 3, r.code, r.String())
	assert.Contains(t, r.stderr, "tick")

	assert.Equal(t, before, w.paneIDs(), "no pane left behind")
	n := w.in(orch, "panes", "--all", "--json")
	assert.NotContains(t, n.stdout, "ghost", "the name was freed with its pane")
}

func TestSpawnWorktreeAndStopRemovesIt(t *testing.T) {
	w := newWorld(t)
	orch := w.orchestrator()
	repo := filepath.Join(w.work, "repo")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	require.NoError(t, os.MkdirAll(repo, 0o700))
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "init")

	// Outside a repository: refused, nothing started.
	before := w.paneIDs()
	r := w.in(orch, "spawn", "--name", "beta", "--worktree", "--dir", w.work, "--", "cat")
	assert.Equal(t, 1, r.code, r.String())
	assert.Contains(t, r.stderr, "git repository")
	assert.Equal(t, before, w.paneIDs())

	// The user's own settings file (trusted as it is) names a setup command, run in the new
	// worktree: one that leaves the worktree clean (git config writes the repository's).
	xdg := filepath.Join(w.work, "xdg")
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "wcomm"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "wcomm", "config.yaml"), []byte("worktree:\n  setup:\n    - [git, config, wcomm.setup, ran]\n"), 0o600))
	r = w.run(call{pane: orch, env: []string{"XDG_CONFIG_HOME=" + xdg}}, "spawn", "--name", "beta", "--worktree", "--dir", repo, "--json", "--", "cat")
	require.Equal(t, 0, r.code, r.String())
	setup, err := exec.Command("git", "-C", repo, "config", "wcomm.setup").Output()
	require.NoError(t, err, "the setup command ran")
	assert.Equal(t, "ran", strings.TrimSpace(string(setup)))
	var sp map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sp))
	wt := filepath.Join(w.work, "repo-worktrees", "beta")
	assert.Equal(t, wt, sp["worktree"])
	assert.Equal(t, "beta", sp["branch"])
	pane := sp["pane"].(string)
	assert.Equal(t, wt, strings.TrimSpace(w.tmux("display", "-p", "-t", pane, "#{pane_current_path}")), "the agent started in its worktree")

	// Dirty: refused, nothing stopped.
	require.NoError(t, os.WriteFile(filepath.Join(wt, "work.txt"), []byte("x"), 0o600))
	s := w.in(orch, "stop", "beta", "--remove-worktree")
	assert.Equal(t, 1, s.code, s.String())
	assert.Contains(t, s.stderr, "work.txt")
	dead, exists := w.paneDead(pane)
	assert.True(t, exists && !dead, "the agent still runs")

	// Clean: the pane, the worktree and its branch go.
	require.NoError(t, os.Remove(filepath.Join(wt, "work.txt")))
	s = w.in(orch, "stop", "beta", "--remove-worktree")
	require.Equal(t, 0, s.code, s.String())
	_, exists = w.paneDead(pane)
	assert.False(t, exists, "the pane is gone")
	assert.NoDirExists(t, wt)
	out, err := exec.Command("git", "-C", repo, "branch", "--list", "beta").Output()
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(out)), "the branch is gone")
}

func TestRestartBringsAKilledProgramBackInItsPane(t *testing.T) {
	w := newWorld(t)
	orch := w.orchestrator()
	argv, log := w.lineReaderArgv("re")
	r := w.in(orch, append([]string{"spawn", "--name", "gamma", "--"}, argv...)...)
	require.Equal(t, 0, r.code, r.String())
	pane := strings.TrimSpace(r.stdout)

	pid := strings.TrimSpace(w.tmux("display", "-p", "-t", pane, "#{pane_pid}"))
	var n int
	_, err := fmt.Sscan(pid, &n)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(n, syscall.SIGKILL))
	waitFor(t, 10*time.Second, func() bool { d, _ := w.paneDead(pane); return d }, "the pane to be dead")

	// A message sent while it is down waits in its outbox for the restart, and is delivered once.
	q := w.in(orch, "send", "--to", "gamma", "SENT-WHILE-DEAD")
	require.Equal(t, 0, q.code, q.String())
	assert.Contains(t, q.stderr, "queued")

	re := w.in(orch, "restart", "gamma")
	require.Equal(t, 0, re.code, re.String())
	assert.Equal(t, pane, strings.TrimSpace(re.stdout), "the same pane")
	dead, exists := w.paneDead(pane)
	assert.True(t, exists && !dead)
	assert.NotEqual(t, pid, strings.TrimSpace(w.tmux("display", "-p", "-t", pane, "#{pane_pid}")), "a new process")

	s := w.in(orch, "send", "--to", "gamma", "AFTER-RESTART")
	require.Equal(t, 0, s.code, s.String())
	waitFor(t, 20*time.Second, func() bool { return linesWith(t, log, "AFTER-RESTART") > 0 }, "the send after the restart")
	assert.Equal(t, 1, linesWith(t, log, "SENT-WHILE-DEAD"), "the message that waited, delivered once")

	st := w.in(orch, "stop", "gamma")
	require.Equal(t, 0, st.code, st.String())
	_, exists = w.paneDead(pane)
	assert.False(t, exists)
}

func TestMCPSpawnAndStop(t *testing.T) {
	w := newWorld(t)
	orch := w.catPane()
	c := w.mcpClient(orch)
	argv, log := w.lineReaderArgv("mcp")

	res, out := c.call("spawn", map[string]any{"command": argv, "name": "delta", "prompt": "MCP-FIRST-PROMPT"})
	require.False(t, res.IsError, "%s", text(res))
	pane, _ := out["pane"].(string)
	require.Regexp(t, `^%\d+$`, pane)
	assert.Equal(t, "delta", out["name"])
	assert.NotEmpty(t, out["exchange"])
	waitFor(t, 20*time.Second, func() bool { return linesWith(t, log, "MCP-FIRST-PROMPT") > 0 }, "the MCP spawn's first prompt")

	// The same rules as the command: a taken name, an unknown profile.
	res, out = c.call("spawn", map[string]any{"command": []string{"cat"}, "name": "delta"})
	require.True(t, res.IsError, "%s", text(res))
	assert.Contains(t, out["error"], "held by pane "+pane)
	res, out = c.call("spawn", map[string]any{"profile": "nosuchagent"})
	require.True(t, res.IsError, "%s", text(res))
	assert.Equal(t, "not_found", out["class"])

	// send by name through MCP reaches it; stop removes it.
	res, _ = c.call("send", map[string]any{"to": "delta", "message": "MCP-BY-NAME"})
	require.False(t, res.IsError, "%s", text(res))
	waitFor(t, 20*time.Second, func() bool { return linesWith(t, log, "MCP-BY-NAME") > 0 }, "the send by name")
	res, out = c.call("stop", map[string]any{"target": "delta"})
	require.False(t, res.IsError, "%s", text(res))
	assert.Equal(t, pane, out["pane"])
	_, exists := w.paneDead(pane)
	assert.False(t, exists)
}

func TestSpawnRestartOnFailure(t *testing.T) {
	w := newWorld(t)
	orch := w.orchestrator()
	argv, log := w.lineReaderArgv("onfail")
	r := w.in(orch, append([]string{"spawn", "--name", "eps", "--restart", "on-failure", "--"}, argv...)...)
	require.Equal(t, 0, r.code, r.String())
	pane := strings.TrimSpace(r.stdout)
	pidOf := func() string { return strings.TrimSpace(w.tmux("display", "-p", "-t", pane, "#{pane_pid}")) }
	first := pidOf()
	var n int
	_, err := fmt.Sscan(first, &n)
	require.NoError(t, err)
	// Killed: a failure, so the watcher starts it again in the same pane, by itself.
	require.NoError(t, syscall.Kill(n, syscall.SIGKILL))
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(w.root, ".lifecycle", "*.log"))
			for _, l := range logs {
				t.Logf("%s:\n%s", l, readString(t, l))
			}
		}
	})
	waitFor(t, 30*time.Second, func() bool {
		d, exists := w.paneDead(pane)
		return exists && !d && pidOf() != first
	}, "the watcher to restart the program in %s", pane)
	s := w.in(orch, "send", "--to", "eps", "AFTER-WATCHED-RESTART")
	require.Equal(t, 0, s.code, s.String())
	waitFor(t, 20*time.Second, func() bool { return linesWith(t, log, "AFTER-WATCHED-RESTART") > 0 }, "the send after the restart")

	// A clean end (end of input, status 0) is the program's own: not restarted.
	w.tmux("send-keys", "-t", pane, "C-d")
	waitFor(t, 10*time.Second, func() bool { d, _ := w.paneDead(pane); return d }, "the reader to end")
	st := w.in(orch, "stop", "eps")
	require.Equal(t, 0, st.code, st.String())
	assert.Contains(t, st.stdout, "(dead)", "it stayed ended")
}
