package mailbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
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
