package cli

// Output before state, against the real binary and a real tmux server: an await or a hook whose
// stdout is full hands nothing over, and the response or the message waits for the next one.

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runToFull runs wcomm with its stdout on /dev/full, where every write fails (ENOSPC).
func (w *world) runToFull(c call, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	require.NoError(w.t, err)
	defer full.Close()
	cmd := w.cmd(ctx, c, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	return finish(w.t, args, cmd.Run(), &bytes.Buffer{}, &stderr)
}

// TestE2EOutputBeforeState: what hands a message over is its output, so a state that says it
// was handed over is written only after that output succeeded. An await whose stdout is full
// fails and leaves the response unread (the next plain await returns it); a hook whose stdout is
// full takes nothing (the message still waits, and the next hook hands it over). Before, the
// exchange was marked read and the message recorded as delivered via the hook.
func TestE2EOutputBeforeState(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch, hooks := w.hostBashPane() // the agent's hooks run in its pane
	worker := w.catPane()

	s := w.send(orch, worker, "a task")
	requireCode(t, 0, w.in(worker, "notify", "--response", s.Response, "--", "the answer"))
	w.waitScreen(orch, "# [RESPONSE")
	r := w.runToFull(call{pane: orch}, "await", s.ID)
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "no space left on device")
	assert.NotContains(t, w.exchangeEvents(s.ID), "read")
	r = w.in(orch, "await", "--timeout", "5s")
	requireCode(t, 0, r)
	assert.Equal(t, "the answer\n", r.stdout, "the plain await finds the response still unread")

	s = w.send(orch, worker, "another task")
	w.tmux("copy-mode", "-t", orch) // someone reads the pane: the line waits
	requireCode(t, 0, w.in(worker, "notify", "--response", s.Response, "--", "answer"))
	stop := []byte(`{"hook_event_name":"Stop","stop_hook_active":false}`)
	r = w.runInPaneTo(hooks, "/dev/full", "", stop, nil, "hook", "--agent", "claude").wait(t, time.Minute)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "nothing was taken")
	items := w.inboxItems(orch, "--peek")
	require.Len(t, items, 1, "still waiting: %v", items)
	r = w.hookIn(hooks, nil, stop, "hook", "--agent", "claude")
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, s.Response)
	// The first RESPONSE line was typed in as it was sent: its exchange's log has it, not the
	// outbox. The second waited there and went through the hook.
	all := w.inboxItems(orch, "--all")
	require.Len(t, all, 1, "%v", all)
	assert.Equal(t, "hook", all[0]["via"])
}
