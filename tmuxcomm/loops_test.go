package tmuxcomm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// callerRelease releases as the caller whose process table is procs (the caller pid 300), with
// the engine's own table put back after.
func callerRelease(e *Engine, procs []proc.Process, ref string, all bool) ([]messages.Mail, error) {
	saved, paneSaved, self := e.cfg.Procs, e.cfg.PaneProcs, e.cfg.SelfPID
	defer func() { e.cfg.Procs, e.cfg.PaneProcs, e.cfg.SelfPID = saved, paneSaved, self }()
	return procsOf(e, procs...).Release(context.Background(), ref, "", all)
}

// personRelease releases as the person: typed in a shell, the foreground of a terminal no agent
// runs on.
func personRelease(e *Engine, ref string, all bool) ([]messages.Mail, error) {
	return callerRelease(e, []proc.Process{
		{PID: 200, PPID: 1, SID: 200, PGRP: 200, TTY: 34816, TPGID: 300, Comm: "bash", Args: []string{"-bash"}},
		{PID: 300, PPID: 200, SID: 200, PGRP: 300, TTY: 34816, TPGID: 300, Comm: "wcomm", Args: []string{"wcomm", "release"}}}, ref, all)
}

// typedIDs counts how many deliveries typed request id.
func typedIDs(f *fakeTmux, id string) int {
	n := 0
	for _, c := range contents(f) {
		if strings.Contains(c, "id="+id) {
			n++
		}
	}
	return n
}

// A request sent while handling another continues its chain one level deeper; past the chain's
// cap it is held (never typed), listed by the inbox, told once per chain, released exactly once,
// and a held one may be cancelled instead.
func TestLoopsChainHeldToldReleased(t *testing.T) {
	f, _, e, _ := mailboxWorld(t)
	ctx := context.Background()
	e.Settings.Loops = settings.Loops{ChainDepth: 2}
	x1, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("begin")})
	require.NoError(t, err)
	assert.Empty(t, x1.Request().Header.Chain, "a pane handling nothing begins a chain")

	x2, err := e.as("%2").Send(ctx, SendOptions{To: "%3", Body: []byte("pass it on")})
	require.NoError(t, err)
	assert.Equal(t, x1.ID, x2.Request().Header.Chain)
	assert.Equal(t, 2, x2.Request().Header.Depth)
	assert.Equal(t, exchange.StateSubmitted, x2.State)

	x3, err := e.as("%3").Send(ctx, SendOptions{To: "%4", Body: []byte("and on")})
	require.NoError(t, err, "held is not an error")
	assert.Equal(t, exchange.StateHeld, x3.State)
	assert.Equal(t, exchange.StatusPending, x3.Status)
	assert.Contains(t, x3.Evidence, "past loops.chain_depth 2")
	assert.Equal(t, 0, typedIDs(f, x3.ID), "held: never typed")
	x4, err := e.as("%3").Send(ctx, SendOptions{To: "%4", Body: []byte("and on again")})
	require.NoError(t, err)
	assert.Equal(t, exchange.StateHeld, x4.State)

	in, err := e.Inbox(ctx, mailbox.InboxOptions{Pane: "%4"})
	require.NoError(t, err)
	require.Len(t, in.Items, 2)
	assert.Equal(t, "held", in.Items[0].State)
	assert.Contains(t, in.Items[0].Detail, "wcomm release "+x3.ID)
	drainPane(t, f, e, "%4")
	assert.Equal(t, 0, typedIDs(f, x3.ID), "a deliverer never types a held request")

	_, err = e.as("%4").Notify(ctx, NotifyOptions{Body: []byte("an answer to what?")})
	assert.True(t, errors.Is(err, store.ErrNotFound), "a worker's notify never answers a request held from it: %v", err)

	told, problems := e.office.DeadLetters(time.Time{})
	assert.Empty(t, problems)
	require.Len(t, told, 1, "told once per chain, not per message")
	assert.Equal(t, exchange.StateHeld, told[0].State)
	assert.Equal(t, x3.ID, told[0].Exchange)

	// An agent lifting its own hold is refused: wcomm release from a tool call under claude.
	_, err = callerRelease(e, []proc.Process{
		{PID: 100, PPID: 1, Comm: "claude", Args: []string{"claude"}},
		{PID: 300, PPID: 100, Comm: "wcomm", Args: []string{"wcomm", "release"}}}, x3.ID, false)
	require.ErrorContains(t, err, "only the person may release")
	assert.Equal(t, 0, typedIDs(f, x3.ID), "the refusal released nothing")

	rel, err := personRelease(e, x3.ID, false)
	require.NoError(t, err)
	require.Len(t, rel, 1)
	drainPane(t, f, e, "%4")
	assert.Equal(t, 1, typedIDs(f, x3.ID), "released: typed once")
	assert.Equal(t, exchange.StateSubmitted, exchange.LoadExchange(x3.Dir, x3.Seq, false).State)
	_, err = personRelease(e, x3.ID, false)
	assert.True(t, errors.Is(err, store.ErrNotFound), "%v", err)

	c, err := e.Cancel(ctx, x4.ID)
	require.NoError(t, err, "a held request may be withdrawn")
	assert.Equal(t, exchange.StateCancelled, c.State)
	assert.Equal(t, exchange.StatusCancelled, c.Status)
	_, err = personRelease(e, "", true)
	assert.True(t, errors.Is(err, store.ErrNotFound), "nothing held any more: %v", err)
	drainPane(t, f, e, "%4")
	assert.Equal(t, 0, typedIDs(f, x4.ID))
}

