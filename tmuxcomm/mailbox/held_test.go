package mailbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// A held request waits where no deliverer, hook or inbox takes it; the person is told once per
// chain; a release hands it to the queue, and it is then delivered once.
func TestHeldMailWaitsForItsRelease(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	x, m := w.request("%2", "over the cap")
	h, err := w.office.Hold(w.root, m, "the chain is over its cap of 3", "chain-abc")
	require.NoError(t, err)
	assert.True(t, h.Told, "the chain's first hold claims its notice")
	assert.Equal(t, exchange.StateHeld, state(x).State)

	_, m2 := w.request("%2", "over the cap again")
	h2, err := w.office.Hold(w.root, m2, "the chain is over its cap of 3", "chain-abc")
	require.NoError(t, err)
	assert.False(t, h2.Told, "told once per chain")

	held, problems := w.office.HeldMail(w.root)
	assert.Empty(t, problems)
	require.Len(t, held, 2)
	assert.Equal(t, h.Mail.ID, held[0].ID)
	assert.Equal(t, "the chain is over its cap of 3", held[0].Held)

	// Neither a deliverer nor an inbox takes it.
	w.drain("%2")
	res, err := w.office.Inbox(ctx, mailbox.InboxOptions{Pane: "%2", Take: true, Via: "hook"})
	require.NoError(t, err)
	assert.Zero(t, res.Taken)
	assert.Empty(t, w.pasted())
	peek, err := w.office.Inbox(ctx, mailbox.InboxOptions{Pane: "%2"})
	require.NoError(t, err)
	require.Len(t, peek.Items, 2)
	assert.Equal(t, exchange.StateHeld, peek.Items[0].State)
	assert.Contains(t, peek.Items[0].Detail, "wcomm release "+x.ID)

	// The person is told of the chain once, among the dead letters.
	dead, problems := w.office.DeadLetters(time.Now().Add(-time.Minute))
	assert.Empty(t, problems)
	require.Len(t, dead, 1)
	assert.Equal(t, exchange.StateHeld, dead[0].State)
	assert.Equal(t, h.Mail.ID, dead[0].ID)

	p, err := w.office.Release(w.root, h.Mail)
	require.NoError(t, err)
	assert.True(t, p.Queued)
	assert.Empty(t, p.Mail.Held)
	assert.Equal(t, []messages.PaneID{"%2"}, w.spawns(), "a release starts the deliverer")
	assert.Equal(t, exchange.StateQueued, state(x).State)
	_, err = w.office.Release(w.root, h.Mail)
	require.ErrorIs(t, err, store.ErrNotFound, "released once")

	w.drain("%2")
	typed := w.pasted()
	require.Len(t, typed, 1, "the released one, once; the other stays held")
	assert.Contains(t, string(typed[0].Content), "over the cap")
	assert.Equal(t, exchange.StateSubmitted, state(x).State)
	held, _ = w.office.HeldMail(w.root)
	require.Len(t, held, 1)
	assert.Equal(t, h2.Mail.ID, held[0].ID)
}

// A key that could name a path claims no notice, and the hold stands.
func TestHoldWithAHostileKeyClaimsNoNotice(t *testing.T) {
	w := newWorld(t)
	for _, key := range []string{"../../escape", "", "UPPER", "a/b"} {
		_, m := w.request("%2", "task")
		h, err := w.office.Hold(w.root, m, "held", key)
		require.NoError(t, err, key)
		assert.False(t, h.Told, key)
	}
	held, _ := w.office.HeldMail(w.root)
	assert.Len(t, held, 4)
	dead, _ := w.office.DeadLetters(time.Time{})
	assert.Empty(t, dead)
}

// A sender withdraws a request that is held or queued; one being typed now cannot be withdrawn.
func TestCancel(t *testing.T) {
	w := newWorld(t)
	x, m := w.request("%2", "held one")
	_, err := w.office.Hold(w.root, m, "held", "pair-2")
	require.NoError(t, err)
	found, err := w.office.Cancel(w.root, w.srv.Key(), "%2", x.Session, x.Seq)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, exchange.StatusCancelled, state(x).Status)
	held, _ := w.office.HeldMail(w.root)
	assert.Empty(t, held)

	w.setBusy("%2", true)
	y, m := w.request("%2", "queued one")
	_, err = w.post(m)
	require.NoError(t, err)
	found, err = w.office.Cancel(w.root, w.srv.Key(), "%2", y.Session, y.Seq)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, exchange.StateCancelled, state(y).State)
	w.setBusy("%2", false)
	w.drain("%2")
	assert.Empty(t, w.pasted(), "a cancelled request is never typed")
	res, err := w.office.Inbox(context.Background(), inboxAll("%2"))
	require.NoError(t, err)
	states := map[string]int{}
	for _, it := range res.Items {
		states[it.State]++
	}
	assert.Equal(t, map[string]int{messages.MailCancelled: 2}, states)

	found, err = w.office.Cancel(w.root, w.srv.Key(), "%2", y.Session, y.Seq)
	require.NoError(t, err)
	assert.False(t, found, "nothing left to cancel")
	found, err = w.office.Cancel(w.root, w.srv.Key(), "%4", y.Session, y.Seq)
	require.NoError(t, err)
	assert.False(t, found, "no outbox")

	// In flight: the text may be in the pane already.
	m3 := stoppedMidway(t, w)
	found, err = w.office.Cancel(w.root, w.srv.Key(), "%2", m3.Session, m3.Seq)
	require.ErrorIs(t, err, mailbox.ErrDelivered)
	assert.True(t, found)
}
