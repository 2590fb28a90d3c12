package tmuxcomm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
)

// busyPanes makes the fake refuse strict deliveries to the panes marked busy, as a busy agent
// does, and deliver everything else.
type busyPanes struct {
	mu   sync.Mutex
	busy map[messages.PaneID]bool
}

func (b *busyPanes) set(p string, busy bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.busy[messages.PaneID(p)] = busy
}

func (b *busyPanes) result(d paneops.Delivery) (paneops.DeliveryResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d.Strict && b.busy[d.Pane] {
		return paneops.DeliveryResult{}, paneops.ErrBusy
	}
	now := time.Now()
	return paneops.DeliveryResult{Buffer: "wcomm-x", Pasted: true, Submitted: true, PastedAt: now, EnterAt: now}, nil
}

// mailboxWorld is a fake server with panes %1 (orchestrator) and %2..%4 (workers), %1 busy.
func mailboxWorld(t *testing.T) (*fakeTmux, *busyPanes, *Engine, *[]messages.PaneID) {
	f := newFake("%1", "%2", "%3", "%4")
	b := &busyPanes{busy: map[messages.PaneID]bool{"%1": true}}
	f.Result = b.result
	e := newEngine(t, f, "%1")
	var spawned []messages.PaneID
	var mu sync.Mutex
	e.cfg.Helpers.Deliverer = func(server, socket string, pane messages.PaneID) error {
		mu.Lock()
		defer mu.Unlock()
		spawned = append(spawned, pane)
		return nil
	}
	return f, b, e, &spawned
}

// answeredWhileBusy sends a request from %1 to %2 and answers it from %2 while %1 is busy, so the
// RESPONSE line waits in %1's outbox; it returns the exchange.
func answeredWhileBusy(t *testing.T, e *Engine) *exchange.Exchange {
	t.Helper()
	ctx := context.Background()
	x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	res, err := e.as("%2").Notify(ctx, NotifyOptions{Ref: x.ResponsePath, Body: []byte("answer")})
	require.NoError(t, err)
	require.Equal(t, core.SignalQueued, res.Signal)
	return x.Exchange
}

// drainPane runs the deliverer of a pane of the fake server until its outbox is empty.
func drainPane(t *testing.T, f *fakeTmux, e *Engine, pane messages.PaneID) {
	t.Helper()
	srv, _ := f.ServerInfo(context.Background())
	require.NoError(t, e.office.RunDeliverer(context.Background(), srv.Key(), pane))
}

// contents lists what each delivery typed.
func contents(f *fakeTmux) []string {
	var out []string
	for _, d := range f.Delivered() {
		out = append(out, string(d.Content))
	}
	return out
}

func TestMailboxQueuesThenDeliversInOrder(t *testing.T) {
	f, b, e, spawned := mailboxWorld(t)
	ctx := context.Background()
	b.set("%2", true)
	var xs []*exchange.Exchange
	for i := range 3 {
		x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task " + string(rune('a'+i)))})
		require.NoError(t, err, "a busy pane never fails a send")
		assert.Equal(t, exchange.StateQueued, x.State)
		assert.Equal(t, exchange.StatusPending, x.Status)
		assert.Contains(t, x.Evidence, "busy")
		xs = append(xs, x.Exchange)
	}
	assert.Equal(t, []messages.PaneID{"%2", "%2", "%2"}, *spawned, "each queuing asks for a deliverer (it runs once: its lock)")
	for _, d := range f.Delivered() {
		assert.True(t, d.Strict, "queued deliveries are strict")
	}
	before := len(f.Delivered())

	b.set("%2", false)
	drainPane(t, f, e, "%2")
	typed := contents(f)[before:]
	require.Len(t, typed, 3)
	for i, c := range typed {
		assert.Contains(t, c, "task "+string(rune('a'+i)), "in the order sent")
	}
	for _, x := range xs {
		got := exchange.LoadExchange(x.Dir, x.Seq, false)
		assert.Equal(t, exchange.StateSubmitted, got.State)
	}
	// Nothing is delivered twice, whoever runs next.
	drainPane(t, f, e, "%2")
	assert.Len(t, f.Delivered(), before+3)
}

func TestMailboxReadyPaneIsDeliveredAtOnce(t *testing.T) {
	f, _, e, spawned := mailboxWorld(t)
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("now")})
	require.NoError(t, err)
	assert.Equal(t, exchange.StateSubmitted, x.State)
	assert.Empty(t, *spawned, "no deliverer for a pane that was ready")
	require.Len(t, f.Delivered(), 1)
	assert.NotEmpty(t, f.Delivered()[0].Mark, "the paste is marked in the pane")
}

