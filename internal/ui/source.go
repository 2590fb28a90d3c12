package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// EngineSource is the Source over the protocol engine: the same reads as 'wcomm panes',
// 'questions', 'actions', 'inbox' and 'history', the same answer as 'wcomm answer' (source "ui")
// and the same re-send as 'wcomm send --resend'.
type EngineSource struct {
	E     *tmuxcomm.Engine
	fleet *fleet.Fleet
	// read is the client the panes are read and captured through (ReadTmuxThrough).
	read fleet.Tmux
	// Getenv finds the trust list and config an approval's staleness is judged against.
	Getenv func(string) string

	mu    sync.Mutex
	first map[string]bool // which of the first screen's reads came back
	ready chan struct{}
	wake  <-chan struct{}
}

// WakeOn makes the console read the panes when wake tells of a change in them
// (paneops.Control.Changes) instead of every second. Call it before the console starts.
func (s *EngineSource) WakeOn(wake <-chan struct{}) { s.wake = wake }

// Changes implements the console's changer: nil unless WakeOn gave a channel.
func (s *EngineSource) Changes() <-chan struct{} { return s.wake }

// NewEngineSource reads the panes of scope through e.
func NewEngineSource(e *tmuxcomm.Engine, scope paneops.Scope, getenv func(string) string) *EngineSource {
	return &EngineSource{E: e, fleet: e.Fleet(scope), Getenv: getenv, ready: make(chan struct{}), first: map[string]bool{}}
}

// ReadTmuxThrough makes the panes be read through t (a client kept open) instead of the engine's.
// It is also the client a pane's screen is captured through.
func (s *EngineSource) ReadTmuxThrough(t fleet.Tmux) {
	s.fleet.ReadThrough(t)
	s.read = t
}

// Ready is closed once the first screen's reads came back (the panes, the files and the newest
// exchanges): the live feed starts after the first screen, so its first look at the whole root
// (every delivery log) does not compete with it.
func (s *EngineSource) Ready() <-chan struct{} { return s.ready }

// done notes that one of the first screen's reads came back.
func (s *EngineSource) done(read string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		return // closed already
	}
	s.first[read] = true
	if s.first["panes"] && s.first["files"] && s.first["recent"] {
		s.first = nil
		close(s.ready)
	}
}

// Panes implements Source.
func (s *EngineSource) Panes(ctx context.Context) ([]fleet.FleetPane, error) {
	defer s.done("panes")
	return s.fleet.Read(ctx)
}

// Waiting implements Source.
func (s *EngineSource) Waiting(ctx context.Context, server string, panes []messages.PaneID) (*fleet.Waiting, error) {
	return s.fleet.Waiting(ctx, server, panes)
}

// Files implements Source.
func (s *EngineSource) Files(ctx context.Context, server string, panes []messages.PaneID) (Files, error) {
	defer s.done("files")
	var f Files
	qs, probs, err := s.E.Questions(ctx, questions.QuestionsOptions{Pending: true})
	if err != nil {
		return f, err
	}
	f.Questions, f.Problems = qs, probs
	for _, q := range qs {
		if q.Action != "" {
			if f.Actions == nil {
				res, err := s.E.Actions(ctx, tmuxcomm.ActionsOptions{RunOptions: actions.RunOptions{ActionsOptions: actions.ActionsOptions{Getenv: s.Getenv}}})
				if err != nil {
					return f, err
				}
				f.Problems = append(f.Problems, res.Problems...)
				f.Actions = map[string]*actions.ActionStatus{}
				for _, a := range res.List {
					f.Actions[a.ID] = a
				}
			}
		}
	}
	if server != "" {
		w, err := s.fleet.Waiting(ctx, server, panes)
		if err != nil {
			return f, err
		}
		f.Waiting = w
	}
	return f, nil
}

// Recent implements Source.
func (s *EngineSource) Recent(ctx context.Context, n int) ([]*exchange.Exchange, error) {
	defer s.done("recent")
	return s.fleet.Recent(ctx, n)
}

// Show implements Source.
func (s *EngineSource) Show(ctx context.Context, ref string) (*exchange.Exchange, error) {
	sh, err := s.E.Show(ctx, tmuxcomm.ShowOptions{Ref: ref})
	if err != nil {
		return nil, err
	}
	if sh.Exchange == nil {
		return nil, fmt.Errorf("%s names no exchange", ref)
	}
	return sh.Exchange, nil
}

// Answer implements Source: 'wcomm answer ID RAW --source ui'.
func (s *EngineSource) Answer(ctx context.Context, id, raw string) (string, error) {
	return s.AnswerFrom(ctx, id, raw, "", "ui")
}

// AnswerFrom answers as Answer does, recorded as from source (a channel and where it was
// reached: "web 127.0.0.1:50412"), with message as a permission deny's words for the model.
func (s *EngineSource) AnswerFrom(ctx context.Context, id, raw, message, source string) (string, error) {
	// The web page's server is a command any process may start, an agent's tool included, and
	// whoever holds its URL presses its buttons: a permission answered there is judged by who
	// started it, as the command line's is. The console needs the terminal it is drawn on.
	web := strings.HasPrefix(source, "web")
	res, err := s.E.Answer(ctx, tmuxcomm.AnswerOptions{AnswerOptions: questions.AnswerOptions{ID: id, Raw: raw, Message: message, Source: source, CheckCaller: web}})
	if err != nil {
		return "", err
	}
	out := res.Line()
	if res.Warning != "" {
		out += "; " + res.Warning
	}
	return out, nil
}

// Resend implements Source: 'wcomm send --resend ID'.
func (s *EngineSource) Resend(ctx context.Context, id string) (string, error) {
	x, err := s.E.Resend(ctx, tmuxcomm.ResendOptions{Ref: id})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("re-sent %s to %s: %s", x.ID, x.Worker, x.State), nil
}

// Tell hands a person's words to the agents of the panes target names, through their outboxes
// (see tmuxcomm.Engine.Tell), and says the route each took.
func (s *EngineSource) Tell(ctx context.Context, target, text, from string) (string, error) {
	posted, err := s.E.Tell(ctx, target, text, from)
	var says []string
	for _, p := range posted {
		switch {
		case p.Queued:
			says = append(says, fmt.Sprintf("pane %s: queued in its outbox (mail %s: %s), typed in once at its next idle moment or handed over by its hook", p.Mail.Pane, p.Mail.ID, p.Reason))
		default:
			via := p.Via
			if via == "" {
				via = "typed"
			}
			says = append(says, fmt.Sprintf("pane %s: delivered now through its outbox (mail %s, %s), once", p.Mail.Pane, p.Mail.ID, via))
		}
	}
	return strings.Join(says, "; "), err
}

// capturer is the tmux client's screen capture (paneops.Client).
type capturer interface {
	Capture(ctx context.Context, pane messages.PaneID, history int) (string, error)
}

// Screen is what pane shows now, as tmux captures it (text only: no escape sequence is asked
// for; the caller still cleans what the pane's program printed).
func (s *EngineSource) Screen(ctx context.Context, pane messages.PaneID) (string, error) {
	c, ok := s.read.(capturer)
	if !ok {
		return "", fmt.Errorf("this console's tmux client cannot capture a screen")
	}
	return c.Capture(ctx, pane, 0)
}
