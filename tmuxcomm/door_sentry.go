package tmuxcomm

import (
	"context"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/prompts"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Sentry returns the watcher of the agents' own prompts that no hook brings (Codex's approvals,
// dialogs on screen) over the engine's panes, asking through the door: read is the client it
// reads the panes through (nil: the engine's), every the pause between looks (0:
// prompts.DefaultEvery), logf where it says what it did (nil: nowhere). Start it with its Start.
func (e *Engine) Sentry(read fleet.Tmux, every time.Duration, logf func(format string, a ...any)) *prompts.Sentry {
	return &prompts.Sentry{Finder: e.finder, Asker: asker{e}, Read: read, Every: every, Logf: logf}
}

// asker is the door as the sentry asks through it.
type asker struct{ e *Engine }

func (a asker) AskPermissionIn(ctx context.Context, pane messages.PaneID, req messages.PermissionRequest) (*questions.PermissionWait, error) {
	return a.e.askPermissionIn(ctx, pane, req)
}

func (a asker) Questions(ctx context.Context, o questions.QuestionsOptions) ([]*questions.QuestionStatus, []string, error) {
	return a.e.Questions(ctx, o)
}
