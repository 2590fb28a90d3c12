package questions

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// Question returns the question with id, wherever it is under the root, in the state the listing
// of Questions gives it (stale ones say why).
func (d *Desk) Question(ctx context.Context, id string) (*QuestionStatus, error) {
	if _, err := messages.ParseQuestionID(id); err != nil {
		return nil, err
	}
	root, found, err := d.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no questions yet (no root %s)", root)
	}
	list, _, err := d.Questions(ctx, QuestionsOptions{})
	if err != nil {
		return nil, err
	}
	for _, st := range list {
		if st.ID == id {
			return st, nil
		}
	}
	_, err = FindQuestion(root, id)
	if err == nil {
		err = store.Kindf(store.ErrNotFound, "question %s is unreadable; run 'wcomm questions' to see the problem", id)
	}
	return nil, err
}

// questionsByID returns the questions o.IDs name, each as Question gives it; with o.Resolve, the
// one question named, closed without an answer.
func (d *Desk) questionsByID(ctx context.Context, o QuestionsOptions) ([]*QuestionStatus, error) {
	if o.Resolve != "" && len(o.IDs) != 1 {
		return nil, core.Usagef("resolve closes one question: name it by its id")
	}
	if o.Pending {
		return nil, core.Usagef("pending lists the questions; give it no question id")
	}
	var out []*QuestionStatus
	for _, ref := range o.IDs {
		id, err := d.QuestionID(ref)
		if err != nil {
			return nil, err
		}
		var st *QuestionStatus
		if o.Resolve != "" {
			st, err = d.ResolveQuestion(ctx, id, o.Resolve)
		} else {
			st, err = d.Question(ctx, id)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
