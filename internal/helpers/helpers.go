// Package helpers starts the detached helpers of a command's engine, the core.Helpers value its
// door is built with: the deliverer of a pane's outbox ('wcomm __deliver'), the guard of this
// process's deliveries ('wcomm __deliver --guard PID', handed to the resident tmux client when one
// runs), the watcher of a pane spawned with a restart policy ('wcomm __watch') and the bridge to
// the answer channels (the companion program wcomm-bridge). Each starts through internal/launch,
// detached, its diagnostics in a log inside the root. The engine calls them; the command line only
// gives them, so the engine never calls up into the command line. It imports the launcher, the
// resident's calling side, the rooms whose logs the helpers write and the bridge's lock and token
// checks (not the bridge itself, which links net/http).
package helpers

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wcomm/wcomm/internal/bridge/lockfile"
	"github.com/wcomm/wcomm/internal/bridge/tokens"
	"github.com/wcomm/wcomm/internal/launch"
	"github.com/wcomm/wcomm/internal/resident"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/tmuxd"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/lifecycle"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// BridgeProgram is the companion program that runs the answer channels.
const BridgeProgram = "wcomm-bridge"

// SpawnedIdleExit is how long a bridge an ask started waits with nothing pending before it ends:
// long enough to outlast the gap between the ask that started it and its question
// (WCOMM_BRIDGE_IDLE_EXIT sets another).
const SpawnedIdleExit = 30 * time.Second

// Where is what the helpers of one command need to know: its root and tmux server, and how to
// reach what it knows lazily.
type Where struct {
	Ctx    context.Context
	Root   string
	Server paneops.Server
	Getenv func(string) string
	// Resident is the calling side of the resident tmux client (made when first asked); nil, or
	// returning nil: none runs, and a guard is a process of its own.
	Resident func() *tmuxd.Resident
	// Settings are the settings that apply (the door's): the bridge's channels.
	Settings func() (settings.Values, error)
}

// New returns the helpers of w. Their zero parts are none: a Where without Settings starts no
// bridge.
func New(w Where) core.Helpers {
	h := core.Helpers{
		Deliverer: func(server, socket string, pane messages.PaneID) error {
			return spawnDeliver(w.Root, server, socket, pane)
		},
		Guard:   w.guard,
		Watcher: w.watcher,
	}
	if w.Settings != nil {
		h.Bridge = w.bridge
	}
	return h
}

// spawnDeliver starts 'wcomm __deliver' with extra arguments, detached, so it outlives the
// command that queued and no signal to that command's process group reaches it. Its diagnostics
// go to deliverer.log in the outbox folder.
func spawnDeliver(root, server, socket string, pane messages.PaneID, extra ...string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	args := append([]string{"__deliver", "--root", abs, "--server", server, "--pane", string(pane)}, extra...)
	if socket != "" {
		args = append(args, "-S", socket)
	}
	return launch.Start(launch.Helper{Args: args, OpenLog: func() (*os.File, error) { return mailbox.OpenDelivererLog(abs, server, pane) }})
}

// guard hands this process's guard to the resident, and only when the resident does not take it
// starts 'wcomm __deliver --guard PID', detached as a deliverer is.
func (w Where) guard(server, socket string, pane messages.PaneID, pid int) error {
	spawn := func(server, socket string, pane messages.PaneID, pid int) error {
		return spawnDeliver(w.Root, server, socket, pane, "--guard", strconv.Itoa(pid))
	}
	var r *tmuxd.Resident
	if w.Resident != nil {
		r = w.Resident()
	}
	ctx := w.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return resident.Guard(ctx, r, spawn)(server, socket, pane, pid)
}

// watcher starts 'wcomm __watch' for a spawned pane, detached as a deliverer is; its
// diagnostics go beside the pane's record.
func (w Where) watcher(server, socket string, pane messages.PaneID) error {
	abs, err := filepath.Abs(w.Root)
	if err != nil {
		return err
	}
	args := []string{"__watch", "--root", abs, "--server", server, "--pane", string(pane)}
	if socket != "" {
		args = append(args, "-S", socket)
	}
	return launch.Start(launch.Helper{Args: args, OpenLog: func() (*os.File, error) { return lifecycle.OpenWatchLog(abs, server, pane) }})
}

// bridge starts a bridge detached for this root when none runs, so a question reaches the chat
// without anyone having started one, whichever face (an ask or the MCP server's ask tool) asked
// it. The engine calls it only when channels are configured, and turns a failure into a warning:
// the question still reaches the orchestrator's pane. The bridge's diagnostics go to bridge.log
// in the root's .bridge folder.
func (w Where) bridge() error {
	abs, err := filepath.Abs(w.Root)
	if err != nil {
		return err
	}
	s, err := w.Settings()
	if err != nil {
		return err
	}
	key, _ := ChannelsKey(s, w.Getenv)
	if lockfile.Running(abs, key) {
		return nil
	}
	// A bridge that cannot build its channels dies at once, its reason only in its log: the ask
	// says it now instead.
	if err := tokens.Check(s.Channels, w.Getenv); err != nil {
		return ChannelsError{err}
	}
	path, err := launch.Find(BridgeProgram, "the bridge")
	if err != nil {
		return err
	}
	if _, err := store.EnsureRoot(abs, true); err != nil {
		return err
	}
	if err := lockfile.MakeDir(abs, key); err != nil {
		return err
	}
	idle := SpawnedIdleExit
	if v := w.Getenv("WCOMM_BRIDGE_IDLE_EXIT"); v != "" {
		if d, err := settings.ParseDuration(v); err == nil && d > 0 {
			idle = d
		}
	}
	// It runs in this folder, so that it reads the settings this ask read.
	args := append([]string{"bridge", "--root", abs}, ServerArgs(w.Server)...)
	args = append(args, "--idle-exit", idle.String())
	return launch.Start(launch.Helper{Path: path, Args: args, Log: lockfile.LogPath(abs, key)})
}

// ServerArgs names a tmux server to a program started for it.
func ServerArgs(s paneops.Server) []string {
	if s.Socket != "" {
		return []string{"-S", s.Socket}
	} else if s.Name != "" {
		return []string{"-L", s.Name}
	}
	return nil
}

// ChannelsKey is the key of the channels s configures, as an ask in this folder records it, and
// whether they are the user's own (the settings of no project): those also serve the questions
// that record no key. A bridge runs per root and key, so a project's channels carry only the
// questions asked where they apply.
func ChannelsKey(s settings.Values, getenv func(string) string) (key string, own bool) {
	dir, _ := os.Getwd()
	key = s.Channels.Key(dir)
	user, err := settings.Load("", getenv)
	return key, err == nil && user.Channels.Key(dir) == key
}

// ChannelsError is a configuration of answer channels no bridge can run: it says so, and is
// core.ErrChannelsUnusable for the ask, which words it apart from a bridge that failed to start.
type ChannelsError struct{ Err error }

func (e ChannelsError) Error() string {
	return "your answer channels cannot be reached: " + e.Err.Error()
}

// Unwrap returns the channels' own error and core.ErrChannelsUnusable.
func (e ChannelsError) Unwrap() []error { return []error{e.Err, core.ErrChannelsUnusable} }
