package tmuxcomm

// The lifecycle room's entry points (tmuxcomm/lifecycle): Spawn, Stop and Restart, the same for
// the command line and the MCP server.

import (
	"context"
	"errors"
	"os"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/lifecycle"
)

// SpawnOptions are the inputs of one spawn: the lifecycle room's, and the capability its first
// prompt is sent with.
type SpawnOptions struct {
	lifecycle.SpawnOptions
	// Capability of the first prompt ("": DefaultCapability).
	Capability messages.Capability
}

// Spawned, StopOptions, Stopped, RestartOptions and Restarted are the lifecycle room's.
type (
	Spawned        = lifecycle.Spawned
	StopOptions    = lifecycle.StopOptions
	Stopped        = lifecycle.Stopped
	RestartOptions = lifecycle.RestartOptions
	Restarted      = lifecycle.Restarted
)

// The tmux client is what the lifecycle room drives.
var _ lifecycle.Tmux = (*paneops.Client)(nil)

// errNoLifecycle is an engine whose tmux client cannot open panes (a test's fake).
var errNoLifecycle = errors.New("this engine's tmux client cannot start or stop panes")

// lifecycleRoom builds the lifecycle room over the engine; capability is the first prompt's. The
// room of a pane's watcher (watching) starts no watcher: it is one.
func (e *Engine) lifecycleRoom(capability messages.Capability, watching bool) (*lifecycle.Room, error) {
	t, ok := e.cfg.Tmux.(lifecycle.Tmux)
	if !ok {
		return nil, errNoLifecycle
	}
	profiles := e.cfg.Profiles
	if profiles == nil {
		profiles = profile.Defaults()
	}
	folder := e.cfg.AskedIn
	if folder == "" {
		folder, _ = os.Getwd()
	}
	r := &lifecycle.Room{Root: e.cfg.Root, Tmux: t, Agents: e.finder, Profiles: profiles, Folder: folder,
		WorktreeFolder: e.Settings.WorktreeFolder, WorktreeSetup: e.Settings.WorktreeSetup,
		Deliver: e.cfg.Helpers.Deliverer, Tell: e.cfg.Helpers.Bridge}
	if !watching {
		r.StartWatcher = e.cfg.Helpers.Watcher
	}
	r.Send = func(ctx context.Context, pane messages.PaneID, body []byte) (string, error) {
		x, err := e.Send(ctx, SendOptions{To: string(pane), Body: body, Capability: capability})
		if x != nil {
			return x.ID, err
		}
		return "", err
	}
	return r, nil
}

// Spawn starts an agent in a new pane and returns once it is ready for input, its first prompt
// sent as any send is (see lifecycle.Room.Spawn). A first prompt needs the caller's pane, as a
// send does: that is checked before anything starts.
func (e *Engine) Spawn(ctx context.Context, o SpawnOptions) (*Spawned, error) {
	if len(o.Prompt) > 0 && e.cfg.Self == "" {
		return nil, e.cfg.NeedOwnPane(ctx, "spawn with --prompt from the orchestrator's pane (its response comes back there), or spawn without it and send later")
	}
	if o.Capability != "" {
		if _, err := ParseCapability(string(o.Capability)); err != nil {
			return nil, err
		}
	}
	r, err := e.lifecycleRoom(o.Capability, false)
	if err != nil {
		return nil, err
	}
	return r.Spawn(ctx, o.SpawnOptions)
}

// Stop ends the agent in a pane, its own quit first, then the pane (see lifecycle.Room.Stop).
func (e *Engine) Stop(ctx context.Context, o StopOptions) (*Stopped, error) {
	r, err := e.lifecycleRoom("", false)
	if err != nil {
		return nil, err
	}
	return r.Stop(ctx, o)
}

// Restart starts a spawned pane's command again in the same pane, its conversation resumed where
// the agent can (see lifecycle.Room.Restart).
func (e *Engine) Restart(ctx context.Context, o RestartOptions) (*Restarted, error) {
	r, err := e.lifecycleRoom("", false)
	if err != nil {
		return nil, err
	}
	return r.Restart(ctx, o)
}
