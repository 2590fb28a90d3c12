// Package tmuxcomm is the engine's front door. Both faces (the command line and the MCP server),
// and the rooms beside them (the bridge, the console, the remote side), come in through it: Door
// builds one call's Engine from the settings that apply; ClassOf and its kin sort errors into the
// classes both faces report, with one wording; Send, Await and Notify are the exchange protocol's
// entry points. The work is done in the rooms below, each a package under tmuxcomm/ with a doc
// saying what it owns: store (files, the root, locks, the watcher), core (what every room is
// built from), settings, exchange (the exchanges' files), fleet (panes), questions, mailbox,
// actions, watch (the live feed), relay (remote hosts), broadcast (sends to several panes) and
// loops (which chain a request continues, and whether it is over a cap; it holds no state, and
// frontdoor_loops.go asks it). Engine holds one of each of the others over a shared
// *core.Config, as unexported fields: a face reaches a room only through the door's verbs, one
// method per verb (Send, Await, Ask, Answer, Hook, Spawn, ...), never a method a room happens to
// export.
// Imports run one way: this package imports the rooms, a room imports only rooms below it and
// names what it needs of a room above as a small interface that the door satisfies through an
// adapter (fleet.Mail and questions.Mailer through mail, relay.Sender and broadcast.Sender
// through sender, prompts.Asker through asker). An engine is not changed
// once built: what a call chooses travels in its options (Choices), and a call that chooses
// something runs on rooms built for it (derive).
// paneops does the tmux calls, behind core.Tmux, so the logic is tested with a fake.
package tmuxcomm

