package prompts

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// codexWatches are the Codex panes whose thread is followed for approvals.
type codexWatches struct{}

// lookCodex follows the thread of every Codex pane with a door, and stops following those gone.
func (s *Sentry) lookCodex(ctx context.Context, panes []fleet.FleetPane) {}
