package mailbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// DeadLetters lists what ended without reaching its pane, of every pane, and nothing delivered
// or superseded; since leaves out what ended before it; a damaged record is a problem.
func TestDeadLetters(t *testing.T) {
	w := newWorld(t)
	start := time.Now().Add(-time.Second)
	none, problems := w.office.DeadLetters(start)
	assert.Empty(t, none)
	assert.Empty(t, problems)

	// One request to a pane that goes away, one delivered at once.
	w.setBusy("%2", true)
	x, m := w.request("%2", "task")
	_, err := w.post(m)
	require.NoError(t, err)
	w.tmux.Mu.Lock()
	delete(w.tmux.PaneMap, "%2")
	w.tmux.Mu.Unlock()
	w.drain("%2")
	_, m = w.request("%3", "delivered")
	_, err = w.post(m)
	require.NoError(t, err)

	dead, problems := w.office.DeadLetters(start)
	assert.Empty(t, problems)
	require.Len(t, dead, 1)
	d := dead[0]
	assert.Equal(t, messages.MailUndeliverable, d.State)
	assert.Equal(t, messages.MailRequest, d.Kind)
	assert.Equal(t, messages.PaneID("%2"), d.Pane)
	assert.Equal(t, x.ID, d.Exchange)
	assert.Contains(t, d.Detail, "no longer exists")

	later, _ := w.office.DeadLetters(time.Now().Add(time.Minute))
	assert.Empty(t, later, "nothing ended after since")

	done := w.outbox("%2").Path(store.OutboxDoneDir)
	require.NoError(t, os.WriteFile(filepath.Join(done, "01795573754248449989-0000.json"), []byte("{not json"), 0o600))
	dead, problems = w.office.DeadLetters(start)
	assert.Len(t, dead, 1)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "01795573754248449989-0000.json:1:")

	w.cfg.Root = filepath.Join(t.TempDir(), "none")
	dead, problems = w.office.DeadLetters(start)
	assert.Empty(t, dead)
	assert.Empty(t, problems, "no root: nothing ever died")
}

// The person's inbox (Dead) is the dead letters and the held chains' notices since a time, of
// every pane, whatever the caller's pane.
func TestInboxOfThePerson(t *testing.T) {
	w := newWorld(t)
	start := time.Now().Add(-time.Second)
	w.cfg.MailTTL = time.Minute
	w.setBusy("%3", true)
	x, m := w.request("%3", "never ready")
	_, err := w.post(m)
	require.NoError(t, err)
	_, held := w.request("%2", "over the cap")
	_, err = w.office.Hold(w.root, held, "the chain is over its cap", "chain-x")
	require.NoError(t, err)
	later := time.Now().Add(2 * time.Minute)
	w.cfg.Now = func() time.Time { return later }
	w.drain("%3")

	w.cfg.Self = "" // the person's, from outside any pane
	res, err := w.office.Inbox(context.Background(), mailbox.InboxOptions{Dead: true, Since: start})
	require.NoError(t, err)
	assert.Empty(t, res.Problems)
	assert.Empty(t, res.Items)
	require.Len(t, res.Dead, 2)
	states := map[string]string{}
	for _, d := range res.Dead {
		states[d.State] = string(d.Pane)
	}
	assert.Equal(t, map[string]string{messages.MailExpired: "%3", "held": "%2"}, states)
	assert.Equal(t, x.ID, deadOf(res.Dead, messages.MailExpired).Exchange)

	res, err = w.office.Inbox(context.Background(), mailbox.InboxOptions{Dead: true, Since: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, res.Dead, "nothing since")
}

func deadOf(ds []mailbox.DeadLetter, state string) mailbox.DeadLetter {
	for _, d := range ds {
		if d.State == state {
			return d
		}
	}
	return mailbox.DeadLetter{}
}