func TestMailboxCoalescesResponses(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	var paths []string
	for _, w := range []string{"%2", "%3", "%4"} {
		x, err := e.Send(ctx, SendOptions{To: w, Body: []byte("task for " + w)})
		require.NoError(t, err)
		res, err := e.as(w).Notify(ctx, NotifyOptions{Ref: x.ResponsePath, Body: []byte("answer")})
		require.NoError(t, err)
		assert.Equal(t, core.SignalQueued, res.Signal, "the orchestrator is busy")
		paths = append(paths, x.ResponsePath)
	}
	before := len(f.Delivered())
	b.set("%1", false)
	drainPane(t, f, e, "%1")
	typed := contents(f)[before:]
	require.Len(t, typed, 1, "three RESPONSE lines, one paste")
	lines := strings.Split(typed[0], "\n")
	require.Len(t, lines, 3)
	for i, p := range paths {
		assert.True(t, strings.HasPrefix(lines[i], "[RESPONSE "), lines[i])
		assert.True(t, strings.HasSuffix(lines[i], p), lines[i])
	}
}

func TestMailboxSupersededAndExpired(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	x := answeredWhileBusy(t, e)
	// The orchestrator's await returns the response while the line still waits: it is not typed.
	got, err := e.awaitRef(ctx, x.ID, time.Second)
	require.NoError(t, err)
	assert.True(t, got.Read)

	// A request to a pane that stays busy past its time to live expires.
	b.set("%3", true)
	e.cfg.MailTTL = time.Minute
	y, err := e.Send(ctx, SendOptions{To: "%3", Body: []byte("never ready")})
	require.NoError(t, err)
	later := time.Now().Add(2 * time.Minute)
	e.cfg.Now = func() time.Time { return later }

	before := len(f.Delivered())
	b.set("%1", false)
	drainPane(t, f, e, "%1")
	drainPane(t, f, e, "%3")
	assert.Len(t, f.Delivered(), before, "nothing typed: one superseded, one expired")

	yx := exchange.LoadExchange(y.Dir, y.Seq, false)
	assert.Equal(t, exchange.StateExpired, yx.State)
	assert.Equal(t, exchange.StatusUndelivered, yx.Status)
	res, err := e.as("%1").Inbox(ctx, mailbox.InboxOptions{All: true})
	require.NoError(t, err)
	require.Len(t, res.Items, 1)
	assert.Equal(t, messages.MailSuperseded, res.Items[0].State)
	assert.Contains(t, res.Items[0].Detail, "await")
}

func TestMailboxInboxTakesOnce(t *testing.T) {
	f, _, e, _ := mailboxWorld(t)
	ctx := context.Background()
	x := answeredWhileBusy(t, e)

	peek, err := e.Inbox(ctx, mailbox.InboxOptions{})
	require.NoError(t, err)
	require.Len(t, peek.Items, 1)
	assert.Equal(t, "waiting", peek.Items[0].State)

	// Two takers at once: one gets it.
	var wg sync.WaitGroup
	taken := make([]int, 2)
	for i := range taken {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Inbox(ctx, mailbox.InboxOptions{Take: true, Via: "hook"})
			assert.NoError(t, err)
			taken[i] = res.Taken
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, taken[0]+taken[1])
	before := len(f.Delivered())
	drainPane(t, f, e, "%1")
	assert.Len(t, f.Delivered(), before, "taken by a hook: never typed")
	evs := exchange.LoadExchange(x.Dir, x.Seq, false).Events
	assert.Equal(t, exchange.StateNotified, evs[len(evs)-1].State)
	assert.Equal(t, "hook", evs[len(evs)-1].Detail["via"])
}

// markingFake records marks like the pane options of a real server.
type markingFake struct {
	*fakeTmux
	pasted, entered string
	resumed         int
}

func (m *markingFake) Marks(ctx context.Context, pane messages.PaneID, mark string) (string, string, error) {
	return m.pasted, m.entered, nil
}

func (m *markingFake) Resume(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error) {
	m.resumed++
	return paneops.DeliveryResult{Pasted: true, Submitted: true, Enters: 1, Evidence: "Enter sent"}, nil
}

