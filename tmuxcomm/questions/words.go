package questions

// The words of an answer and of an ask's end, one wording for every face: the command line, the
// MCP server, the console and the chat bridge all say them through these.

import (
	"fmt"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// Say words how the worker learns the answer ("" when the result names no signal).
func (r *AnswerResult) Say() string {
	st := r.Question
	switch r.Signal {
	case core.SignalAsk:
		if st.Type == messages.Permission {
			return "the agent's permission hook (pane " + string(st.Worker) + ") took the answer"
		}
		return "the worker's waiting ask (pane " + string(st.Worker) + ") woke on the answer"
	case core.SignalPasted:
		if r.Via == exchange.ViaSocket {
			return "no ask was waiting: the ANSWER block was written to the messaging socket of worker pane " + string(st.Worker) + " (via socket)"
		}
		return "no ask was waiting: the ANSWER block was pasted into worker pane " + string(st.Worker)
	case core.SignalQueued:
		return "no ask was waiting and worker pane " + string(st.Worker) + " is busy: the ANSWER block is queued and reaches it when it is idle ('" +
			"wcomm ask --wait " + st.ID + "' there takes it at once)"
	}
	return ""
}

// Answered says which question was answered with what: "ID answered: ANSWER", the answer's text
// sanitized, as a person or a script reads it first.
func (r *AnswerResult) Answered() string {
	st := r.Question
	answer := ""
	if st.Answer != nil {
		answer = st.Answer.Answer
	}
	return st.ID + " answered: " + messages.SanitizeField(answer)
}

// Line is Answered and how the worker learns it (Say) in one line.
func (r *AnswerResult) Line() string {
	if how := r.Say(); how != "" {
		return r.Answered() + "; " + how
	}
	return r.Answered()
}

// AutoNote is what the worker is told of a question whose first option was taken for it at the
// deadline ("" for any other): the choice is to be marked for review.
func (st *QuestionStatus) AutoNote() string {
	if st.State != QuestionAutoAnswered {
		return ""
	}
	return fmt.Sprintf("nobody answered %s in time; its first option was taken for you: mark the choice \"assumed — needs review\"", st.ID)
}