import (
	"context"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"

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

// Helpers start the engine's detached helpers (see core.Helpers).
type Helpers = core.Helpers

// Engine runs the protocol for one caller: the rooms of the engine over one *core.Config. Build
// it with New (or Door.Engine); its fields are read-only after that.
type Engine struct {
	// The rooms, over one config; only the door's methods reach them, so what a face can do is
	// the door's verbs and nothing a room happens to export.
	cfg      *core.Config
	book     *exchange.Book
	finder   *fleet.Finder
	desk     *questions.Desk
	office   *mailbox.Office
	registry *actions.Registry
	lookout  *watch.Lookout
	station  *relay.Station
	caster   *broadcast.Caster

	// Settings are the settings the engine was built from (Door.Engine); New sets the defaults.
	// The rules the door holds for every face (the ask's defaults, the hosts a send may name)
	// read them here.
	Settings settings.Values
	// Relay carries a send to a worker on a declared host (Send routes HOST:TARGET to it); nil:
	// a target is never read as HOST:TARGET.
	Relay Relay
	// Getenv reads the environment for the door's rules (the ask's WCOMM_TASK); nil: os.Getenv.
	Getenv func(string) string

	// settingsErr is why the settings did not load, when the door built this engine on the
	// defaults instead: the hooks, which run whatever the file says, still refuse to ask on it.
	settingsErr error
}

// New returns an Engine for the session folders under root (DefaultRoot when "") that drives tmux
// through t, with every setting at its default (see core.New). A call's own choices (its pane,
// the enter delay, the busy wait, ...) travel in its options: the engine is not changed after it
// is built, so one engine serves concurrent calls.
func New(root string, t Tmux) *Engine {
	return build(Engine{Settings: settings.Defaults()}, core.New(root, t))
}

// build returns an engine with the door's own fields of tmpl (its settings, relay, ...) and the
// rooms wired anew over cfg.
func build(tmpl Engine, cfg *core.Config) *Engine {
	e := &tmpl
	e.cfg = cfg
	e.book = &exchange.Book{Config: cfg, Numbers: keptNumbers}
	e.finder = &fleet.Finder{Config: cfg}
	e.finder.Mail = mail{e}
	e.desk = &questions.Desk{Config: cfg, Book: e.book, Finder: e.finder, Mailer: mail{e}}
	e.office = &mailbox.Office{Config: cfg, Book: e.book, Finder: e.finder, Desk: e.desk}
	e.registry = &actions.Registry{Config: cfg, Desk: e.desk}
	e.lookout = &watch.Lookout{Config: cfg, Desk: e.desk}
	e.station = &relay.Station{Config: cfg, Book: e.book, Sender: sender{e}}
	e.caster = &broadcast.Caster{Config: cfg, Book: e.book, Finder: e.finder, Sender: sender{e},
		Groups: func() map[string][]string { return e.Settings.Groups }}
	return e
}

// callConfig is what one call chooses of the config its rooms are built over (see Choices); a
// nil or false field keeps the engine's.
type callConfig struct {
	self *messages.PaneID
	// relayed marks a send relayed here from an orchestrator on another host (self is its pane there).
	relayed    bool
	enterDelay *time.Duration
	// busyWait 0 is no wait at all (the config's own 0 is its default).
	busyWait *time.Duration
	noQueue  *bool
	ttl      *time.Duration
	lean     bool
	watch    bool
	// tmux is another client for the call's calls (the resident's own); it also starts no guard.
	tmux Tmux
	// noDeliverer: a deliverer starts no other deliverer.
	noDeliverer bool
}

// derive returns the engine of one call that chooses something of its own: the rooms built anew
// over a copy of e's config with ch applied, beside e's own fields. Beside build, it is the only
// place a config is filled in; e itself is never changed, so calls made at once never see each
// other's choices.
func (e *Engine) derive(ch callConfig) *Engine {
	cfg := *e.cfg
	if ch.self != nil {
		cfg.Self = *ch.self
	}
	cfg.Relayed = cfg.Relayed || ch.relayed
	if ch.enterDelay != nil {
		cfg.EnterDelay = *ch.enterDelay
	}
	if ch.busyWait != nil {
		cfg.BusyWait = *ch.busyWait
		if cfg.BusyWait == 0 {
			cfg.BusyWait = -1 // the config's 0 is its default; a negative wait is none
		}
	}
	if ch.noQueue != nil {
		cfg.NoQueue = *ch.noQueue
	}
	if ch.ttl != nil {
		cfg.MailTTL = *ch.ttl
	}
	cfg.LeanAwait = cfg.LeanAwait || ch.lean
	cfg.WatchAwait = cfg.WatchAwait || ch.watch
	if ch.tmux != nil {
		cfg.Tmux, cfg.Helpers.Guard = ch.tmux, nil
	}
	if ch.noDeliverer {
		cfg.Helpers.Deliverer = nil
	}
	return build(*e, &cfg)
}

// mail is the mailbox as the rooms below it see it (fleet.Mail, questions.Mailer): they are built
// before the office, which needs them, so it is reached when called.
type mail struct{ e *Engine }

func (m mail) Pending(root, server string, pane messages.PaneID) []messages.Mail {
	return m.e.office.Pending(root, server, pane)
}

func (m mail) Post(ctx context.Context, root string, ml messages.Mail, pane paneops.Pane, srv paneops.ServerInfo) (*core.Posted, error) {
	return m.e.office.Post(ctx, root, ml, pane, srv)
}

// sender is the door as the rooms that send (relay, broadcast) see it: one plain send, one
// await, and whether a target is on a declared host.
type sender struct{ e *Engine }

func (s sender) Send(ctx context.Context, o core.SendOptions) (*exchange.Exchange, error) {
	return s.e.sendOne(ctx, o)
}

func (s sender) AwaitThen(ctx context.Context, ref string, timeout time.Duration, out func(*exchange.Exchange) error) (*exchange.Exchange, error) {
	return s.e.awaitOne(ctx, ref, timeout, out)
}

func (s sender) HostTarget(to string) (bool, error) {
	_, _, ok, err := s.e.hostTarget(to)
	return ok, err
}

// Defaults of the engine's settings.
const (
	DefaultLockTimeout = core.DefaultLockTimeout
	DefaultPasteLimit  = core.DefaultPasteLimit
	DefaultLineLimit   = core.DefaultLineLimit
	DefaultBusyWait    = core.DefaultBusyWait
	MaxCallWait        = core.MaxCallWait
)
