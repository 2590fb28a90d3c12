package mailbox_test

import (
	"context"
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
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func TestPostToAReadyPaneDeliversAtOnce(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "list the failing tests")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.False(t, p.Queued)
	assert.Equal(t, messages.MailDelivered, p.Outcome)
	assert.Equal(t, exchange.ViaTyped, p.Via)
	assert.Empty(t, w.spawns(), "no deliverer for a pane that was ready")
	ds := w.pasted()
	require.Len(t, ds, 1)
	assert.Equal(t, messages.PaneID("%2"), ds[0].Pane)
	assert.Contains(t, string(ds[0].Content), "list the failing tests")
	assert.Equal(t, p.Mail.ID, ds[0].Mark, "the paste is marked in the pane with the mail's id")
	assert.True(t, ds[0].Strict, "a queued sender's delivery never waits on the pane")
	got := state(x)
	assert.Equal(t, exchange.StateSubmitted, got.State)
	assert.Equal(t, exchange.ViaTyped, got.Via)
	pend, _ := w.outbox("%2").Pending()
	assert.Empty(t, pend)
	noOutboxRecords(t, w, "%2")
}

// noOutboxRecords checks that the outbox of pane holds no mail and no outcome: a message
// delivered at once is recorded in its delivery log alone.
func noOutboxRecords(t *testing.T, w *world, pane string) {
	t.Helper()
	for _, d := range []string{store.OutboxQueueDir, store.OutboxDoneDir} {
		ents, err := os.ReadDir(w.outbox(pane).Path(d))
		require.NoError(t, err)
		assert.Empty(t, ents, "nothing written in %s for a message typed at once", d)
	}
}

// A busy pane never fails a send: the messages wait in its outbox, a deliverer is asked for each
// time, and the deliverer types them at the pane's next idle moment in the order sent, each once.
func TestQueuedMailIsDeliveredInOrderOnceWhenThePaneIsReady(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	var xs []*exchange.Exchange
	for i := range 3 {
		x, m := w.request("%2", "task "+string(rune('a'+i)))
		p, err := w.post(m)
		require.NoError(t, err, "a busy pane never fails a send")
		assert.True(t, p.Queued)
		assert.Contains(t, p.Reason, "busy")
		assert.Equal(t, exchange.StateQueued, state(x).State)
		assert.Equal(t, exchange.StatusPending, state(x).Status)
		xs = append(xs, x)
	}
	assert.Equal(t, []messages.PaneID{"%2", "%2", "%2"}, w.spawns(), "each queuing asks for a deliverer (one runs: its lock)")
	pend, _ := w.outbox("%2").Pending()
	require.Len(t, pend, 3)
	before := len(w.pasted())

	w.setBusy("%2", false)
	w.drain("%2")
	typed := w.typed()[before:]
	require.Len(t, typed, 3)
	for i, c := range typed {
		assert.Contains(t, c, "task "+string(rune('a'+i)), "in the order sent")
	}
	for _, x := range xs {
		assert.Equal(t, exchange.StateSubmitted, state(x).State)
	}
	// Nothing is delivered twice, whoever runs next.
	w.drain("%2")
	_, m := w.request("%3", "elsewhere")
	_, err := w.post(m)
	require.NoError(t, err)
	assert.Len(t, w.pasted(), before+4)
}

// A sender to a pane whose outbox has mail waiting sends that first, then its own: order holds
// without a deliverer.
func TestPostDeliversWhatWaitsAheadFirst(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	_, first := w.request("%2", "first")
	_, err := w.post(first)
	require.NoError(t, err)
	w.setBusy("%2", false)
	_, second := w.request("%2", "second")
	p, err := w.post(second)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, p.Outcome)
	typed := w.typed()
	require.Len(t, typed, 2)
	assert.Contains(t, typed[0], "first")
	assert.Contains(t, typed[1], "second")
}

