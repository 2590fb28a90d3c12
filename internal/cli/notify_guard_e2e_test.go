package cli

// The guard a notifier starts before its paste, against the real binary and a real tmux server:
// a notifier killed between its paste and its Enter still gets its RESPONSE line submitted, once.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EKilledNotifier: a notifier killed with SIGKILL between its paste and its Enter leaves
// a guard behind, started before the paste and asleep until the notifier ends, that becomes the
// pane's deliverer and presses the Enter: the orchestrator gets its RESPONSE line exactly once
// without any other message to its pane. Before, nothing came until some other message went to
// that pane.
func TestE2EKilledNotifier(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s := w.send(rec, worker, "a task")

	n := w.start(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=5s"}}, "notify", "--response", s.Response, "--", "the answer")
	waitFor(t, 15*time.Second, func() bool {
		out := w.markRecord("PASTED", rec)
		return strings.TrimSpace(out) != ""
	}, "the notifier's paste")
	// Checked before the kill: once the notifier is dead its guard may press the Enter at once.
	require.Empty(t, jsonLines(t, recLog), "paste seen, Enter still 5 s away: nothing submitted yet")
	require.NoError(t, n.cmd.Process.Kill())
	r := n.wait(t, time.Minute)
	require.Equal(t, -1, r.code, "killed: %s", r)

	waitFor(t, 30*time.Second, func() bool { return len(jsonLines(t, recLog)) >= 1 }, "the RESPONSE line's Enter")
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 1, "%v", entries)
	assert.Equal(t, true, entries[0]["enter"])
	assert.Contains(t, entries[0]["paste"], s.Response)
	waitFor(t, 10*time.Second, func() bool { return slicesContains(w.exchangeEvents(s.ID), "notified") }, "the exchange recorded as notified")
}
