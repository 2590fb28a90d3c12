package mailbox_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func inboxAll(pane string) mailbox.InboxOptions {
	return mailbox.InboxOptions{Pane: messages.PaneID(pane), All: true}
}

func mailboxTake(pane string) mailbox.InboxOptions {
	return mailbox.InboxOptions{Pane: messages.PaneID(pane), Take: true, Via: "hook"}
}

// queuedLine leaves a RESPONSE line waiting in the busy orchestrator's outbox.
func queuedLine(t *testing.T, w *world) *exchange.Exchange {
	t.Helper()
	w.setBusy("%1", true)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	p, err := w.post(w.answer(state(x), "answer"))
	require.NoError(t, err)
	require.True(t, p.Queued)
	return x
}

// Two takers at once: one gets the mail, it ends delivered via the taker, and no deliverer types it.
func TestInboxTakesOnce(t *testing.T) {
	w := newWorld(t)
	x := queuedLine(t, w)
	ctx := context.Background()

	peek, err := w.office.Inbox(ctx, mailbox.InboxOptions{})
	require.NoError(t, err)
	assert.Equal(t, messages.PaneID("%1"), peek.Pane, "the caller's own pane")
	require.Len(t, peek.Items, 1)
	assert.Equal(t, "waiting", peek.Items[0].State)
	assert.Contains(t, peek.Items[0].Text, x.ResponsePath)
	assert.Equal(t, messages.MailResponse, peek.Items[0].Kind)

	var wg sync.WaitGroup
	taken := make([]int, 2)
	for i := range taken {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := w.office.Inbox(ctx, mailbox.InboxOptions{Take: true, Via: "hook"})
			assert.NoError(t, err)
			taken[i] = res.Taken
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, taken[0]+taken[1])
	before := len(w.pasted())
	w.setBusy("%1", false)
	w.drain("%1")
	assert.Len(t, w.pasted(), before, "taken by a hook: never typed")
	evs := state(x).Events
	assert.Equal(t, exchange.StateNotified, evs[len(evs)-1].State)
	assert.Equal(t, "hook", evs[len(evs)-1].Detail["via"])

	all, err := w.office.Inbox(ctx, inboxAll("%1"))
	require.NoError(t, err)
	require.Len(t, all.Items, 1)
	assert.Equal(t, messages.MailDelivered, all.Items[0].State)
	assert.Equal(t, "hook", all.Items[0].Via)
	assert.NotNil(t, all.Items[0].EndedAt)
}

// A taker whose output fails takes nothing: the mail still waits, and is typed later.
func TestInboxWhoseOutputFailsTakesNothing(t *testing.T) {
	w := newWorld(t)
	queuedLine(t, w)
	var shown []mailbox.InboxItem
	_, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{Take: true, Via: "inbox", Show: func(items []mailbox.InboxItem) error {
		shown = items
		return errors.New("stdout closed")
	}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing was taken")
	require.Len(t, shown, 1)
	pend, _ := w.outbox("%1").Pending()
	assert.Len(t, pend, 1, "it still waits")

	res, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{Take: true, Via: "inbox", Show: func([]mailbox.InboxItem) error { return nil }})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Taken)
	require.Len(t, res.Items, 1)
	assert.Equal(t, messages.MailDelivered, res.Items[0].State)
	assert.Equal(t, "inbox", res.Items[0].Via)
}

// A request taken by an inbox reads as the line that points at its file.
func TestInboxHandsARequestAsItsPointerLine(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	x, m := w.request("%2", "the task")
	_, err := w.post(m)
	require.NoError(t, err)
	res, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{Pane: "%2", Take: true, Via: "inbox"})
	require.NoError(t, err)
	require.Equal(t, 1, res.Taken)
	assert.Contains(t, res.Items[0].Text, x.RequestPath)
	assert.Equal(t, x.ID, res.Items[0].Exchange)
	assert.Equal(t, exchange.StateDelivered, state(x).State)
}

func TestInboxRefusals(t *testing.T) {
	w := newWorld(t)
	w.cfg.Self = ""
	_, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{})
	var need *core.NeedError
	require.ErrorAs(t, err, &need)
	assert.Equal(t, core.NeedPane, need.Need)
	_, err = w.office.Inbox(context.Background(), mailbox.InboxOptions{Pane: "%x/../"})
	require.Error(t, err, "a pane that is no pane id")

	// No outbox yet, or no root yet: an empty inbox.
	res, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{Pane: "%3"})
	require.NoError(t, err)
	assert.Empty(t, res.Items)
	w.cfg.Root = t.TempDir() + "/none"
	res, err = w.office.Inbox(context.Background(), mailbox.InboxOptions{Pane: "%3"})
	require.NoError(t, err)
	assert.Empty(t, res.Items)
}

// A damaged or misplaced file in an outbox is named among the problems and left alone; the mail
// beside it is still delivered. An outcome older than a week is pruned from the listing.
func TestInboxNamesDamagedFilesAndPrunesOldOutcomes(t *testing.T) {
	w := newWorld(t)
	w.setBusy("%2", true)
	_, m := w.request("%2", "task")
	p, err := w.post(m)
	require.NoError(t, err)
	ob := w.outbox("%2")
	damaged := ob.Path(store.OutboxQueueDir, "01795573754248449989-0000.json")
	require.NoError(t, os.WriteFile(damaged, []byte("{not json"), 0o600))
	other := p.Mail
	other.ID, other.Pane = "01795573754248449990-0000", "%3"
	require.NoError(t, os.WriteFile(ob.Path(store.OutboxQueueDir, other.ID+".json"), messages.FormatMail(other), 0o600))

	res, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{Pane: "%2"})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, p.Mail.ID, res.Items[0].ID)
	require.Len(t, res.Problems, 2)
	assert.Contains(t, res.Problems[0], "01795573754248449989-0000.json:1:")
	assert.Contains(t, res.Problems[1], "not of this outbox")

	w.setBusy("%2", false)
	w.drain("%2")
	assert.Len(t, w.pasted(), 1, "the good one is delivered")
	_, err = os.Stat(damaged)
	assert.NoError(t, err, "left alone")

	all, err := w.office.Inbox(context.Background(), inboxAll("%2"))
	require.NoError(t, err)
	require.Len(t, all.Items, 1)
	later := time.Now().Add(8 * 24 * time.Hour)
	w.cfg.Now = func() time.Time { return later }
	all, err = w.office.Inbox(context.Background(), inboxAll("%2"))
	require.NoError(t, err)
	assert.Empty(t, all.Items, "kept a week")
	_, err = w.outbox("%2").Outcome(p.Mail.ID)
	assert.Error(t, err, "pruned")
}