func TestRESPONSELinesWaitingTogetherAreOnePaste(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%1", true)
	var paths []string
	for _, worker := range []string{"%2", "%3", "%4"} {
		x, m := w.request(worker, "task for "+worker)
		_, err := w.post(m)
		require.NoError(t, err)
		p, err := w.post(w.answer(state(x), "answer"))
		require.NoError(t, err)
		assert.True(t, p.Queued, "the orchestrator is busy")
		evs := state(x).Events
		assert.Equal(t, exchange.StateNotifyQueued, evs[len(evs)-1].State)
		paths = append(paths, x.ResponsePath)
	}
	before := len(w.pasted())
	w.setBusy("%1", false)
	w.drain("%1")
	typed := w.pasted()[before:]
	require.Len(t, typed, 1, "three RESPONSE lines, one paste")
	lines := strings.Split(string(typed[0].Content), "\n")
	require.Len(t, lines, 3)
	for i, p := range paths {
		assert.True(t, strings.HasPrefix(lines[i], "[RESPONSE "), lines[i])
		assert.True(t, strings.HasSuffix(lines[i], p), lines[i])
	}
}

// Mail no longer wanted ends without typing: a RESPONSE line whose response an await returned,
// a request whose exchange was answered meanwhile.
func TestUnwantedMailIsSuperseded(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%1", true)
	w.setBusy("%2", true)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	line := w.answer(state(x), "answer")
	_, err = w.post(line)
	require.NoError(t, err)
	// An await returned the response while the line waited.
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateRead, nil, time.Now()))
	before := len(w.pasted())
	w.setBusy("%1", false)
	w.setBusy("%2", false)
	w.drain("%1")
	w.drain("%2")
	assert.Len(t, w.pasted(), before, "nothing typed")
	res, err := w.office.Inbox(context.Background(), inboxAll("%1"))
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, messages.MailSuperseded, res.Items[0].State)
	assert.Contains(t, res.Items[0].Detail, "await")
	res, err = w.office.Inbox(context.Background(), inboxAll("%2"))
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, messages.MailSuperseded, res.Items[0].State)
	assert.Contains(t, res.Items[0].Detail, "answered")
}

// An await holding its lock on the exchange supersedes the RESPONSE line too: it wakes on the file.
func TestRESPONSELineForAWaitingAwaitIsNotTyped(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	unlock, err := lock.File(filepath.Join(x.Dir, messages.AwaitLockName(x.Seq)), syscall.LOCK_SH, time.Second)
	require.NoError(t, err)
	defer unlock()
	before := len(w.pasted())
	p, err := w.post(w.answer(state(x), "answer"))
	require.NoError(t, err)
	assert.Equal(t, messages.MailSuperseded, p.Outcome)
	assert.Len(t, w.pasted(), before)
}

// Another process delivering to the pane holds its drain lock: a sender does not wait on it, its
// message is queued and a deliverer asked for.
func TestPostQueuesBehindAnotherDelivery(t *testing.T) {
	w := newWorld(t)
	ob := w.outbox("%2")
	unlock, err := lock.File(ob.Path(store.DrainLockName), syscall.LOCK_EX, time.Second)
	require.NoError(t, err)
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	unlock()
	require.NoError(t, err)
	assert.True(t, p.Queued)
	assert.Contains(t, p.Reason, "another delivery")
	assert.Equal(t, []messages.PaneID{"%2"}, w.spawns())
	assert.Empty(t, w.pasted())
	w.drain("%2")
	assert.Len(t, w.pasted(), 1)
	assert.Equal(t, exchange.StateSubmitted, state(x).State)
}

// With NoQueue a message is delivered now or ends undeliverable with the error: it never waits.
func TestNoQueueDeliversNowOrFails(t *testing.T) {
	w := newWorld(t)
	w.cfg.NoQueue = true
	w.setBusy("%2", true) // strict deliveries only: a fail-fast one waits BusyWait itself
	x, m := w.request("%2", "now")
	p, err := w.post(m)
	require.NoError(t, err)
	assert.Equal(t, messages.MailDelivered, p.Outcome)
	require.Len(t, w.pasted(), 1)
	assert.False(t, w.pasted()[0].Strict)
	assert.Equal(t, exchange.StateSubmitted, state(x).State)

	w.tmux.Mu.Lock()
	w.tmux.Refuse["%3"] = true
	w.tmux.Mu.Unlock()
	y, m := w.request("%3", "refused")
	p, err = w.post(m)
	require.ErrorIs(t, err, paneops.ErrRefused)
	assert.Equal(t, messages.MailUndeliverable, p.Outcome)
	assert.Empty(t, w.spawns(), "nothing waits")
	pend, _ := w.outbox("%3").Pending()
	assert.Empty(t, pend)
	assert.Equal(t, exchange.StatusUndelivered, state(y).Status)
	assert.Equal(t, exchange.StateRefused, state(y).State)
}

