// Package tmuxcomm is the engine's front door. Both faces (the command line and the MCP server),
// and the rooms beside them (the bridge, the console, the remote side), come in through it: Door
// builds one call's Engine from the settings that apply; ClassOf and its kin sort errors into the
// classes both faces report, with one wording; Send, Await and Notify are the exchange protocol's
// entry points. The work is done in the rooms below, each a package under tmuxcomm/ with a doc
// saying what it owns: store (files, the root, locks, the watcher), core (what every room is
// built from), settings, exchange (the exchanges' files), fleet (panes), questions, mailbox,
// actions, watch (the live feed), relay (remote hosts), broadcast (sends to several panes) and
// loops (which chain a request continues, and whether it is over a cap; it holds no state, and
// frontdoor_loops.go asks it). Engine embeds one of each of the others over a shared *core.Config, so their methods are the Engine's.
// Imports run one way: this package imports the rooms, a room imports only rooms below it and
// names what it needs of a room above as a small interface that Engine satisfies (fleet.Mail,
// questions.Mailer, relay.Sender, broadcast.Sender).
// paneops does the tmux calls, behind core.Tmux, so the logic is tested with a fake.
package tmuxcomm

import (
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/relay"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Tmux is what the engine needs from paneops.Client.
type Tmux = core.Tmux

// Engine runs the protocol for one caller: the rooms of the engine over one *core.Config, whose
// fields (Root, Self, EnterDelay, ...) it promotes. Build it with New.
type Engine struct {
	*core.Config
	*exchange.Book
	*fleet.Finder
	*questions.Desk
	*mailbox.Office
	*actions.Registry
	*watch.Lookout
	*relay.Station
	*broadcast.Caster

	// Settings are the settings the engine was built from (Door.Engine); New sets the defaults.
	// The rules the door holds for every face (the ask's defaults, the hosts a send may name)
	// read them here.
	Settings settings.Values
	// Relay carries a send to a worker on a declared host (Send routes HOST:TARGET to it); nil:
	// a target is never read as HOST:TARGET.
	Relay Relay
	// Getenv reads the environment for the door's rules (the ask's WCOMM_TASK); nil: os.Getenv.
	Getenv func(string) string
}

// New returns an Engine for the session folders under root (DefaultRoot when "") that drives tmux
// through t, with every setting at its default (see core.New): change a field after New to set it.
func New(root string, t Tmux) *Engine {
	e := build(core.New(root, t))
	e.Settings = settings.Defaults()
	return e
}

// Copy returns an engine of its own with e's settings, for a caller that changes one of them (its
// Self, say) without changing e's: the rooms share one *core.Config, so a copy of the Engine value
// would share it too.
func (e *Engine) Copy() *Engine {
	c := *e.Config
	cp := build(&c)
	cp.Settings, cp.Relay, cp.Getenv = e.Settings, e.Relay, e.Getenv
	return cp
}

// build wires the rooms over cfg.
func build(cfg *core.Config) *Engine {
	e := &Engine{Config: cfg, Book: &exchange.Book{Config: cfg}, Finder: &fleet.Finder{Config: cfg}}
	e.Finder.Mail = e
	e.Desk = &questions.Desk{Config: cfg, Book: e.Book, Finder: e.Finder, Mailer: e}
	e.Office = &mailbox.Office{Config: cfg, Book: e.Book, Finder: e.Finder, Desk: e.Desk}
	e.Registry = &actions.Registry{Config: cfg, Desk: e.Desk}
	e.Lookout = &watch.Lookout{Config: cfg, Desk: e.Desk}
	e.Station = &relay.Station{Config: cfg, Book: e.Book, Sender: e}
	e.Caster = &broadcast.Caster{Config: cfg, Book: e.Book, Finder: e.Finder, Sender: e,
		Groups: func() map[string][]string { return e.Settings.Groups }}
	return e
}

// Defaults of the engine's settings.
const (
	DefaultLockTimeout = core.DefaultLockTimeout
	DefaultPasteLimit  = core.DefaultPasteLimit
	DefaultLineLimit   = core.DefaultLineLimit
	DefaultBusyWait    = core.DefaultBusyWait
	MaxCallWait        = core.MaxCallWait
)
