package tmuxcomm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// A worker's notify of a request relayed from another host pastes nothing here (the orchestrator's
// wcomm pulls the response), and says so: it used to say the RESPONSE line was pasted into the
// orchestrator's pane, a pane of the other host.
func TestRelayedNotifySaysNothingWasPasted(t *testing.T) {
	f := newFake("%0", "%2")
	e := newEngine(t, f, "%0")
	x, repeated, err := e.RelaySend(context.Background(), RelayedSend{ID: "20260101-000000-a1b2", From: "%0", To: "%2", Body: []byte("relayed work")})
	require.NoError(t, err)
	require.False(t, repeated)
	before := len(f.Delivered())

	res, err := e.as("%2").Notify(context.Background(), NotifyOptions{Ref: x.ResponsePath, Body: []byte("done")})
	require.NoError(t, err)
	assert.Equal(t, SignalRelayed, res.Signal)
	assert.NotContains(t, res.Say(), "pasted into")
	assert.Contains(t, res.Say(), "another host")
	assert.Len(t, f.Delivered(), before, "nothing typed on this host")
	assert.Equal(t, messages.PaneID("%0"), res.Exchange.Orchestrator)
}
