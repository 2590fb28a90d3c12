package prompts

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// screenWatches are the panes whose dialog on screen is a question.
type screenWatches struct{}

// lookScreens opens a question for each dialog a profile recognises on a pane's screen.
func (s *Sentry) lookScreens(ctx context.Context, panes []fleet.FleetPane) {}