func TestPostToADeadPaneIsUndeliverable(t *testing.T) {
	w := newWorld(t)
	w.tmux.Mu.Lock()
	p2 := w.tmux.PaneMap["%2"]
	p2.Dead = true
	w.tmux.PaneMap["%2"] = p2
	w.tmux.Mu.Unlock()
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.ErrorIs(t, err, paneops.ErrRefused)
	assert.Contains(t, err.Error(), "dead")
	assert.Equal(t, messages.MailUndeliverable, p.Outcome)
	assert.Empty(t, w.tmux.Delivered(), "nothing is tried")
	assert.Equal(t, exchange.StateUndeliverable, state(x).State)
}

// A paste whose Enter failed ends undeliverable, and what was pasted is never typed again.
func TestPastedButNotSubmittedEndsUndeliverable(t *testing.T) {
	w := newWorld(t)
	w.tmux.Result = func(d paneops.Delivery) (paneops.DeliveryResult, error) {
		return paneops.DeliveryResult{Pasted: true, Evidence: "the box still holds the text", Enters: 2}, paneops.ErrNotSubmitted
	}
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.Len(t, w.tmux.Delivered(), 1)
	require.ErrorIs(t, err, paneops.ErrNotSubmitted)
	assert.Equal(t, messages.MailUndeliverable, p.Outcome)
	got := state(x)
	assert.Equal(t, exchange.StatusUndelivered, got.Status)
	assert.Equal(t, exchange.StateUndelivered, got.State)
	o, err := w.outbox("%2").Outcome(p.Mail.ID)
	require.NoError(t, err)
	assert.Equal(t, "paste", o.Via)
	w.tmux.Result = w.result
	w.drain("%2")
	assert.Empty(t, w.pasted(), "not typed again")
	st, err := os.Stat(w.outbox("%2").Path(store.InflightName))
	require.NoError(t, err)
	assert.Zero(t, st.Size(), "the in-flight record is cleared once the outcome is written")
}

// A late "queued" event (a sender that gave up on the lock logs it after the delivery it lost
// to) does not make a delivered exchange look queued; a queued event of a new mail does.
func TestLateQueuedEventKeepsTheDelivery(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	require.Equal(t, exchange.StateSubmitted, state(x).State)
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateQueued, map[string]string{"mail": p.Mail.ID, "reason": "another delivery"}, time.Now()))
	assert.Equal(t, exchange.StateSubmitted, state(x).State, "still delivered")
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateQueued, map[string]string{"mail": "01795573754248449989-0000", "reason": "busy"}, time.Now()))
	assert.Equal(t, exchange.StateQueued, state(x).State)
}

// A deliverer that cannot start is reported with what still delivers the message, naming only
// ways that exist.
func TestDelivererStartFailureSaysWhatStillDelivers(t *testing.T) {
	w := newWorld(t)
	w.cfg.Helpers.Deliverer = func(server, socket string, pane messages.PaneID) error { return os.ErrPermission }
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err, "the message is queued all the same")
	assert.True(t, p.Queued)
	assert.Contains(t, p.Reason, "an inbox run in it")
	assert.NotContains(t, p.Reason, "wcomm deliver")
	ob, err := mailbox.OpenOutbox(w.root, w.srv.Key(), "%2", false)
	require.NoError(t, err)
	err = w.office.EnsureDeliverer(ob, "")
	require.ErrorIs(t, err, os.ErrPermission)
}
