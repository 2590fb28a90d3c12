package bridge

import (
	"context"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
	"github.com/wcomm/wcomm/tmuxcomm/watch"
)

// Door is the bridge's Engine over the front door's: the questions and answers as they are, the
// approved actions' list and the person's dead letters (the door's Inbox) in the bridge's terms.
func Door(e *tmuxcomm.Engine) Engine { return door{e} }

type door struct{ e *tmuxcomm.Engine }

func (d door) Questions(ctx context.Context, o questions.QuestionsOptions) ([]*questions.QuestionStatus, []string, error) {
	return d.e.Questions(ctx, o)
}

func (d door) Answer(ctx context.Context, o questions.AnswerOptions) (*questions.AnswerResult, error) {
	return d.e.Answer(ctx, tmuxcomm.AnswerOptions{AnswerOptions: o})
}

func (d door) Actions(ctx context.Context, o actions.ActionsOptions) ([]*actions.ActionStatus, []string, error) {
	res, err := d.e.Actions(ctx, tmuxcomm.ActionsOptions{RunOptions: actions.RunOptions{ActionsOptions: o}})
	if err != nil {
		return nil, nil, err
	}
	return res.List, res.Problems, nil
}

func (d door) DeadLetters(since time.Time) ([]mailbox.DeadLetter, []string) {
	res, err := d.e.Inbox(context.Background(), mailbox.InboxOptions{Dead: true, Since: since})
	if err != nil {
		return nil, []string{err.Error()}
	}
	return res.Dead, res.Problems
}

func (d door) Follow(ctx context.Context, o watch.WatchOptions) (*watch.Follower, error) {
	return watch.Follow(ctx, o, d.e.Watch)
}
