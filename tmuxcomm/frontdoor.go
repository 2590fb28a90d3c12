package tmuxcomm

// The front door (frontdoor*.go): what both faces of the engine, the command line and the
// MCP server, call around it, so that a command and the tool of the same name cannot disagree:
// Door builds an engine from the settings that apply (a settings file that does not load stops a
// tool as it stops a command, with its file:line), RelayOff is the one "question relay off" rule,
// and frontdoor_errors.go holds the error classes (ClassOf, UsageError, Judged) with their words.
// The typed delivery results (Signal) and their wording are in frontdoor_signal.go. A face adds
// only its own words: flag names, argument names, where it prints.

import (
	"fmt"
	"os"
	"sync"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// Door is what a face knows about its caller, from which every call's engine is built: the root,
// the tmux server, the caller's pane, the environment and the working folder. One Door serves a
// whole process (an MCP server's every call); Engine reads the settings again each time, so an
// edited settings file applies to the next call as it does to the next command.
type Door struct {
	Root string
	Tmux Tmux
	// Self is the caller's pane ($TMUX_PANE, when it belongs to the server Tmux reaches).
	Self messages.PaneID
	// CardKey names the tmux server for pane cards (CardKey); "" turns cards off.
	CardKey string
	// Getenv reads the environment (WCOMM_* overrides, the user's config folder).
	Getenv func(string) string
	// Dir is the working folder whose settings file applies; "" is the process's own.
	Dir string
	// SelfPID is the calling process, whose ancestors are the caller (the sender an exchange
	// names, the agent a question comes from); 0 is this process. The resident tmux client runs
	// a command for a caller process and sets it from the socket's peer credentials.
	SelfPID int
	// Helpers start the detached helpers (the pane's deliverer and guard, the restart watcher,
	// the answer channels' bridge; internal/helpers gives the command line's). Engine gives the
	// bridge's only when the settings configure channels, so an ask from any face reaches the
	// chat. Their zero value starts none.
	Helpers Helpers
	// Relay carries a send to HOST:TARGET to the declared host (internal/remote implements it);
	// nil: a target is never read as HOST:TARGET.
	Relay Relay
	// Once reads the settings once and keeps them, for a door that serves one command; a door
	// that serves many calls (an MCP server) leaves it false, so an edited settings file applies
	// to the next call.
	Once bool

	mu   sync.Mutex
	read *readSettings
}

// readSettings are the settings a door read, kept when Once is set.
type readSettings struct {
	s   settings.Values
	err error
}

// SettingsError is a settings file or variable that does not load: every call that works with
// exchanges or questions stops on it, with the file:line the error names.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string {
	return fmt.Sprintf("%v; fix the settings file and run the command again", e.Err)
}

// Unwrap returns the load's own error.
func (e *SettingsError) Unwrap() error { return e.Err }

// Settings loads the settings that apply in the door's folder (once, when Once is set). An error
// is a *SettingsError.
func (d *Door) Settings() (settings.Values, error) { return d.settingsIn("") }

// settingsIn is Settings for the door's folder when the caller knows it already (dir), so the
// process's folder is not asked twice a call; "" asks it, and only when the settings are read.
func (d *Door) settingsIn(dir string) (settings.Values, error) {
	if d.Once {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.read != nil {
			return d.read.s, d.read.err
		}
	}
	if dir == "" {
		dir = d.folder()
	}
	s, err := settings.Load(dir, d.getenv())
	if err != nil {
		err = &SettingsError{Err: err}
	}
	if d.Once {
		d.read = &readSettings{s: s, err: err}
	}
	return s, err
}

// getenv is the door's Getenv, or the process's.
func (d *Door) getenv() func(string) string {
	if d.Getenv == nil {
		return os.Getenv
	}
	return d.Getenv
}

// folder is the working folder whose settings apply.
func (d *Door) folder() string {
	if d.Dir != "" {
		return d.Dir
	}
	dir, _ := os.Getwd()
	return dir
}

// Engine builds one call's engine from the settings that apply. When they do not load, it
// returns the error with an engine on the default settings, for the few callers that report a
// bad file rather than stop on it (doctor); every other caller stops on the error.
func (d *Door) Engine() (*Engine, settings.Values, error) {
	dir := d.folder()
	s, err := d.settingsIn(dir)
	if err != nil {
		s = settings.Defaults()
	}
	cfg := core.New(d.Root, d.Tmux)
	cfg.Self, cfg.EnterDelay, cfg.MailTTL, cfg.NoQueue = d.Self, s.EnterDelay, s.MailTTL, s.NoQueue
	if s.Profiles != nil {
		cfg.Profiles = s.Profiles
	}
	cfg.Helpers = d.Helpers
	if !s.Channels.Any() {
		cfg.Helpers.Bridge = nil
	}
	cfg.AskedIn = dir
	if d.SelfPID > 0 {
		cfg.SelfPID = d.SelfPID
	}
	cfg.ChannelsKey = s.Channels.Key(cfg.AskedIn)
	cfg.PermissionAnswerers = s.PermissionAnswerers
	cfg.CardKey = d.CardKey
	e := build(Engine{Settings: s, Relay: d.Relay, Getenv: d.getenv(), settingsErr: err}, cfg)
	return e, s, err
}

// RelayOff is the answer to each of qs when the settings turn the question relay off (nothing is
// asked: the worker decides alone), and nil when the relay is on.
func RelayOff(s settings.Values, qs []messages.Question) []messages.Answer {
	if s.RelayEnabled {
		return nil
	}
	out := make([]messages.Answer, len(qs))
	for i, q := range qs {
		out[i] = questions.RelayOffAnswer(q.Task)
	}
	return out
}
