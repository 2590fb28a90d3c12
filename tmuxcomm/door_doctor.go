package tmuxcomm

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/doctor"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Doctor is doctor.Check with what the engine knows filled in: its finder for the pane (the same
// targets as send --to), its enter delay, its delivery lock and the approved actions under its
// root. A face gives the tmux client, the settings it read and what to check.
func Doctor(ctx context.Context, e *Engine, o doctor.Options) *doctor.Report {
	o.Panes = e.finder
	o.EnterDelay, o.LockDir, o.LockTimeout = e.cfg.EnterDelay, store.LockDir(e.cfg.Root), e.cfg.LockTimeout
	if res, err := e.Actions(ctx, ActionsOptions{}); err == nil {
		o.Actions = res.List
	}
	return doctor.Check(ctx, o)
}
