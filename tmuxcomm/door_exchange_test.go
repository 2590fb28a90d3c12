package tmuxcomm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// meetingRelay is a Relay whose sends wait for each other: each one that comes in waits until
// every host of want has come in too (or gives up at a deadline, so a relay made one at a time
// fails instead of hanging), then mirrors its request here, as remote.Relay does.
type meetingRelay struct {
	want    int
	mu      sync.Mutex
	arrived map[string]bool
	all     chan struct{}
}

func newMeetingRelay(want int) *meetingRelay {
	return &meetingRelay{want: want, arrived: map[string]bool{}, all: make(chan struct{})}
}

func (r *meetingRelay) Send(ctx context.Context, e *Engine, o Outbound) (*exchange.Exchange, error) {
	r.mu.Lock()
	r.arrived[o.Host.Name] = true
	if len(r.arrived) == r.want {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
	case <-time.After(20 * time.Second):
		return nil, fmt.Errorf("host %s: the relays to the other hosts never came while this one was under way", o.Host.Name)
	}
	x, err := e.Mirror(ctx, MirrorOptions{Host: o.Host.Name, ID: o.ID, From: o.From, Worker: "%7",
		Capability: o.Send.Capability, Body: o.Send.Body, State: exchange.StateSubmitted})
	if err != nil {
		return nil, err
	}
	x.Host = o.Host.Name
	return x, nil
}

func (r *meetingRelay) Ready(context.Context, string, string, time.Duration) error { return nil }

// A broadcast to workers on two declared hosts and a local pane relays to both hosts at once: the
// host of each mirror travels in its call, so no relay waits for another's mirror to be written
// (they went one at a time while the engine had one mirror slot, set and restored around each).
// Each mirror is in a session folder of its own host's, beside the local send's.
func TestBroadcastRelaysToSeveralHostsAtOnce(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	relay := newMeetingRelay(2)
	e.Relay = relay
	e.Settings.Hosts = map[string]settings.HostDef{"gpu1": {Name: "gpu1"}, "gpu2": {Name: "gpu2"}}

	s, err := e.Send(context.Background(), SendOptions{Targets: []string{"gpu1:%7,%2", "gpu2:%7"}, Body: []byte("review the diff")})
	require.NoError(t, err)
	require.NotNil(t, s.Broadcast, "several targets: a broadcast")
	require.Nil(t, s.Exchange)
	require.Len(t, s.Broadcast.Members, 3)
	hosts := map[string]string{}
	for _, m := range s.Broadcast.Members {
		require.NoError(t, m.Err, m.Target)
		x := m.Exchange
		meta, err := exchange.ReadMeta(x.Dir)
		require.NoError(t, err, m.Target)
		hosts[m.Target] = meta.Host
		assert.Equal(t, messages.PaneID("%1"), x.Orchestrator, m.Target)
	}
	assert.Equal(t, map[string]string{"gpu1:%7": "gpu1", "gpu2:%7": "gpu2", "%2": ""}, hosts)
}

// A call's choices (its pane, the queue, the busy wait, the enter delay) apply to that call alone:
// the engine is as it was built after it, and two calls made at once with different panes each
// send from their own.
func TestCallChoicesLeaveTheEngineAsBuilt(t *testing.T) {
	f := newFake("%1", "%2", "%3", "%4")
	e := newEngine(t, f, "%1")
	noQueue, wait, delay := true, time.Duration(0), 5*time.Millisecond
	var wg sync.WaitGroup
	sent := make([]*Sent, 2)
	errs := make([]error, 2)
	for i, from := range []messages.PaneID{"%3", "%4"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent[i], errs[i] = e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("from " + string(from)),
				Choices: Choices{From: from, NoQueue: &noQueue, BusyWait: &wait, EnterDelay: &delay}})
		}()
	}
	wg.Wait()
	for i, from := range []messages.PaneID{"%3", "%4"} {
		require.NoError(t, errs[i])
		assert.Equal(t, from, sent[i].Orchestrator, "each call sends from the pane it chose")
	}
	assert.Equal(t, messages.PaneID("%1"), e.cfg.Self)
	assert.False(t, e.cfg.NoQueue)
	assert.Equal(t, DefaultBusyWait, e.cfg.BusyWait)
	assert.Zero(t, e.cfg.EnterDelay)

	// One target: one send, no broadcast.
	s, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("alone")})
	require.NoError(t, err)
	assert.Nil(t, s.Broadcast)
	assert.Equal(t, messages.PaneID("%2"), s.Worker)
}

