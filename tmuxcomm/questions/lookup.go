package questions

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// Question returns the question with id, wherever it is under the root, in the state the listing
// of Questions gives it (stale ones say why).
func (e *Desk) Question(ctx context.Context, id string) (*QuestionStatus, error) {
	if _, err := messages.ParseQuestionID(id); err != nil {
		return nil, err
	}
	root, found, err := e.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no questions yet (no root %s)", root)
	}
	list, _, err := e.Questions(ctx, QuestionsOptions{})
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
