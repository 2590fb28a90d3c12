package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2ESendNeverEntersDialog: a permission dialog that replaces the agent's input box right
// after a send's paste gets no Enter (any Enter there approves it). The send is not logged
// submitted and says why; the paste waits under the dialog, and once the person has answered the
// dialog and the box shows the paste again, recovery presses its Enter: the request is submitted
// once. The agent is paneops/testdata/fakeagent.py, which draws Claude Code's box and dialog and
// logs every byte it reads while the dialog shows.
func TestE2ESendNeverEntersDialog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	script, err := filepath.Abs(filepath.Join("..", "..", "paneops", "testdata", "fakeagent.py"))
	require.NoError(t, err)
	log := filepath.Join(w.work, "agent.jsonl")
	agent := w.pane("", "python3", script, log, "--dialog-on-paste", "replace")
	w.waitScreen(agent, "❯")

	r := w.in(orch, "send", "--to", agent, "--agent", "claude", "--json", "--", "a task for the agent")
	requireCode(t, 0, r) // queued: the message is safe in the outbox
	var x struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &x), "%s", r)
	assert.Equal(t, "pasted", x.State, "pasted, not submitted")
	assert.Contains(t, r.stdout, "a dialog is on screen (Bash rm -rf build)", "the send says why its Enter waits")
	assert.NotContains(t, w.exchangeEvents(x.ID), "submitted", "logged as submitted while the dialog showed")
	for _, e := range jsonLines(t, log) {
		assert.NotContains(t, e, "approved", "an Enter reached the dialog and approved it")
		if s, ok := e["dialog_read"].(string); ok {
			assert.NotContains(t, s, "\r", "an Enter reached the dialog")
		}
	}

	// The person denies at the terminal; the box shows the paste again and its Enter is pressed.
	w.tmux("send-keys", "-t", agent, "Escape")
	waitFor(t, 30*time.Second, func() bool {
		for _, e := range jsonLines(t, log) {
			if s, _ := e["submitted"].(string); strings.Contains(s, "a task for the agent") {
				return true
			}
		}
		return false
	}, "the request submitted once the dialog is gone")
	waitNoDeliverer(t, w.root)
	waitFor(t, 10*time.Second, func() bool { return slicesContains(w.exchangeEvents(x.ID), "submitted") }, "the request logged submitted")
	n := 0
	for _, e := range jsonLines(t, log) {
		assert.NotContains(t, e, "approved")
		if s, _ := e["submitted"].(string); strings.Contains(s, "a task for the agent") {
			n++
		}
	}
	assert.Equal(t, 1, n, "submitted once")
}
