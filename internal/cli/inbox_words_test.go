package cli

// What inbox says of a message: when it was queued, and that a message typed in as it was sent was
// never queued.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

func TestInboxWhen(t *testing.T) {
	now := time.Date(2026, 1, 17, 12, 1, 0, 0, time.UTC)
	sent := now.Add(-time.Minute)
	at := func(d time.Duration) *time.Time { e := sent.Add(d); return &e }
	tests := []struct {
		name string
		it   mailbox.InboxItem
		want string
	}{
		{"waiting", mailbox.InboxItem{State: "waiting", QueuedAt: sent}, "queued 1m0s ago, waiting"},
		{"pasted as it was sent", mailbox.InboxItem{State: "delivered", Via: "paste", QueuedAt: sent, EndedAt: at(300 * time.Millisecond)},
			"sent 1m0s ago, delivered via paste at once"},
		{"waited for its pane", mailbox.InboxItem{State: "delivered", Via: "hook", QueuedAt: sent, EndedAt: at(40 * time.Second)},
			"sent 1m0s ago, delivered via hook 40s later"},
		{"expired", mailbox.InboxItem{State: "expired", QueuedAt: sent, EndedAt: at(50 * time.Second)},
			"sent 1m0s ago, expired 50s later"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, inboxWhen(tc.it, now))
		})
	}
}

// TestE2EInboxAllWordsAtOnce: a message typed in as it was sent was never queued: it has no
// outbox record (its delivery log is its record), so inbox --all neither lists it nor says it
// was queued, and show says it was submitted.
func TestE2EInboxAllWordsAtOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orch := w.catPane()
	worker := w.catPane()
	x := w.send(orch, worker, "a task for a ready pane")
	r := w.in(worker, "inbox", "--all")
	requireCode(t, 0, r)
	assert.NotContains(t, r.stdout, "request from", "no outbox record of a message typed in at once")
	assert.NotContains(t, r.stdout, "queued")
	r = w.in(orch, "show", x.ID)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, "submitted")
}