// The door checks a call's arguments once, before anything is written, and names each refused
// one so that a face can name it its own way (Named).
func TestSendRefusesItsArgumentsByName(t *testing.T) {
	f := newFake("%1", "%2")
	e := newEngine(t, f, "%1")
	over := MaxBusyWait + time.Minute
	for _, tc := range []struct {
		o     SendOptions
		arg   Arg
		words string
		class Class
	}{
		{SendOptions{To: "%2", Agent: "nosuch"}, ArgAgent, `--agent: unknown agent profile "nosuch"`, ClassUsage},
		{SendOptions{To: "%2", Choices: Choices{BusyWait: &over}}, ArgBusyWait, "--busy-wait: the busy wait 11m0s is not between 0 and 10m0s", ClassUsage},
		{SendOptions{To: "%2", Choices: Choices{From: "x"}}, ArgFrom, "--from: ", ClassUsage},
		{SendOptions{To: "%2", Choices: Choices{From: "%42"}}, ArgFrom, "--from %42: ", ClassNotFound},
	} {
		tc.o.Body = []byte("never sent")
		s, err := e.Send(context.Background(), tc.o)
		require.Error(t, err, tc.words)
		assert.Nil(t, s)
		var ae *ArgError
		require.True(t, errors.As(err, &ae), "%v", err)
		assert.Equal(t, tc.arg, ae.Arg)
		named := Named(err, map[Arg]string{ArgAgent: "--agent", ArgBusyWait: "--busy-wait", ArgFrom: "--from"})
		assert.Contains(t, named.Error(), tc.words)
		assert.Equal(t, tc.class, ClassOf(named), "%v", named)
	}
	assert.Empty(t, f.Delivered(), "nothing was sent")
}

// A relayed send runs as the orchestrator of the other host, on rooms of its own: the engine that
// served it is not left relaying, and a response pulled from a host is written from outside any
// pane (a notify from this engine's own pane would be refused: the request is not addressed to it).
func TestRelayedCallsLeaveTheEngineAsBuilt(t *testing.T) {
	f := newFake("%0", "%2")
	e := newEngine(t, f, "%0")
	x, repeated, err := e.RelaySend(context.Background(), RelayedSend{ID: "20260101-000000-a1b2", From: "%5", To: "%2", Body: []byte("relayed work")})
	require.NoError(t, err)
	require.False(t, repeated)
	assert.Equal(t, messages.PaneID("%5"), x.Orchestrator)
	assert.False(t, e.cfg.Relayed)
	assert.Equal(t, messages.PaneID("%0"), e.cfg.Self)
	_, _, err = e.RelaySend(context.Background(), RelayedSend{ID: "20260101-000000-a1b3", From: "nope", To: "%2", Body: []byte("x")})
	assert.Equal(t, ClassUsage, ClassOf(err), "%v", err)

	// The mirror of a send to a host, and its response pulled from there.
	m, err := e.Mirror(context.Background(), MirrorOptions{Host: "gpu1", ID: "20260101-000000-c3d4", From: "%0", Worker: "%7", Capability: messages.ReadOnly, Body: []byte("remote work")})
	require.NoError(t, err)
	_, err = e.Notify(context.Background(), NotifyOptions{Ref: m.ResponsePath, Body: []byte("done")})
	require.ErrorContains(t, err, "not to your pane", "this engine's pane is not the worker")
	res, err := e.Notify(context.Background(), NotifyOptions{Ref: m.ResponsePath, Body: []byte("done"), Pulled: true})
	require.NoError(t, err)
	assert.Equal(t, "gpu1", exchange.MirrorHost(res.Exchange))
	assert.Equal(t, messages.PaneID("%0"), e.cfg.Self)
}

