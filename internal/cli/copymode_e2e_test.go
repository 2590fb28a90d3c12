package cli

// A person in copy mode takes no Enter away, against the real binary and a real tmux server: the
// Enter of a paste waits until the person leaves copy mode, the next message waits behind it, and a
// send --no-queue into such a pane fails saying that nothing of it was pasted.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2ECopyModeBeforeEnter: a person who enters copy mode between a paste and its Enter
// takes no Enter away: the Enter is refused inside tmux (the mode is checked in the Enter's own
// call), the delivery is not logged as submitted, the next message waits instead of joining that
// line, and once the person leaves copy mode the deliverer presses the Enter; the orchestrator
// gets both RESPONSE lines, each submitted on its own.
func TestE2ECopyModeBeforeEnter(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s1 := w.send(rec, worker, "first task")
	s2 := w.send(rec, worker, "second task")

	first := w.start(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=3s"}}, "notify", "--response", s1.Response, "--", "first answer")
	waitFor(t, 15*time.Second, func() bool {
		out := w.markRecord("PASTED", rec)
		return strings.TrimSpace(out) != ""
	}, "the first RESPONSE line's paste")
	w.tmux("copy-mode", "-t", rec)
	r := first.wait(t, time.Minute)
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "copy mode", "the notifier says why its line waits")
	assert.NotContains(t, w.exchangeEvents(s1.ID), "notified", "logged as delivered while its Enter went into copy mode")
	for _, it := range w.inboxItems(rec, "--all") {
		assert.NotEqual(t, "delivered", it["state"], "%v", it)
	}

	r = w.in(worker, "notify", "--response", s2.Response, "--", "second answer")
	requireCode(t, 0, r)
	assert.Contains(t, r.stderr, "queued")
	w.tmux("send-keys", "-t", rec, "-X", "cancel")

	waitFor(t, 20*time.Second, func() bool { return len(jsonLines(t, recLog)) >= 2 }, "both RESPONSE lines")
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 2, "%v", entries)
	for i, s := range []sent{s1, s2} {
		assert.Equal(t, true, entries[i]["enter"], "line %d submitted on its own: %v", i+1, entries)
		assert.Contains(t, entries[i]["paste"], s.Response)
		assert.Equal(t, 1, strings.Count(entries[i]["paste"].(string), "[RESPONSE"), "%v", entries)
	}
	for _, s := range []sent{s1, s2} {
		waitFor(t, 10*time.Second, func() bool { return slicesContains(w.exchangeEvents(s.ID), "notified") }, "%s recorded as notified", s.ID)
	}
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestE2ENoQueueIntoCopyMode: a pane whose last paste waits for its Enter because a person went
// into copy mode takes nothing more; send --no-queue into it fails saying what happened: nothing
// of this message was pasted, the pane is in copy mode. Before, the sender read "pasted into pane
// %N, Enter not pressed" about its own message, which was never pasted.
func TestE2ENoQueueIntoCopyMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rec, recLog := w.recorderPane()
	worker := w.catPane()
	s1 := w.send(rec, worker, "first task")

	first := w.start(call{pane: worker, env: []string{"WCOMM_ENTER_DELAY=3s"}}, "notify", "--response", s1.Response, "--", "first answer")
	waitFor(t, 15*time.Second, func() bool {
		out := w.markRecord("PASTED", rec)
		return strings.TrimSpace(out) != ""
	}, "the RESPONSE line's paste")
	w.tmux("copy-mode", "-t", rec)
	requireCode(t, 0, first.wait(t, time.Minute))

	r := w.in(worker, "send", "--no-queue", "--to", rec, "--", "a second task")
	requireCode(t, 1, r)
	assert.Contains(t, r.stderr, "nothing was pasted", "%s", r)
	assert.Contains(t, r.stderr, "copy mode", "%s", r)
	assert.NotContains(t, r.stderr, "pasted into pane", "the sender is told of a paste that never happened: %s", r)
	assert.NotContains(t, w.buffers(), "a second task")

	// Out of copy mode, the waiting line is submitted, and it alone reaches the recorder.
	w.tmux("send-keys", "-t", rec, "-X", "cancel")
	waitFor(t, 20*time.Second, func() bool { return len(jsonLines(t, recLog)) >= 1 }, "the RESPONSE line")
	waitNoDeliverer(t, w.root)
	entries := jsonLines(t, recLog)
	require.Len(t, entries, 1, "%v", entries)
	assert.NotContains(t, entries[0]["paste"], "a second task")
}
