package tmuxcomm

// The door's verbs that a room does most of: the inbox (a pane's, or the person's dead letters),
// the live feed, and the approved actions with the trust of a settings file. An intent named by
// the end of its question's id is found here.

import (
	"context"
	"os"
	"sort"

	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/lifecycle"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Inbox takes (or with o.Take unset, looks at) what waits in a pane's outbox, oldest first (see
// mailbox.Office.Inbox). With o.Dead it reads the person's inbox instead: all that the answer
// channels tell a person once, oldest first: the mailbox's dead letters and held requests, and the
// panes the on-failure policy gave up on.
func (e *Engine) Inbox(ctx context.Context, o mailbox.InboxOptions) (*mailbox.InboxResult, error) {
	res, err := e.office.Inbox(ctx, o)
	if err != nil || !o.Dead {
		return res, err
	}
	root, found, err := e.cfg.ReadRoot()
	if err != nil || !found {
		return res, nil
	}
	gs, probs := lifecycle.GaveUpSince(root, o.Since, e.cfg.Now())
	for _, g := range gs {
		res.Dead = append(res.Dead, mailbox.DeadLetter{ID: g.ID, Pane: g.Pane, State: lifecycle.StateNotRestarted, At: g.At,
			Detail: g.Words(), Next: g.Next()})
	}
	sort.SliceStable(res.Dead, func(i, j int) bool { return res.Dead[i].At.Before(res.Dead[j].At) })
	res.Problems = append(res.Problems, probs...)
	return res, nil
}

// Watch follows what happens under the root as events, calling emit for each, until ctx ends or
// emit returns an error (see watch.Lookout.Watch).
func (e *Engine) Watch(ctx context.Context, o watch.WatchOptions, emit func(watch.WatchEvent) error) error {
	return e.lookout.Watch(ctx, o, emit)
}

// ActionsOptions say what Actions does: list the approved-action intents (the zero value; ID
// selects one by its question's id or the end of it), run the approved ones (Run: the
// dispatcher, with DryRun and Timeout), or trust a project's settings file so the commands it
// names apply (Trust). Getenv, when nil, is the engine's.
type ActionsOptions struct {
	actions.RunOptions
	Run bool
	// Trust is the settings file to trust as it is now (see settings.TrustConfig); only the
	// person may, never an agent's command.
	Trust string
}

// ActionsResult is what Actions found or did.
type ActionsResult struct {
	// List and Problems are the intents with their status and the files that did not read.
	List     []*actions.ActionStatus
	Problems []string
	// Runs say what the dispatcher did with each intent (Run).
	Runs []*actions.ActionRun
	// Trusted is the path of the file trusted, and Sum its sha256 (Trust).
	Trusted, Sum string
}

// Actions lists the approved-action intents, runs the approved ones or trusts a settings file
// (see ActionsOptions). A run that did not run the intent named by ID returns its runs with an
// error wrapping actions.ErrNotRun.
func (e *Engine) Actions(ctx context.Context, o ActionsOptions) (*ActionsResult, error) {
	if o.Getenv == nil {
		o.Getenv = e.getenv()
	}
	if o.Trust != "" {
		return e.trust(ctx, o.Trust, o.Getenv)
	}
	if o.ID != "" {
		id, err := e.desk.QuestionID(o.ID)
		if err != nil {
			return nil, err
		}
		o.ID = id
	}
	if o.Run {
		runs, err := e.registry.RunActions(ctx, o.RunOptions)
		return &ActionsResult{Runs: runs}, err
	}
	list, problems, err := e.registry.Actions(ctx, o.ActionsOptions)
	if err != nil {
		return nil, err
	}
	return &ActionsResult{List: list, Problems: problems}, nil
}

// trust trusts the project settings file as it is now, so the commands it names apply.
func (e *Engine) trust(ctx context.Context, file string, getenv func(string) string) (*ActionsResult, error) {
	// Trust lets a file's commands run: an agent must not grant it to a file it wrote.
	if err := e.desk.RequirePerson(ctx, "trust a settings file"); err != nil {
		return nil, err
	}
	path, sum, err := settings.TrustConfig(file, getenv, e.cfg.Now())
	if err != nil {
		return nil, err
	}
	return &ActionsResult{Trusted: path, Sum: sum}, nil
}

// getenv reads the environment as the door does: its Getenv, else the process's.
func (e *Engine) getenv() func(string) string {
	if e.Getenv == nil {
		return os.Getenv
	}
	return e.Getenv
}
