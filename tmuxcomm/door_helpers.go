package tmuxcomm

// The detached helpers' own work: what 'wcomm __deliver' and '__watch' run, and the guard the
// resident tmux client runs for a delivering process. The helpers are started through the
// engine's Helpers (core.Helpers); each job runs on an engine of its own that starts no helper of
// its own kind, so no helper starts another of itself.

import (
	"context"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// The kinds of helper job.
const (
	// HelperDeliverer drains a pane's outbox (mailbox.Office.RunDeliverer).
	HelperDeliverer = "deliverer"
	// HelperGuard guards the deliveries process PID makes into a pane, and finishes one it left
	// between paste and Enter (mailbox.Office.GuardDelivery).
	HelperGuard = "guard"
	// HelperWatcher watches a pane spawned with --restart on-failure until it is gone,
	// restarting its program each time it ends with a failure (lifecycle.Room.Watch).
	HelperWatcher = "watcher"
)

// HelperJob is the work of one detached helper, on the pane Pane of the tmux server whose key
// is Server.
type HelperJob struct {
	Kind   string
	Server string
	Pane   messages.PaneID
	// PID is the process whose deliveries a guard guards.
	PID int
	// Wait, for a guard, returns once PID has ended; nil: the guard watches the process itself.
	// The resident tmux client gives its own (a pidfd opened while PID was connected to it).
	Wait func(context.Context) error
	// Tmux, for a guard the resident runs, is the resident's own client: its calls go through it,
	// and a delivery it finishes starts no guard (it is the guard).
	Tmux Tmux
}

// RunHelper runs the work of one detached helper (see HelperJob) and returns when it is done.
func (e *Engine) RunHelper(ctx context.Context, j HelperJob) error {
	switch j.Kind {
	case HelperDeliverer, HelperGuard:
		// A deliverer starts no other deliverer; the resident's guard starts no guard, and its
		// calls go through the resident's own client.
		in := e.derive(callConfig{tmux: j.Tmux, noDeliverer: j.Tmux == nil})
		switch {
		case j.Kind == HelperDeliverer:
			return in.office.RunDeliverer(ctx, j.Server, j.Pane)
		case j.Wait != nil:
			return in.office.GuardDeliveryWait(ctx, j.Server, j.Pane, j.PID, j.Wait)
		}
		return in.office.GuardDelivery(ctx, j.Server, j.Pane, j.PID)
	case HelperWatcher:
		r, err := e.lifecycleRoom("", true)
		if err != nil {
			return err
		}
		return r.Watch(ctx, j.Server, j.Pane)
	}
	return core.Usagef("no helper job %q: %s, %s or %s", j.Kind, HelperDeliverer, HelperGuard, HelperWatcher)
}
