// Package core holds what every room of the engine is built from: Config (the root, the tmux
// client, the caller's pane, the settings of one call and the hooks that start detached helpers),
// the Tmux interface the rooms drive tmux through, and the engine's defaults. It imports only the
// store room, paneops and messages; every room imports it.
package core

import (
	"context"
	"crypto/rand"
	"io"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/paneops/door"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// Tmux is what the engine needs from paneops.Client.
type Tmux interface {
	ServerInfo(ctx context.Context) (paneops.ServerInfo, error)
	Panes(ctx context.Context, scope paneops.Scope) ([]paneops.Pane, error)
	Pane(ctx context.Context, target string) (paneops.Pane, error)
	Deliver(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error)
	// Resume and Marks finish a delivery that a stopped process left between paste and Enter.
	Resume(ctx context.Context, d paneops.Delivery) (paneops.DeliveryResult, error)
	Marks(ctx context.Context, pane messages.PaneID, mark string) (pasted, entered string, err error)
}

// Config is what one caller's engine is built from: the root, the tmux client, the caller's pane
// and the settings of the call. Every room holds the same *Config, so a field set after New applies
// to all of them. Build it with New, which sets every field to its default.
type Config struct {
	Root string
	Tmux Tmux
	// Relayed marks the engine of a remote wcomm delivering for an orchestrator on another host
	// (package relay): Self is that orchestrator's pane there, not a pane of this host.
	Relayed bool
	// Procs scans the process table (proc.Scan).
	Procs func() (*proc.Table, error)
	// PaneProcs reads only what detection needs about one pane (proc.ScanPane): the pane's
	// tree, its foreground group and the ancestors of also. nil: Detect uses Procs. A caller
	// that gives Procs a table of its own sets this too (or clears it), so that table is the
	// only one detection sees.
	PaneProcs func(panePID int, also ...int) (*proc.Table, error)
	// PanesProcs reads only what a find among panes looks at (proc.ScanPanesBeside): the panes'
	// trees, the orphans of their sessions and the ancestors of also; leaders are the server's
	// other panes' processes, which it need not read. nil: a find uses Procs. A caller that
	// gives Procs a table of its own clears it, as it does PaneProcs.
	PanesProcs func(panePIDs, leaders []int, also ...int) (*proc.Table, error)
	// Self is the caller's own pane ($TMUX_PANE); empty outside tmux.
	Self messages.PaneID
	// SelfPID is the caller's pid: it and its ancestors never match a find.
	SelfPID int

	EnterDelay  time.Duration
	LockTimeout time.Duration
	// PasteLimit and LineLimit bound what is pasted whole; a bigger request is delivered as a
	// pointer line to its file. LineLimit exists because a cooked-mode reader (cat, read) silently
	// drops a line longer than the kernel's 4096-byte canonical buffer, Enter included.
	PasteLimit int
	LineLimit  int
	// Command is how instructions name this tool ("wcomm").
	Command string

	// Profiles are the agent profiles (nil: profile.Defaults, the embedded ones).
	Profiles *profile.Set
	// TTYMode reads whether a pane's terminal is in cooked mode (nil: paneops.TTYCanonical).
	TTYMode paneops.TTYModeFunc
	// BusyWait bounds the wait for a target's input box to be usable: empty (no one's text in it),
	// on screen, and the agent idle. 0 means DefaultBusyWait; see Delivery.BusyWait.
	BusyWait time.Duration

	// NoQueue makes every delivery fail fast as it did before the mailbox: it waits up to BusyWait
	// and is refused when the pane is still not ready, instead of waiting in the pane's outbox.
	NoQueue bool
	// CardKey, when set, lets a send to a pane id use the record of the pane's last lookup
	// instead of a tmux call (the fleet room's pane cards). It names the tmux server the client reaches
	// (CardKey()); "" turns cards off.
	CardKey string
	// LeanAwait leaves the request's body out of the exchange Await returns, for a caller that
	// prints only the response: a request of megabytes is then not held beside the response.
	LeanAwait bool
	// WatchAwait makes Await wait on its folder's inotify watch at once, without the quick poll
	// first: for a process that lives on (the MCP server), which pays no slower exit for holding
	// a watch, and wakes once when the response lands instead of every quickPoll.
	WatchAwait bool
	// MailTTL bounds how long a message waits in an outbox (0: DefaultMailTTL).
	MailTTL time.Duration
	// Helpers start the detached helpers the engine needs (the pane's deliverer and guard, the
	// restart watcher, the answer channels' bridge): one value given when the engine is built.
	Helpers Helpers
	// ChannelsKey is the key of the answer channels that apply where this engine runs
	// (messages.ChannelsConfig.Key), recorded in each question it asks so that only a bridge of
	// those channels posts it; "" records none (the front door sets it).
	ChannelsKey string
	// AskedIn is the folder whose settings apply, recorded beside ChannelsKey.
	AskedIn string
	// PermissionAnswerers are the agents (profile names) and panes (%N) the settings allow to
	// answer an agent's permission prompt; nobody else but the person may.
	PermissionAnswerers []string
	// Door finds an agent's own door into a pane's session and writes through it (mailbox/route.go);
	// the zero value reads the real process table and the agent's files.
	Door door.Finder

	Now  func() time.Time
	Rand io.Reader
}

// Helpers start the engine's detached helpers: each a process of its own that outlives the call
// that needs it (the command line starts wcomm itself detached, internal/helpers). A nil one
// starts none of its kind.
type Helpers struct {
	// Deliverer starts a process that runs the pane's deliverer (mailbox.Office.RunDeliverer).
	// nil: queued mail waits until a later send, an inbox or a hook of that pane, or a deliverer
	// run by the library's user.
	Deliverer func(server, socket string, pane messages.PaneID) error
	// Guard starts a process that guards the deliveries process pid makes into pane
	// (mailbox.Office.GuardDelivery). nil: none.
	Guard func(server, socket string, pane messages.PaneID, pid int) error
	// Watcher starts a process that watches a pane spawned with a restart policy and restarts
	// its program when it fails. nil: nothing watches, and the policy is only recorded.
	Watcher func(server, socket string, pane messages.PaneID) error
	// Bridge starts a bridge to the answer channels when none runs: an ask and a wait start it
	// before they relay or wait, so a question reaches the chat whichever face asked it (the front
	// door gives it only when channels are configured). nil: no channels.
	Bridge func() error
}

// Defaults of the engine's settings.
const (
	DefaultLockTimeout = 30 * time.Second
	DefaultPasteLimit  = 64 << 10
	DefaultLineLimit   = 4000
	DefaultBusyWait    = 10 * time.Second
)

// MaxCallWait is the longest one call of a long-lived client (an MCP tool call: await, ask) waits
// for a response or an answer. Clients give up on a call that runs too long, so a wait is bounded
// and the call repeated; install-mcp sets agents' tool limits above it.
const MaxCallWait = 10 * time.Minute

// New returns an Engine for the session folders under root (DefaultRoot when "") that drives tmux
// through t, with every other setting at its default (EnterDelay 0: the pause the target's profile
// asks for, nothing more; the command line sets DefaultEnterDelay or the settings'): change a field
// after New to set it. Built
// whole here, an Engine is never filled in later, so one Engine serves concurrent calls.
func New(root string, t Tmux) *Config {
	if root == "" {
		root = store.DefaultRoot
	}
	return &Config{
		Root:        root,
		Tmux:        t,
		Procs:       proc.Scan,
		PaneProcs:   proc.ScanPane,
		PanesProcs:  proc.ScanPanesBeside,
		SelfPID:     proc.SelfPID(),
		LockTimeout: DefaultLockTimeout,
		PasteLimit:  DefaultPasteLimit,
		LineLimit:   DefaultLineLimit,
		Command:     "wcomm",
		Profiles:    profile.Defaults(),
		TTYMode:     paneops.DefaultTTYMode(),
		BusyWait:    DefaultBusyWait,
		Now:         time.Now,
		Rand:        rand.Reader,
	}
}

// RootDir returns the checked absolute root, creating it (0700) when create is set.
func (c *Config) RootDir(create bool) (string, error) {
	return store.EnsureRoot(c.Root, create)
}

// NotifyCommand is the line the instructions give a worker that has wcomm.
func (c *Config) NotifyCommand(responsePath string) string {
	return c.Command + " notify --response " + responsePath + " --file ANSWER.md"
}

// ReadRoot is RootDir for a reader (store.ReadRoot): found is false, with no error, only when the
// root does not exist yet; an unsafe root is an error for every reader alike.
func (c *Config) ReadRoot() (root string, found bool, err error) {
	return store.ReadRoot(c.Root)
}
