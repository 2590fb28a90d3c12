package tmuxcomm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// DeadLetters lists what ended without reaching its pane, of every pane, and nothing delivered
// or superseded; since leaves out what ended before it.
func TestMailboxDeadLetters(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Second)
	none, problems := e.office.DeadLetters(start)
	assert.Empty(t, none)
	assert.Empty(t, problems)

	// One request to a pane that goes away, one delivered at once.
	b.set("%2", true)
	x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	f.Mu.Lock()
	delete(f.PaneMap, "%2")
	f.Mu.Unlock()
	drainPane(t, f, e, "%2")
	_, err = e.Send(ctx, SendOptions{To: "%3", Body: []byte("delivered")})
	require.NoError(t, err)

	dead, problems := e.office.DeadLetters(start)
	assert.Empty(t, problems)
	require.Len(t, dead, 1)
	d := dead[0]
	assert.Equal(t, messages.MailUndeliverable, d.State)
	assert.Equal(t, messages.MailRequest, d.Kind)
	assert.Equal(t, messages.PaneID("%2"), d.Pane)
	assert.Equal(t, x.ID, d.Exchange)
	assert.Contains(t, d.Detail, "no longer exists")

	later, _ := e.office.DeadLetters(time.Now().Add(time.Minute))
	assert.Empty(t, later, "nothing ended after since")
}
