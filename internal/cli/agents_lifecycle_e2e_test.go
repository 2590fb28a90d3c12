//go:build agents

package cli

// wcomm spawn and restart with the real Claude Code against the scripted model: ready, the first
// prompt at the model exactly once, a send by name, and after its process is killed, a restart in
// the same pane whose next request carries the earlier conversation (--session-id at spawn,
// --resume at the restart).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestsHolding returns the model's logged request bodies whose messages hold text.
func requestsHolding(t *testing.T, path, text string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(line, "\n") || strings.TrimSpace(line) == "" {
			continue
		}
		var r struct {
			Body struct {
				Messages json.RawMessage `json:"messages"`
			} `json:"body"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && strings.Contains(string(r.Body.Messages), text) {
			out = append(out, string(r.Body.Messages))
		}
	}
	return out
}

// killByHome ends every process of this user whose HOME is home, and waits for them to be gone.
func killByHome(home string) {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
			pids = append(pids, pid)
		}
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	allGone(pids, 10*time.Second)
}

func TestAgentsSpawnClaudeAndRestart(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	orch := w.catPane()
	script, err := filepath.Abs(filepath.Join(agentsDir, "start-agent.sh"))
	require.NoError(t, err)
	// One home for both starts: the conversation is kept there.
	home := filepath.Join(w.work, "claude-home")
	require.NoError(t, os.Mkdir(home, 0o700))
	// Registered before the panes' cleanups, so it runs after them: a process the first,
	// killed start left behind (reparented, out of the pane's tree) may still write there.
	t.Cleanup(func() { killByHome(home) })
	work := filepath.Join(w.work, "work-claude")

	first := "spawned first prompt kq7"
	began := time.Now()
	r := w.in(orch, "spawn", "--name", "alpha", "--agent", "claude", "--env", "AGENT_HOME="+home,
		"--ready-timeout", "5m", "--prompt", first, "--json", "--", "bash", script, "claude", installed, work, m.port)
	require.Equal(t, 0, r.code, r.String())
	var sp map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sp))
	pane := sp["pane"].(string)
	t.Cleanup(func() { killPaneTree(w, pane) })
	assert.Equal(t, "claude", sp["agent"])
	assert.NotEmpty(t, sp["conversation"], "a session id given at spawn")
	t.Logf("spawn -> ready: %s (%v); -> returned with the prompt sent: %s", time.Duration(sp["ready_after_ns"].(float64)), sp["ready"], time.Since(began))
	onceVia(t, m, first, "socket")
	t.Logf("spawn -> first prompt at the model: %s", time.Since(began))

	second := "by name before restart kq7"
	s := w.in(orch, "send", "--to", "alpha", second)
	require.Equal(t, 0, s.code, s.String())
	waitFor(t, time.Minute, func() bool { return len(promptsLike(t, m, "claude", second)) > 0 }, "the send by name")

	// Kill Claude Code: the pane stays, dead; restart brings it back in the same pane.
	pid, err := strconv.Atoi(strings.TrimSpace(w.tmux("display", "-p", "-t", pane, "#{pane_pid}")))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	waitFor(t, 30*time.Second, func() bool { d, _ := w.paneDead(pane); return d }, "the pane to be dead")
	re := w.in(orch, "restart", "alpha", "--ready-timeout", "5m", "--json")
	require.Equal(t, 0, re.code, re.String())
	var rs map[string]any
	require.NoError(t, json.Unmarshal([]byte(re.stdout), &rs))
	assert.Equal(t, pane, rs["pane"])
	assert.Equal(t, sp["conversation"], rs["resumed"])

	third := "after restart kq7"
	s = w.in(orch, "send", "--to", "alpha", third)
	require.Equal(t, 0, s.code, s.String())
	waitFor(t, time.Minute, func() bool { return len(requestsHolding(t, filepath.Join(w.work, "requests.jsonl"), third)) > 0 }, "the request after the restart")
	for _, body := range requestsHolding(t, filepath.Join(w.work, "requests.jsonl"), third) {
		assert.Contains(t, body, first, "the request after the restart carries the earlier conversation")
	}
}

func TestAgentsSpawnFourAtOnce(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	orch := w.catPane()
	script, err := filepath.Abs(filepath.Join(agentsDir, "start-agent.sh"))
	require.NoError(t, err)
	type spawn struct {
		name, agent, prompt string
		argv                []string
		log                 string
	}
	var spawns []spawn
	for _, agent := range []string{"claude", "codex"} {
		spawns = append(spawns, spawn{name: "ag-" + agent, agent: agent, prompt: "four at once to " + agent + " zp4",
			argv: []string{"--agent", agent, "--", "bash", script, agent, installed, filepath.Join(w.work, "work-"+agent), m.port}})
	}
	for i := range 2 {
		argv, log := w.lineReaderArgv(fmt.Sprint(i))
		spawns = append(spawns, spawn{name: fmt.Sprintf("plain%d", i), prompt: fmt.Sprintf("four at once to plain%d zp4", i),
			argv: append([]string{"--"}, argv...), log: log})
	}
	runs := make([]*bg, len(spawns))
	began := time.Now()
	for i, s := range spawns {
		runs[i] = w.start(call{pane: orch}, append([]string{"spawn", "--name", s.name, "--ready-timeout", "5m", "--prompt", s.prompt, "--json"}, s.argv...)...)
	}
	for i, s := range spawns {
		r := runs[i].wait(t, 6*time.Minute)
		require.Equal(t, 0, r.code, r.String())
		var sp map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &sp))
		pane := sp["pane"].(string)
		t.Cleanup(func() { killPaneTree(w, pane) })
		t.Logf("%s: ready after %s (%v); spawn returned after %s", s.name, time.Duration(sp["ready_after_ns"].(float64)), sp["ready"], time.Since(began))
	}
	for _, s := range spawns {
		if s.agent == "" {
			waitFor(t, time.Minute, func() bool { return linesWith(t, s.log, s.prompt) > 0 }, "%s's first prompt", s.name)
			continue
		}
		waitFor(t, 2*time.Minute, func() bool { return len(promptsLike(t, m, s.agent, s.prompt)) > 0 }, "%s's first prompt at the model", s.name)
		t.Logf("%s: first prompt at the model %s after the spawns began", s.name, time.Since(began))
	}
	// A prompt typed twice would follow within moments: look again a little later.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	for _, s := range spawns {
		if s.agent == "" {
			assert.Equal(t, 1, linesWith(t, s.log, s.prompt), "%s: exactly once", s.name)
			continue
		}
		assert.Len(t, promptsLike(t, m, s.agent, s.prompt), 1, "%s: exactly once", s.name)
		for _, o := range spawns {
			if o.name != s.name {
				assert.Empty(t, promptsLike(t, m, s.agent, o.prompt), "%s got %s's prompt", s.name, o.name)
			}
		}
	}
}
