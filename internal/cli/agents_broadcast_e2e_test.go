//go:build agents

package cli

// A broadcast into real agent TUIs: one send to four panes (two bash, Claude Code, Codex CLI),
// each given its request exactly once, and one await of the broadcast returning every answer
// labelled with its pane. The agents run against testdata/agents/mockmodel.py; they answer by the
// tool call the request asks for ("RUN: wcomm notify ..."), the bash panes by the test's notify.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentsBroadcast(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	orch := w.bashPane("")
	bash1, bash2 := w.bashPane(""), w.bashPane("")
	claude := w.agentPane("claude", installed, m)
	codex := w.agentPane("codex", installed, m)

	// notify without a reference answers the newest request addressed to its own pane. By the
	// binary's path: Codex runs its tool calls in a login shell, whose PATH is set afresh.
	tag := fmt.Sprintf("broadcast-%d", time.Now().UnixNano())
	body := "A broadcast to four panes: " + tag + ".\nRUN: " + w.bin + " notify 'the agent answers " + tag + "'"
	r := w.in(orch, "send", "--to", strings.Join([]string{bash1, claude, bash2, codex}, ","), "--", body)
	requireCode(t, 0, r)
	bid, ms := parseBroadcast(t, r.stdout)
	require.Len(t, ms, 4, "%s", r)
	byPane := map[string]member{}
	for _, mb := range ms {
		byPane[mb.pane] = mb
		files, _ := filepath.Glob(filepath.Join(mb.Dir, "*-request.md"))
		assert.Equal(t, []string{mb.Request}, files, "one request in the session of %s", mb.pane)
	}
	require.Len(t, byPane, 4)

	// The await of the broadcast waits on all four (an agent may have answered already).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	args := []string{"await", bid, "--timeout", "3m"}
	b := startBg(t, w.cmd(ctx, call{pane: orch}, args...), args, cancel)
	t.Cleanup(func() {
		if t.Failed() {
			// What the agents saw and did: their screens, and the model's last requests.
			for _, p := range []string{claude, codex} {
				t.Logf("screen of %s:\n%s", p, w.capture(p))
			}
			data, _ := os.ReadFile(filepath.Join(w.work, "requests.jsonl"))
			if len(data) > 6000 {
				data = data[len(data)-6000:]
			}
			t.Logf("the model's last requests:\n%s", data)
		}
	})
	for _, mb := range ms {
		mb := mb
		waitFor(t, 30*time.Second, func() bool {
			_, err := os.Stat(mb.Response)
			return err == nil || flocked(awaitLockIn(mb.Dir, mb.Seq))
		}, "the await to wait on %s", mb.ID)
	}
	// Each agent's model saw the request exactly once.
	for _, agent := range []string{"claude", "codex"} {
		waitFor(t, 2*time.Minute, func() bool { return len(promptsLike(t, m, agent, tag)) > 0 }, "%s's model to get the broadcast", agent)
	}
	for _, bash := range []string{bash1, bash2} {
		mb := byPane[bash]
		w.waitScreen(bash, "read it whole from "+mb.Request)
		w.settle(bash)
		assert.Equal(t, 1, w.pointerCount(bash, mb.Request), "%s got its request once", bash)
		requireCode(t, 0, w.in(bash, "notify", "--id", mb.ID, "--enter-delay", "50ms", "bash "+bash+" answers "+tag))
	}
	r = b.wait(t, 4*time.Minute)
	requireCode(t, 0, r)
	want := map[string]string{
		bash1:  "bash " + bash1 + " answers " + tag,
		bash2:  "bash " + bash2 + " answers " + tag,
		claude: "the agent answers " + tag,
		codex:  "the agent answers " + tag,
	}
	for pane, answer := range want {
		assert.Contains(t, r.stdout, fmt.Sprintf("--- %s %s\n%s\n", pane, byPane[pane].ID, answer), "the answer of %s, labelled", pane)
	}
	assert.Equal(t, 4, strings.Count(r.stdout, "\n--- ")+1, "four answers, no more: %s", r.stdout)
	// Still exactly once after the answers: a request typed twice would have shown by now.
	assert.Len(t, promptsLike(t, m, "claude", tag), 1, "Claude Code's model got the request once")
	assert.Len(t, promptsLike(t, m, "codex", tag), 1, "Codex's model got the request once")
}
