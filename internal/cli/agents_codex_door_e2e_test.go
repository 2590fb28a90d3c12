//go:build agents

package cli

// Delivery through Codex's own door, the app-server daemon its TUI is a client of, with the real
// Codex against the scripted model: idle with a person's draft in the box, mid-turn, during a tool
// call, and a 100 KB message. The model's prompt log is the ground truth of "once"; the delivery
// log says the route ("via": "socket", nothing pasted); the box says the draft was not touched.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
)

// onceFrom waits until the model has a prompt of agent holding text, then checks it came once.
func onceFrom(t *testing.T, m mockModel, agent, text string) viaPrompt {
	t.Helper()
	waitFor(t, time.Minute, func() bool { return len(promptsLike(t, m, agent, text)) > 0 }, "the model to receive %q", text)
	// A second copy would follow within moments of the first: look again a little later.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	got := promptsLike(t, m, agent, text)
	require.Len(t, got, 1, "exactly once: %q", text)
	return got[0]
}

// stopCodexDaemon ends the app-server daemon and its updater of a Codex home: they outlive the
// TUI by design. Both run from a copy of Codex under the home.
func stopCodexDaemon(home string) {
	if home == "" {
		return
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(data), home+"/") && strings.Contains(string(data), "app-server") {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}

// codexHomeOf is the HOME of the Codex TUI running in pane.
func codexHomeOf(t *testing.T, w *world, pane string) string {
	t.Helper()
	out := w.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")
	var panePID int
	_, err := fmt.Sscanf(strings.TrimSpace(out), "%d", &panePID)
	require.NoError(t, err)
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", panePID))
	require.NoError(t, err)
	for _, kv := range strings.Split(string(data), "\x00") {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	t.Fatalf("no HOME in the environment of pane %s", pane)
	return ""
}

func TestAgentsCodexDoor(t *testing.T) {
	installed := installAgents(t)
	w := newWorld(t)
	m := startModel(t, w.work)
	worker := w.bashPane("")
	pane := w.agentPaneEnv("codex", installed, m, []string{"CODEX_DAEMON=1"})
	home := codexHomeOf(t, w, pane)
	t.Cleanup(func() { stopCodexDaemon(home) })
	prof := profile.Defaults().Lookup("codex")
	client := &paneops.Client{Server: paneops.Server{Socket: w.sock}}
	box := func() []string {
		s, err := client.Screen(context.Background(), messages.PaneID(pane))
		require.NoError(t, err)
		return prof.Inspect(s).Lines
	}
	idle := func(what string) {
		waitFor(t, time.Minute, func() bool {
			s, err := client.Screen(context.Background(), messages.PaneID(pane))
			return err == nil && !prof.Inspect(s).Busy
		}, "%s", what)
	}
	busy := func(what string) {
		waitFor(t, 20*time.Second, func() bool {
			s, err := client.Screen(context.Background(), messages.PaneID(pane))
			return err == nil && prof.Inspect(s).Busy
		}, "%s", what)
	}

	// The pane's route: the daemon starts beside the TUI and the TUI's thread is made at start.
	var route string
	waitFor(t, time.Minute, func() bool {
		r := w.in(worker, "panes", "--json")
		requireCode(t, 0, r)
		var panes []struct {
			ID    string `json:"pane_id"`
			Route string `json:"route"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &panes))
		for _, p := range panes {
			if p.ID == pane {
				route = p.Route
			}
		}
		if route != "socket" {
			route = w.in(worker, "doctor", "--pane", pane).stdout
		}
		return route == "socket"
	}, "panes to show the route of %s through its app-server; doctor says:\n%s", pane, &route)
	r := w.in(worker, "doctor", "--pane", pane)
	requireCode(t, 0, r)
	assert.Regexp(t, `route: +socket: Codex 0\.\d+\.\d+ TUI \d+ in this pane shows thread \S+ of its app-server`, r.stdout)

	// A person's half-typed draft in the box.
	draft := "a person's draft, not to be sent yet"
	w.tmux("send-keys", "-t", pane, "-l", draft)
	w.waitScreen(pane, draft)
	require.Equal(t, []string{draft}, box())

	sendVia := func(body string) exchangeJSON {
		t.Helper()
		s := w.in(worker, "send", "--to", pane, "--json", "--", body)
		requireCode(t, 0, s)
		x := decode[exchangeJSON](t, s)
		via, ok := viaOf(exchangeEvents(t, x), "submitted")
		assert.True(t, ok, "%q was submitted", body)
		assert.Equal(t, "socket", via, "%q went through the door", body)
		_, pasted := viaOf(exchangeEvents(t, x), "pasted")
		assert.False(t, pasted, "nothing was pasted for %q", body)
		return x
	}

	// Idle, with the draft: the model gets the message once; the draft stays as it was.
	one := "door message one: to an idle Codex holding a draft"
	x := sendVia(one)
	onceFrom(t, m, "codex", one)
	sh := w.in(worker, "show", x.ID)
	requireCode(t, 0, sh)
	assert.Contains(t, sh.stdout, "via socket")
	assert.Contains(t, sh.stdout, "Codex's app-server")
	idle("the first turn to end")
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))

	// Mid-turn: the model holds a turn; a message sent meanwhile joins it and reaches the model once.
	sendVia("door message two: hold the turn\nSLEEP: 6")
	onceFrom(t, m, "codex", "door message two")
	busy("the held turn to show busy")
	sendVia("door message three: sent mid-turn")
	onceFrom(t, m, "codex", "door message three")
	idle("the held turn to end")
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))

	// During a tool call: the command is not cut short, and the message reaches the model once.
	marker := filepath.Join(w.work, "tool-call-ran")
	sendVia("door message four: run a slow command\nRUN: sleep 5 && touch " + marker)
	onceFrom(t, m, "codex", "door message four")
	busy("the tool call to show busy")
	sendVia("door message five: sent during the tool call")
	onceFrom(t, m, "codex", "door message five")
	idle("the tool call's turn to end")
	_, err := os.Stat(marker)
	assert.NoError(t, err, "the tool call ran to its end")
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))

	// A 100 KB message arrives whole, once.
	big := agentBody("codex door message six", 2)
	bx := sendVia(big)
	got := onceFrom(t, m, "codex", "codex door message six")
	assert.Equal(t, readDeliverySum(t, bx), sum12s(strings.TrimSpace(got.Prompt)), "the model got the message whole")
	idle("the big message's turn to end")

	// In order, each once.
	var order []string
	for _, p := range promptsLike(t, m, "codex", "door message ") {
		order = append(order, doorMessage.FindString(strings.ReplaceAll(p.Prompt, "codex door message", "door message")))
	}
	assert.Equal(t, []string{"door message one", "door message two", "door message three", "door message four",
		"door message five", "door message six"}, order)

	// The person's draft, untouched all along, is theirs to send: Enter sends it, once, intact.
	assert.Equal(t, []string{draft}, box(), "the draft is untouched; screen:\n%s", w.capture(pane))
	w.tmux("send-keys", "-t", pane, "Enter")
	p := onceFrom(t, m, "codex", "a person's draft")
	assert.Equal(t, draft, strings.TrimSpace(p.Prompt))
}

// readDeliverySum is the sha256 prefix the delivery log records for an exchange's content.
func readDeliverySum(t *testing.T, x exchangeJSON) string {
	t.Helper()
	for _, ev := range exchangeEvents(t, x) {
		if ev["state"] == "submitted" {
			d, _ := ev["detail"].(map[string]any)
			if s, ok := d["sha256"].(string); ok {
				return s
			}
		}
	}
	t.Fatalf("no submitted event with a sha256 for %s", x.ID)
	return ""
}
