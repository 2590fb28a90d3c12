package lifecycle

import (
	"context"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/profile"
)

// Tmux is what the room needs of the tmux client (paneops.Client).
type Tmux interface {
	Pane(ctx context.Context, target string) (paneops.Pane, error)
	ServerInfo(ctx context.Context) (paneops.ServerInfo, error)
	Open(ctx context.Context, o paneops.PaneStart) (messages.PaneID, error)
	Respawn(ctx context.Context, pane messages.PaneID, dir string, env, argv []string) error
	KillPane(ctx context.Context, pane messages.PaneID) error
	SendKeys(ctx context.Context, pane messages.PaneID, literal bool, keys ...string) error
	Names(ctx context.Context) ([]paneops.Named, error)
	DeadStatus(ctx context.Context, pane messages.PaneID) (dead bool, status int, err error)
	Screen(ctx context.Context, pane messages.PaneID) (profile.Screen, error)
}

// Agents is what the room needs of the fleet room: which profile a pane runs, whether its
// agent's own door is open, and a target turned into a pane (names included).
type Agents interface {
	Detect(ctx context.Context, p paneops.Pane, agent string) (profile.Detection, error)
	Route(ctx context.Context, p paneops.Pane, det profile.Detection) door.Finding
	Resolve(ctx context.Context, target string, scope paneops.Scope, first bool) (paneops.Pane, error)
}

// Sender sends body to pane as any send does (an exchange, recorded in history) and returns the
// exchange's id.
type Sender func(ctx context.Context, pane messages.PaneID, body []byte) (string, error)

// Room starts, names, stops and restarts agents in panes for one caller.
type Room struct {
	// Root is the folder of session folders; the records live in its .lifecycle/.
	Root     string
	Tmux     Tmux
	Agents   Agents
	Profiles *profile.Set
	// Send delivers the first prompt; nil: a spawn with a prompt is refused.
	Send Sender
	// Deliver starts a pane's deliverer, so mail that waited in its outbox while the agent was
	// down is delivered once it is back; nil: none.
	Deliver func(server, socket string, pane messages.PaneID) error
	// StartWatcher starts the detached watcher of a pane spawned with the on-failure policy
	// (Watch is what it runs); nil: the policy is recorded, and nothing watches.
	StartWatcher func(server, socket string, pane messages.PaneID) error
	// Tell starts the bridge to the answer channels when none runs, so a pane the on-failure
	// policy gives up on is told to the person (gaveup.go); nil: the notice waits for a bridge.
	Tell func() error
	// Folder is the caller's working folder: where a spawn starts without --dir, and the
	// repository --worktree branches from.
	Folder string
	// WorktreeFolder and WorktreeSetup are the settings' worktree block.
	WorktreeFolder string
	WorktreeSetup  [][]string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// LookPath finds a command (nil: exec.LookPath).
	LookPath func(string) (string, error)
}

func (r *Room) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}
