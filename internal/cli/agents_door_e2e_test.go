//go:build agents

package cli

// Delivery through Claude Code's own door, its messaging socket, with the real Claude Code against
// the scripted model: with a person's draft in the box, mid-turn, and with the socket gone. The
// model's prompt log is the ground truth (it marks what came through the socket "via": "socket").

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// viaPrompt is a prompt log line with its route.
type viaPrompt struct {
	Prompt string `json:"prompt"`
	Agent  string `json:"agent"`
	Via    string `json:"via"`
}

// promptsLike returns the logged prompts of agent that hold text.
func promptsLike(t *testing.T, m mockModel, agent, text string) []viaPrompt {
	t.Helper()
	data, err := os.ReadFile(m.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []viaPrompt
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(line, "\n") || strings.TrimSpace(line) == "" {
			continue // a line still being written
		}
		var p viaPrompt
		require.NoError(t, json.Unmarshal([]byte(line), &p))
		if p.Agent == agent && strings.Contains(p.Prompt, text) {
			out = append(out, p)
		}
	}
	return out
}

// onceVia waits until the model has the prompt holding text, then checks it came exactly once,
// by the route via ("socket", or "" for typed).
func onceVia(t *testing.T, m mockModel, text, via string) {
	t.Helper()
	waitFor(t, 30*time.Second, func() bool { return len(promptsLike(t, m, "claude", text)) > 0 }, "the model to receive %q", text)
	// A second copy would follow within moments of the first: look again a little later.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	got := promptsLike(t, m, "claude", text)
	require.Len(t, got, 1, "exactly once: %q", text)
	assert.Equal(t, via, got[0].Via, "the route the model saw")
}

// exchangeEvents is the delivery log of an exchange.
func exchangeEvents(t *testing.T, x exchangeJSON) []map[string]any {
	return jsonLines(t, filepath.Join(x.Dir, fmt.Sprintf("%03d-delivery.jsonl", x.Seq)))
}

// viaOf is the "via" of the log's first event in state.
func viaOf(evs []map[string]any, state string) (string, bool) {
	for _, ev := range evs {
		if ev["state"] == state {
			d, _ := ev["detail"].(map[string]any)
			v, _ := d["via"].(string)
			return v, true
		}
	}
	return "", false
}

// claudeSocket is the messaging socket path the pane's Claude Code session file names.
func claudeSocket(t *testing.T, w *world, installed, pane string) string {
	t.Helper()
	out := w.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")
	var panePID int
	_, err := fmt.Sscanf(strings.TrimSpace(out), "%d", &panePID)
	require.NoError(t, err)
	var sock string
	waitFor(t, 30*time.Second, func() bool {
		tab, err := proc.Scan()
		if err != nil {
			return false
		}
		// The pane's own process is Claude Code itself (start-agent.sh execs it), or one below it.
		pids := []int{panePID}
		for _, p := range tab.Descendants(panePID) {
			pids = append(pids, p.PID)
		}
		for _, pid := range pids {
			files, _ := filepath.Glob(filepath.Join(installed, "homes", "claude-*", ".claude", "sessions", fmt.Sprintf("%d.json", pid)))
			for _, f := range files {
				var s struct {
					Tmux   string `json:"tmux"`
					Socket string `json:"messagingSocketPath"`
				}
				data, err := os.ReadFile(f)
				if err == nil && json.Unmarshal(data, &s) == nil && strings.HasSuffix(s.Tmux, "."+pane) && s.Socket != "" {
					sock = s.Socket
					return true
				}
			}
		}
		return false
	}, "the session file of the Claude Code in %s", pane)
	return sock
}

// closeDoor removes the messaging socket of the pane's Claude Code, so what follows is typed, as
// for an agent without a door of its own: the tests of typing into Claude Code use it.
func closeDoor(t *testing.T, w *world, installed, pane string) {
	t.Helper()
	require.NoError(t, os.Remove(claudeSocket(t, w, installed, pane)))
}

// doorMessage names a message of the test in a prompt (after the request's header line).
var doorMessage = regexp.MustCompile(`door message \w+`)