// The rate counts the chained requests one pane sent another in the window.
func TestLoopsRateHoldsThePair(t *testing.T) {
	f, _, e, _ := mailboxWorld(t)
	ctx := context.Background()
	e.Settings.Loops = settings.Loops{Rate: 2, Per: time.Hour}
	_, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("begin")})
	require.NoError(t, err)
	var xs []*exchange.Exchange
	for i := range 3 {
		x, err := e.as("%2").Send(ctx, SendOptions{To: "%3", Body: []byte("sub-task " + string(rune('a'+i)))})
		require.NoError(t, err)
		xs = append(xs, x.Exchange)
	}
	assert.Equal(t, exchange.StateSubmitted, xs[1].State)
	assert.Equal(t, exchange.StateHeld, xs[2].State)
	assert.Contains(t, xs[2].Evidence, "loops.rate 2/1h0m0s")
	assert.Equal(t, 0, typedIDs(f, xs[2].ID))
	// Another pair is not held by this one's count.
	x, err := e.as("%2").Send(ctx, SendOptions{To: "%4", Body: []byte("elsewhere")})
	require.NoError(t, err)
	assert.Equal(t, exchange.StateSubmitted, x.State)
}

// Cancel withdraws a queued request; a delivered one cannot be, and says so.
func TestCancelQueuedNotDelivered(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	b.set("%2", true)
	x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("not now")})
	require.NoError(t, err)
	require.Equal(t, exchange.StateQueued, x.State)
	c, err := e.Cancel(ctx, x.ID)
	require.NoError(t, err)
	assert.Equal(t, exchange.StateCancelled, c.State)
	_, err = e.Cancel(ctx, x.ID)
	assert.ErrorContains(t, err, "cancelled already")
	tried := typedIDs(f, x.ID) // the fake records the attempt the busy pane refused
	b.set("%2", false)
	drainPane(t, f, e, "%2")
	assert.Equal(t, tried, typedIDs(f, x.ID), "cancelled: never typed once the pane is ready")
	_, err = e.Await(ctx, AwaitOptions{Refs: []string{x.ID}, Timeout: time.Second, Each: func(string, *exchange.Exchange) error { return nil }})
	assert.ErrorContains(t, err, "cancelled")

	y, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("now")})
	require.NoError(t, err)
	_, err = e.Cancel(ctx, y.ID)
	assert.True(t, errors.Is(err, mailbox.ErrDelivered), "%v", err)
	assert.Equal(t, ClassFailure, ClassOf(err))
	_, err = e.Cancel(ctx, "20200101-000000-dead")
	assert.Equal(t, ClassNotFound, ClassOf(err))
}

// A refused source writes nothing; a held one is held.
func TestLoopsInboundPolicy(t *testing.T) {
	f, _, e, _ := mailboxWorld(t)
	ctx := context.Background()
	e.Settings.Loops = settings.Loops{Inbound: []settings.InboundRule{{From: "%1", Policy: settings.PolicyRefuse}, {From: "%3", Policy: settings.PolicyHold}}}
	_, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("no")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing was written")
	assert.Equal(t, ClassFailure, ClassOf(err))
	assert.Empty(t, f.Delivered())
	assert.Empty(t, e.office.Pending(e.cfg.Root, "100-1700000000", "%2"))
	x, err := e.as("%3").Send(ctx, SendOptions{To: "%2", Body: []byte("wait")})
	require.NoError(t, err)
	assert.Equal(t, exchange.StateHeld, x.State)
	assert.Contains(t, x.Evidence, "policy hold")
}
