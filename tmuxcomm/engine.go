// Package tmuxcomm is the protocol engine: session folders under the root, sequenced request and
// response files, send, await, notify, parse and history. It decides what happens; paneops does
// the tmux calls, behind the small Tmux interface below, so the logic is tested with a fake.
//
// Both faces (the command line and the MCP server) come in through the front door (frontdoor*.go:
// Door builds an engine from the settings, ClassOf and its kin sort and word errors, Signal words
// a hand-over). The exchange protocol is engine.go, send.go, await.go, notify.go, exchange.go,
// session.go, locate.go, history.go, ids.go, seqhint.go, files.go, bounded.go, root.go and
// publish_*.go; panes are found and reached through find.go, reach.go, panecard.go and profile.go;
// stores.go maps the root's hidden stores. The rooms, each with a doc at the top of its main
// file: the mailbox (mailbox*.go), questions (question*.go), approved actions (action*.go), the
// watch feed (watch*.go), settings and trust (settings*.go), and remote hosts (remote.go,
// hosts.go).
package tmuxcomm

import (
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
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
}

// New returns an Engine for the session folders under root (DefaultRoot when "") that drives tmux
// through t, with every setting at its default (see core.New): change a field after New to set it.
func New(root string, t Tmux) *Engine {
	return build(core.New(root, t))
}

// Copy returns an engine of its own with e's settings, for a caller that changes one of them (its
// Self, say) without changing e's: the rooms share one *core.Config, so a copy of the Engine value
// would share it too.
func (e *Engine) Copy() *Engine {
	c := *e.Config
	return build(&c)
}

// build wires the rooms over cfg.
func build(cfg *core.Config) *Engine {
	e := &Engine{Config: cfg, Book: &exchange.Book{Config: cfg}, Finder: &fleet.Finder{Config: cfg}}
	e.Finder.Mail = e
	e.Desk = &questions.Desk{Config: cfg, Book: e.Book, Finder: e.Finder, Mailer: e}
	e.Office = &mailbox.Office{Config: cfg, Book: e.Book, Finder: e.Finder, Desk: e.Desk}
	e.Registry = &actions.Registry{Config: cfg, Desk: e.Desk}
	e.Lookout = &watch.Lookout{Config: cfg, Desk: e.Desk}
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
