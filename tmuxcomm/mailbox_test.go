package tmuxcomm

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// The mailbox room's own tests are in tmuxcomm/mailbox; these are the door tests' world of panes
// with a mailbox.

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
