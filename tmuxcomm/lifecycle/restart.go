package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// The bound of restarts: at most restartTries in restartWindow, so a program that dies at every
// start is not started for ever.
const (
	restartTries  = 3
	restartWindow = 10 * time.Minute
)

// errTooMany is a restart refused by the bound.
var errTooMany = errors.New("too many restarts")

// RestartOptions are the inputs of one restart.
type RestartOptions struct {
	Target       string
	ReadyTimeout time.Duration
}

// Restarted is what a restart did.
type Restarted struct {
	Pane messages.PaneID `json:"pane"`
	Name string          `json:"name,omitempty"`
	// Resumed is the conversation taken up again ("" when the agent starts anew).
	Resumed string `json:"resumed,omitempty"`
	Ready   string `json:"ready"`
}

// Restart starts the recorded command again in the same pane (respawn-pane -k: whatever still
// runs there is ended first, so one conversation never has two live processes), with the
// agent's conversation resumed where its profile says how, waits until it is ready, and starts
// the pane's deliverer for the mail that waited meanwhile.
func (r *Room) Restart(ctx context.Context, o RestartOptions) (*Restarted, error) {
	p, err := r.Agents.Resolve(ctx, o.Target, paneops.Scope{All: true}, false)
	if err != nil {
		return nil, err
	}
	srv, err := r.Tmux.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := r.load(srv.Key(), p.ID)
	if err != nil {
		return nil, err
	}
	now := r.now().UTC()
	var recent []time.Time
	for _, t := range rec.Restarts {
		if now.Sub(t) < restartWindow {
			recent = append(recent, t)
		}
	}
	if len(recent) >= restartTries {
		return nil, fmt.Errorf("pane %s was restarted %d times in the last %s; look at why it ends ('wcomm doctor --pane %s') before starting it again: %w", p.ID, len(recent), restartWindow, p.ID, errTooMany)
	}
	prof := r.Profiles.Lookup(rec.Agent)
	argv := rec.Argv
	out := &Restarted{Pane: p.ID, Name: rec.Name}
	if prof != nil && prof.Session != nil && rec.Conversation != "" && len(prof.Session.Resume) > 0 {
		argv = withSession(rec.Argv, prof.Session.Resume, rec.Conversation)
		out.Resumed = rec.Conversation
	}
	// The restart is recorded before it is made: a restart that fails still counts.
	rec.Restarts = append(recent, now)
	if err := r.save(rec); err != nil {
		return nil, err
	}
	if err := r.Tmux.Respawn(ctx, p.ID, rec.Dir, rec.Env, argv); err != nil {
		return nil, fmt.Errorf("start %s again in pane %s: %w", rec.Argv[0], p.ID, err)
	}
	how, _, _, err := r.awaitReady(ctx, p.ID, prof, o.ReadyTimeout)
	if err != nil {
		return out, fmt.Errorf("%w; the pane is kept: 'wcomm restart %s' tries again", err, p.ID)
	}
	out.Ready = how
	if r.Deliver != nil {
		_ = r.Deliver(srv.Key(), srv.Socket, p.ID)
	}
	return out, nil
}
