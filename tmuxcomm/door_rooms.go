package tmuxcomm

// The door's verbs that a room does whole: the inbox, the live feed, the approved actions and
// the trust of a settings file. An intent named by the end of its question's id is found here.

import (
	"context"
	"os"

	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Inbox takes (or with o.Take unset, looks at) what waits in a pane's outbox, oldest first (see
// mailbox.Office.Inbox).
func (e *Engine) Inbox(ctx context.Context, o mailbox.InboxOptions) (*mailbox.InboxResult, error) {
	return e.Office.Inbox(ctx, o)
}

// Watch follows what happens under the root as events, calling emit for each, until ctx ends or
// emit returns an error (see watch.Lookout.Watch).
func (e *Engine) Watch(ctx context.Context, o watch.WatchOptions, emit func(watch.WatchEvent) error) error {
	return e.Lookout.Watch(ctx, o, emit)
}

// Actions lists the approved-action intents with their status; o.ID selects one by its
// question's id or the end of it (see actions.Registry.Actions).
func (e *Engine) Actions(ctx context.Context, o actions.ActionsOptions) ([]*actions.ActionStatus, []string, error) {
	if err := e.intentID(&o); err != nil {
		return nil, nil, err
	}
	return e.Registry.Actions(ctx, o)
}

// RunActions is the dispatcher: it runs each approved intent whose fingerprint still holds, once
// (see actions.Registry.RunActions).
func (e *Engine) RunActions(ctx context.Context, o actions.RunOptions) ([]*actions.ActionRun, error) {
	if err := e.intentID(&o.ActionsOptions); err != nil {
		return nil, err
	}
	return e.Registry.RunActions(ctx, o)
}

// intentID turns o.ID, the end of a question's id, into the whole id.
func (e *Engine) intentID(o *actions.ActionsOptions) error {
	if o.ID == "" {
		return nil
	}
	id, err := e.QuestionID(o.ID)
	o.ID = id
	return err
}

// Trust trusts the project settings file as it is now, so the commands it names apply (see
// settings.TrustConfig); only the person may, never an agent's command. It returns the file's
// path and its sha256.
func (e *Engine) Trust(ctx context.Context, file string) (path, sum string, err error) {
	// Trust lets a file's commands run: an agent must not grant it to a file it wrote.
	if err := e.RequirePerson(ctx, "trust a settings file"); err != nil {
		return "", "", err
	}
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return settings.TrustConfig(file, getenv, e.Now())
}