func TestAgentsClaudeSocket(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	worker := w.bashPane("")
	pane := w.agentPane("claude", installed, m)
	prof := profile.Defaults().Lookup("claude")
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	box := func() []string {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		require.NoError(t, err)
		return prof.Inspect(s).Lines
	}
	sock := claudeSocket(t, w, installed, pane)

	// A person's half-typed draft in the box.
	draft := "a person's draft, not to be sent"
	w.tmux("send-keys", "-t", pane, "-l", draft)
	w.waitScreen(pane, draft)
	require.Equal(t, []string{draft}, box())

	// A send reaches the model at once, exactly once, the draft untouched.
	body := "door message one: a request through the socket"
	s := w.in(worker, "send", "--to", pane, "--json", "--", body)
	requireCode(t, 0, s)
	x := decode[exchangeJSON](t, s)
	onceVia(t, m, body, "socket")
	via, ok := viaOf(exchangeEvents(t, x), "submitted")
	assert.True(t, ok, "the send was submitted")
	assert.Equal(t, "socket", via)
	_, pasted := viaOf(exchangeEvents(t, x), "pasted")
	assert.False(t, pasted, "nothing was pasted")
	sh := w.in(worker, "show", x.ID)
	requireCode(t, 0, sh)
	assert.Contains(t, sh.stdout, "via socket")
	waitFor(t, 30*time.Second, func() bool {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		return err == nil && !prof.Inspect(s).Busy
	}, "the turn to end")
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))

	// The pane's route and the agent's own state, as panes and doctor show them.
	// (Claude Code writes its status once a turn has run.)
	var route, status string
	waitFor(t, 10*time.Second, func() bool {
		r := w.in(worker, "panes", "--json")
		requireCode(t, 0, r)
		var panes []struct {
			ID          string `json:"pane_id"`
			Route       string `json:"route"`
			AgentStatus string `json:"agent_status"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &panes))
		for _, p := range panes {
			if p.ID == pane {
				route, status = p.Route, p.AgentStatus
			}
		}
		return status == "idle"
	}, "panes to say the agent is idle (route %q, status %q)", &route, &status)
	assert.Equal(t, "socket", route)
	r := w.in(worker, "doctor", "--pane", pane)
	requireCode(t, 0, r)
	assert.Regexp(t, `route: +socket: Claude Code 2\.1\.\d+ session \d+ in this pane has a messaging socket`, r.stdout)

	// A notify: Claude Code is the orchestrator of an exchange with the bash worker; the worker's
	// answer's RESPONSE line reaches the model through the socket, the draft still untouched.
	o := w.in(pane, "send", "--to", worker, "--json", "--", "a task for the shell worker")
	requireCode(t, 0, o)
	ox := decode[exchangeJSON](t, o)
	n := w.in(worker, "notify", "--response", ox.ResponsePath, "the answer")
	requireCode(t, 0, n)
	assert.Contains(t, n.stderr, "via socket")
	onceVia(t, m, ox.ResponsePath, "socket")
	via, ok = viaOf(exchangeEvents(t, ox), "notified")
	assert.True(t, ok, "the RESPONSE line was delivered")
	assert.Equal(t, "socket", via)
	waitFor(t, 30*time.Second, func() bool {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		return err == nil && !prof.Inspect(s).Busy
	}, "the turn to end")
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))

	// Mid-turn: the model holds a turn for 15 s; a message sent meanwhile reaches it once, after
	// the turn. That it is sent mid-turn is told by the time since the model took the turn's
	// message, not by Claude Code's screen: under the load of a CI pass of every agent, its
	// busy line was not read within 10 s twice in four passes.
	hold := w.in(worker, "send", "--to", pane, "--json", "--", "door message two: hold the turn\nSLEEP: 15")
	requireCode(t, 0, hold)
	onceVia(t, m, "door message two", "socket")
	heldSince := time.Now()
	mid := "door message three: sent mid-turn"
	r = w.in(worker, "send", "--to", pane, "--json", "--", mid)
	requireCode(t, 0, r)
	require.Less(t, time.Since(heldSince), 12*time.Second, "message three went while the model still held turn two")
	via, _ = viaOf(exchangeEvents(t, decode[exchangeJSON](t, r)), "submitted")
	assert.Equal(t, "socket", via, "written at once, though the agent is busy")
	onceVia(t, m, mid, "socket")
	var order []string
	for _, p := range promptsLike(t, m, "claude", "door message ") {
		order = append(order, doorMessage.FindString(p.Prompt))
	}
	assert.Equal(t, []string{"door message one", "door message two", "door message three"}, order, "after the running turn, in order")
	waitFor(t, 30*time.Second, func() bool {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		return err == nil && !prof.Inspect(s).Busy
	}, "the turns to end")
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))

	// The socket gone: typed delivery, exactly once, as before (the person clears the draft first:
	// typing never goes over a person's text).
	w.tmux("send-keys", "-t", pane, "-N", fmt.Sprint(len(draft)), "BSpace")
	waitFor(t, 10*time.Second, func() bool { return len(box()) == 0 }, "the box to be empty")
	require.NoError(t, os.Remove(sock))
	r = w.in(worker, "doctor", "--pane", pane)
	requireCode(t, 0, r)
	assert.Regexp(t, `route: +typed: Claude Code session \d+: messaging socket \S+: gone`, r.stdout)
	last := "door message four: typed, the socket gone"
	r = w.in(worker, "send", "--to", pane, "--json", "--", last)
	requireCode(t, 0, r)
	lx := decode[exchangeJSON](t, r)
	waitFor(t, time.Minute, func() bool { return !readDelivery(t, lx).submitted.IsZero() }, "the typed message to be submitted")
	onceVia(t, m, last, "")
	_, pasted = viaOf(exchangeEvents(t, lx), "pasted")
	assert.True(t, pasted, "typed")
	sh = w.in(worker, "show", lx.ID)
	requireCode(t, 0, sh)
	assert.Contains(t, sh.stdout, ", typed")
}