// Await of one exchange returns it; of several (or a broadcast's id) every answer with its pane,
// each handed to Each before it is recorded as read, and a lean await leaves the request out.
func TestAwaitOneOrSeveral(t *testing.T) {
	f := newFake("%1", "%2", "%3")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	s, err := e.Send(ctx, SendOptions{To: "%2,%3", Body: []byte("review")})
	require.NoError(t, err)
	require.NotNil(t, s.Broadcast)
	for _, m := range s.Broadcast.Members {
		_, err := e.as(string(m.Exchange.Worker)).Notify(ctx, NotifyOptions{Ref: m.Exchange.ID, Body: []byte("ok from " + string(m.Exchange.Worker))})
		require.NoError(t, err)
	}
	var panes []string
	a, err := e.Await(ctx, AwaitOptions{Refs: []string{s.Broadcast.ID}, Timeout: time.Second, Lean: true,
		Each: func(pane string, x *exchange.Exchange) error {
			panes = append(panes, pane)
			assert.Empty(t, x.RequestBody, "lean")
			return nil
		}})
	require.NoError(t, err)
	require.NotNil(t, a.Many)
	assert.Nil(t, a.Exchange)
	assert.ElementsMatch(t, []string{"%2", "%3"}, panes)

	one, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("one more")})
	require.NoError(t, err)
	_, err = e.as("%2").Notify(ctx, NotifyOptions{Ref: one.ID, Body: []byte("done")})
	require.NoError(t, err)
	_, err = e.Await(ctx, AwaitOptions{Refs: []string{one.ID}, Timeout: time.Second,
		Each: func(pane string, x *exchange.Exchange) error {
			assert.Empty(t, pane, "one exchange: no label")
			return errors.New("output failed")
		}})
	require.ErrorContains(t, err, "output failed")
	assert.False(t, exchange.WasRead(one.Dir, one.Seq), "not recorded as read: its output failed")
	a, err = e.Await(ctx, AwaitOptions{Refs: []string{one.ID}, Timeout: time.Second})
	require.NoError(t, err)
	assert.Nil(t, a.Many)
	assert.Equal(t, "done\n", a.ResponseBody)
	assert.Equal(t, "one more", a.RequestBody)

	_, err = e.Await(ctx, AwaitOptions{Refs: []string{"not-an-id"}})
	assert.Equal(t, ClassUsage, ClassOf(err), "%v", err)
}

// Show names what its ref is: an exchange, a broadcast or the exchange a RESPONSE line names.
func TestShowAnyRef(t *testing.T) {
	f := newFake("%1", "%2", "%3")
	e := newEngine(t, f, "%1")
	ctx := context.Background()
	s, err := e.Send(ctx, SendOptions{Targets: []string{"%2", "%3"}, Body: []byte("review")})
	require.NoError(t, err)
	sh, err := e.Show(ctx, ShowOptions{Ref: s.Broadcast.ID})
	require.NoError(t, err)
	require.NotNil(t, sh.Broadcast)
	assert.Len(t, sh.Broadcast.Exchanges, 2)

	x := s.Broadcast.Members[0].Exchange
	sh, err = e.Show(ctx, ShowOptions{Ref: x.ID[len(x.ID)-4:]})
	require.NoError(t, err)
	require.NotNil(t, sh.Exchange)
	assert.Equal(t, x.ID, sh.ID)

	res, err := e.as(string(x.Worker)).Notify(ctx, NotifyOptions{Ref: x.ID, Body: []byte("done")})
	require.NoError(t, err)
	sh, err = e.Show(ctx, ShowOptions{Text: "noise " + res.Line + " more"})
	require.NoError(t, err)
	assert.Equal(t, x.ID, sh.ID)
	assert.Equal(t, "done\n", sh.ResponseBody)

	_, err = e.Show(ctx, ShowOptions{Ref: "20200101-000000-ffff"})
	assert.ErrorIs(t, err, store.ErrNotFound)
}
