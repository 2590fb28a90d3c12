package prompts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Asker records a permission question of the agent in pane (not the caller's own): the engine.
type Asker interface {
	AskPermissionIn(ctx context.Context, pane messages.PaneID, req messages.PermissionRequest) (*questions.PermissionWait, error)
	// Questions lists the questions under the root (a hook's question for a dialog is looked for).
	Questions(ctx context.Context, o questions.QuestionsOptions) ([]*questions.QuestionStatus, []string, error)
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
	// Read reads the panes through another client (the console's, kept open); nil: the Finder's.
	Read fleet.Tmux
	// Every is the pause between looks; 0: DefaultEvery.
	Every time.Duration
	// Wake, when set, tells of a change in the panes (paneops.Control.Changes): the sentry then
	// looks when told, and every Every only while a dialog it saw waits for its hook's grace. A
	// sentry that runs all day beside idle agents sleeps while nothing changes.
	Wake <-chan struct{}
	// Logf says what the sentry did and what failed; nil: nothing is said.
	Logf func(format string, a ...any)

	fleet  *fleet.Fleet
	wg     sync.WaitGroup
	codex  codexWatches
	screen screenWatches
}

// Keys is what the screen route needs of tmux: the pane's screen now, and one key pressed.
type Keys interface {
	Screen(ctx context.Context, pane messages.PaneID) (profile.Screen, error)
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
	if s.Read != nil {
		s.fleet.ReadThrough(s.Read)
	}
	if s.Tmux == nil {
		k, ok := s.Finder.Tmux.(Keys)
		if !ok {
			return fmt.Errorf("prompts: the engine's tmux client cannot press keys")
		}
		s.Tmux = k
	}
	holdEvery := every
	if s.Wake != nil {
		// Another sentry holds the lock (the console's, beside this bridge): taking over when it
		// ends may wait a few looks rather than wake this one every look all day.
		holdEvery = holdSlower * every
	}
	t := time.NewTicker(holdEvery)
	unlock, err := s.hold(ctx, t.C)
	t.Stop()
	if err != nil || unlock == nil {
		return err
	}
	defer unlock()
	var tick <-chan time.Time
	if s.Wake == nil {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		soon := false
		if panes, err := s.fleet.Read(ctx); err == nil {
			s.lookCodex(ctx, panes)
			soon = s.lookScreens(ctx, panes)
		} else if ctx.Err() == nil {
			s.logf("prompts: reading the panes: %v", err)
			soon = true // looked at again as without Wake
		}
		var again *time.Timer
		if s.Wake != nil && soon {
			again = time.NewTimer(every)
			tick = again.C
		}
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return nil
		case <-tick:
		case <-s.Wake:
		}
		if again != nil {
			again.Stop()
			tick = nil
		}
	}
}

// holdSlower is how many looks a sentry told of changes (Wake) waits between two tries of the
// lock another sentry holds.
const holdSlower = 5

// hold takes the sentry's lock of the root and the tmux server, waiting (a look at each tick)
// while another sentry holds it: one sentry per server and root, so one question per dialog.
// It returns a nil unlock when ctx ends first.
func (s *Sentry) hold(ctx context.Context, tick <-chan time.Time) (func(), error) {
	root, err := s.Finder.RootDir(true)
	if err != nil {
		return nil, err
	}
	si, err := s.Finder.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("prompts: no tmux server: %w", err)
	}
	dir := filepath.Join(root, store.PromptsDir)
	if err := os.MkdirAll(dir, store.DirMode); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, si.Key()+".lock")
	for {
		f, err := lock.Try(path, syscall.LOCK_EX)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-tick:
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
