package questions

import (
	"github.com/wcomm/wcomm/messages"
)

// Question states, derived from the files (and, for stale, from the world).
const (
	QuestionPending      = "pending"
	QuestionAnswered     = "answered"
	QuestionAutoAnswered = "auto-answered"
	QuestionCapExceeded  = "cap-exceeded"
	QuestionStale        = "stale"
	QuestionResolved     = "resolved"
)

// RelayOffAnswer is the ANSWER a worker gets for a question on task when the question relay is
// off: nothing is asked, and the worker decides alone.
func RelayOffAnswer(task string) messages.Answer {
	return messages.Answer{Task: task, DecidedBy: messages.DecidedByDisabled,
		Text: "The question relay is off. Make the decision yourself and mark it \"assumed — needs review\" in your report."}
}

// Events of a question's log.
const (
	QAsked         = "asked"
	QDelivered     = "delivered"   // the QUESTION block reached the orchestrator's pane
	QUndelivered   = "undelivered" // it did not
	QHookRan       = "hook-ran"
	qHookFailed    = "hook-failed"
	QAccepted      = "accepted"
	QInvalid       = "invalid"
	QStale         = "stale"
	QAskWoken      = "ask-woken"     // a waiting ask took the answer
	QAnswerPasted  = "answer-pasted" // no ask waited: the ANSWER block went into the worker's pane
	QAnswerLost    = "answer-paste-failed"
	QResolvedEvent = "resolved"
	QTimedOut      = "timeout"
)

// Question log events of the mailbox.
const (
	QQueued             = "queued"
	QExpired            = "expired"
	QUndeliverable      = "undeliverable"
	QAnswerQueued       = "answer-queued"
	QAnswerDelivered    = "answer-delivered"
	QAnswerExpired      = "answer-expired"
	QAnswerUndelivrable = "answer-undeliverable"
	QAnswerRead         = "answer-read" // an ask returned the answer to the worker
)
