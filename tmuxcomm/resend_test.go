package tmuxcomm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// A resend of a request that waits in its worker's outbox is refused, so it is not queued twice.
// In the moment between its deliverer logging the delivery and the mail leaving the queue, the
// refusal says it was just delivered, not that it waits until the pane is ready.
func TestResendOfAMailInTheOutbox(t *testing.T) {
	ctx := context.Background()
	_, b, e, _ := mailboxWorld(t)
	b.set("%2", true)
	s, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("a task")})
	require.NoError(t, err)
	x := s.Exchange
	require.Equal(t, exchange.StateQueued, x.State)

	_, err = e.Resend(ctx, ResendOptions{Ref: x.ID})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already waits in the outbox of pane %2")

	// The deliverer's moment: the log says submitted, the mail has not left the queue yet.
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateSubmitted, nil, e.cfg.Now()))
	_, err = e.Resend(ctx, ResendOptions{Ref: x.ID})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was submitted to pane %2 just now, and its mail is leaving the outbox")
	assert.NotContains(t, err.Error(), "when the pane is ready")
}
