package prompts

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Asker records a permission question of the agent in pane (not the caller's own): the engine.
type Asker interface {
	AskPermissionIn(ctx context.Context, pane messages.PaneID, req messages.PermissionRequest) (*questions.PermissionWait, error)
}

// DefaultEvery is the pause between two looks at the panes: a dialog is a question within about
// this much of showing (the hooks' route is faster; this one is for agents without it).
const DefaultEvery = 300 * time.Millisecond

// Sentry watches the panes of one tmux server for the agents' own prompts.
type Sentry struct {
	Finder *fleet.Finder
	Asker  Asker
	// Tmux presses a dialog's keys and captures its screen; nil: the Finder's client.
	Tmux Keys
	// Every is the pause between looks; 0: DefaultEvery.
	Every time.Duration
	// Logf says what the sentry did and what failed; nil: nothing is said.
	Logf func(format string, a ...any)

	fleet  *fleet.Fleet
	wg     sync.WaitGroup
	codex  codexWatches
	screen screenWatches
}

// Keys is what the screen route needs of tmux: the pane's screen now, and one key pressed.
type Keys interface {
	Screen(ctx context.Context, pane messages.PaneID) (paneops.Screen, error)
	PressKey(ctx context.Context, pane messages.PaneID, key string) error
}

// Run watches until ctx ends, then waits for the questions it opened to be left (each ends as
// its own wait does: an answer, the terminal, or expiry).
func (s *Sentry) Run(ctx context.Context) error {
	if s.Finder == nil || s.Asker == nil {
		return fmt.Errorf("prompts: a sentry needs the engine's finder and asker")
	}
	every := s.Every
	if every <= 0 {
		every = DefaultEvery
	}
	s.fleet = s.Finder.NewFleet(paneops.Scope{All: true})
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if panes, err := s.fleet.Panes(ctx); err == nil {
			s.lookCodex(ctx, panes)
			s.lookScreens(ctx, panes)
		} else if ctx.Err() == nil {
			s.logf("prompts: reading the panes: %v", err)
		}
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return nil
		case <-t.C:
		}
	}
}

// spawn runs f in a goroutine that Run waits for.
func (s *Sentry) spawn(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

func (s *Sentry) logf(format string, a ...any) {
	if s.Logf != nil {
		s.Logf(format, a...)
	}
}