func TestMailboxRecoversAStoppedDelivery(t *testing.T) {
	for _, tt := range []struct {
		name            string
		pasted, entered bool
		wantDeliveries  int
		wantResumed     int
	}{
		{"stopped before the paste: pasted now", false, false, 1, 0},
		{"stopped between paste and Enter: Enter now", true, false, 0, 1},
		{"stopped after the Enter: nothing typed", true, true, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, b, e, _ := mailboxWorld(t)
			mf := &markingFake{fakeTmux: f}
			e.cfg.Tmux = mf
			ctx := context.Background()
			b.set("%2", true)
			_, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
			require.NoError(t, err)
			root, err := e.cfg.RootDir(false)
			require.NoError(t, err)
			srv, _ := f.ServerInfo(ctx)
			ob, err := mailbox.OpenOutbox(root, srv.Key(), "%2", false)
			require.NoError(t, err)
			pend, _ := ob.Pending()
			require.Len(t, pend, 1)
			// What a deliverer killed mid-way leaves: its inflight record, and the pane's marks.
			require.NoError(t, ob.SetInflight(mailbox.Inflight{Mark: pend[0].ID, IDs: []string{pend[0].ID}, PID: 1}))
			if tt.pasted {
				mf.pasted = pend[0].ID
			}
			if tt.entered {
				mf.entered = pend[0].ID
			}
			before := len(f.Delivered())
			b.set("%2", false)
			require.NoError(t, e.office.RunDeliverer(ctx, srv.Key(), "%2"))
			assert.Len(t, f.Delivered(), before+tt.wantDeliveries)
			assert.Equal(t, tt.wantResumed, mf.resumed)
			out, err := ob.Outcome(pend[0].ID)
			require.NoError(t, err)
			assert.Equal(t, messages.MailDelivered, out.State)
			st, err := os.Stat(filepath.Join(ob.Dir, store.InflightName))
			require.NoError(t, err, "the inflight record is kept, emptied")
			assert.Zero(t, st.Size(), "the inflight record is cleared")
		})
	}
}

func TestMailboxPaneGoneIsUndeliverable(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	b.set("%2", true)
	x, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	f.Mu.Lock()
	delete(f.PaneMap, "%2")
	f.Mu.Unlock()
	drainPane(t, f, e, "%2")
	got := exchange.LoadExchange(x.Dir, x.Seq, false)
	assert.Equal(t, exchange.StateUndeliverable, got.State)
	assert.Equal(t, exchange.StatusUndelivered, got.Status)
	assert.Contains(t, got.Evidence, "no longer exists")
}

func TestMailboxLateQueuedEvent(t *testing.T) {
	_, _, e, _ := mailboxWorld(t)
	x, err := e.Send(context.Background(), SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	require.Equal(t, exchange.StateSubmitted, x.State)
	mail := x.Events[len(x.Events)-1].Detail["mail"]
	require.NotEmpty(t, mail)
	// A sender that gave up waiting for the lock logs "queued" after the delivery it lost to.
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateQueued, map[string]string{"mail": mail, "reason": "another delivery"}, time.Now()))
	assert.Equal(t, exchange.StateSubmitted, exchange.LoadExchange(x.Dir, x.Seq, false).State, "still delivered")
	// A new message for it (a resend) is queued indeed.
	require.NoError(t, exchange.LogEvent(x.Dir, x.Seq, exchange.StateQueued, map[string]string{"mail": "01795573754248449989-0000", "reason": "busy"}, time.Now()))
	assert.Equal(t, exchange.StateQueued, exchange.LoadExchange(x.Dir, x.Seq, false).State)
}

func TestMailboxDelivererEndsWhenItsOutboxIsRemoved(t *testing.T) {
	f, b, e, _ := mailboxWorld(t)
	ctx := context.Background()
	b.set("%2", true)
	_, err := e.Send(ctx, SendOptions{To: "%2", Body: []byte("task")})
	require.NoError(t, err)
	root, err := e.cfg.RootDir(false)
	require.NoError(t, err)
	srv, _ := f.ServerInfo(ctx)
	done := make(chan error, 1)
	go func() { done <- e.office.RunDeliverer(ctx, srv.Key(), "%2") }()
	ob, err := mailbox.OpenOutbox(root, srv.Key(), "%2", false)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lock.IsLocked(ob.Path(store.DelivererLockName)) }, 10*time.Second, 5*time.Millisecond,
		"the deliverer to start")
	// The pane stays busy, so the deliverer waits on it, until its outbox is removed under it.
	// Renamed away at once (removing it file by file races the deliverer's own writes).
	require.NoError(t, os.Rename(filepath.Join(root, store.OutboxDir), filepath.Join(t.TempDir(), "gone")))
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the deliverer of a removed outbox is still running")
	}
}

// A deliverer that cannot start is reported with what still delivers the message, naming only
// ways that exist (an earlier text named a 'wcomm deliver' command there is none of).
func TestMailboxDelivererStartFailureHint(t *testing.T) {
	_, _, e, _ := mailboxWorld(t)
	e.cfg.Helpers.Deliverer = func(server, socket string, pane messages.PaneID) error { return os.ErrPermission }
	root, err := e.cfg.RootDir(true)
	require.NoError(t, err)
	ob, err := mailbox.OpenOutbox(root, "1-2", "%1", true)
	require.NoError(t, err)
	err = e.office.EnsureDeliverer(ob, "")
	require.ErrorIs(t, err, os.ErrPermission)
	assert.Contains(t, err.Error(), "an inbox run in it")
	assert.NotContains(t, err.Error(), "wcomm deliver")
}
