package tmuxcomm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// readyRelay mirrors its sends here, as remote.Relay does, and counts the awaits it readies.
type readyRelay struct {
	mu    sync.Mutex
	asked []string
}

func (r *readyRelay) Send(ctx context.Context, e *Engine, o Outbound) (*exchange.Exchange, error) {
	x, err := e.Mirror(ctx, MirrorOptions{Host: o.Host.Name, ID: o.ID, From: o.From, Worker: "%7",
		Capability: o.Send.Capability, Body: o.Send.Body, State: exchange.StateSubmitted})
	if err != nil {
		return nil, err
	}
	x.Host = o.Host.Name
	return x, nil
}

func (r *readyRelay) Ready(_ context.Context, _, ref string, _ time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, ref)
	return nil
}

func (r *readyRelay) refs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// An await of a plain send to a pane of this machine's asks nothing of the relay (it read the
// relay's queue and records at each await), while an await of a relayed send still readies it.
func TestAwaitOfAPlainSendLeavesTheRelayAlone(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	relay := &readyRelay{}
	e.Relay = relay
	e.Settings.Hosts = map[string]settings.HostDef{"gpu1": {Name: "gpu1"}}
	ctx := context.Background()

	s, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("local work")})
	require.NoError(t, err)
	_, err = e.as("%2").Notify(ctx, NotifyOptions{Ref: s.Exchange.ResponsePath, Body: []byte("done")})
	require.NoError(t, err)
	x, err := e.awaitRef(ctx, s.Exchange.ID, 5*time.Second)
	require.NoError(t, err)
	assert.Contains(t, x.ResponseBody, "done")
	assert.Empty(t, relay.refs(), "a local exchange's await asked the relay")

	r, err := e.Send(ctx, SendOptions{To: "gpu1:%7", Body: []byte("remote work")})
	require.NoError(t, err)
	_, _ = e.awaitRef(ctx, r.Exchange.ID, 50*time.Millisecond)
	assert.Equal(t, []string{r.Exchange.ID}, relay.refs(), "a relayed exchange's await readies it through the relay")
}
