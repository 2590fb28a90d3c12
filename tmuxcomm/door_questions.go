package tmuxcomm

// The questions' verbs besides the ask (frontdoor_ask.go): answer one, and read or resolve them.
// A question named by the end of its id is found here, so a face passes what it was given.

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// AnswerOptions are one answer: the questions room's, and the call's choices (the enter delay of
// the ANSWER block's delivery).
type AnswerOptions struct {
	questions.AnswerOptions
	Choices
}

// Answer answers the question o.ID names (its id or the end of one): the first valid answer
// wins and wakes the worker (see questions.Desk.Answer).
func (e *Engine) Answer(ctx context.Context, o AnswerOptions) (*questions.AnswerResult, error) {
	e, err := e.call(ctx, o.Choices, "")
	if err != nil {
		return nil, err
	}
	id, err := e.desk.QuestionID(o.ID)
	if err != nil {
		return nil, err
	}
	o.ID = id
	return e.desk.Answer(ctx, o.AnswerOptions)
}

// Questions lists the questions under the root, or with o.IDs shows the ones named, or with
// o.Resolve closes one without an answer (see questions.Desk.Questions).
func (e *Engine) Questions(ctx context.Context, o questions.QuestionsOptions) ([]*questions.QuestionStatus, []string, error) {
	return e.desk.Questions(ctx, o)
}
