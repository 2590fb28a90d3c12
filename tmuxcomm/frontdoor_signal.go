package tmuxcomm

// The typed results of a hand-over, with one wording for both faces.

import (
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// Signal is how the other side learned of what a call handed over: a response to its
// orchestrator (Notify), an answer to its worker (Answer). Its text is what the JSON carries.
type Signal string

// The signals.
const (
	// SignalPasted: the line or block went into the pane now, and was submitted.
	SignalPasted Signal = "pasted"
	// SignalQueued: the pane was not ready; the message waits in its outbox and is delivered at
	// its next idle moment or turn boundary (Reason says what it waits for).
	SignalQueued Signal = "queued"
	// SignalAwait: an await was waiting on the exchange and woke on the response file; nothing
	// was pasted (a second signal would start a second turn in an agent that has the answer).
	SignalAwait Signal = "await"
	// SignalAsk: the worker's ask was waiting and woke on the answer file; nothing was pasted.
	SignalAsk Signal = "ask"
)

// signalOf is the signal of a message posted through the mailbox.
func signalOf(p *Posted) Signal {
	switch {
	case p.Queued:
		return SignalQueued
	case p.Outcome == messages.MailSuperseded:
		return SignalAwait
	}
	return SignalPasted
}

// Say words how the orchestrator learns of the response, for a person or an agent to read.
func (r *NotifyResult) Say() string {
	orch := "pane " + string(r.Exchange.Orchestrator)
	switch r.Signal {
	case SignalAwait:
		return "the orchestrator's await was waiting and woke on the file; no line pasted"
	case SignalQueued:
		return "queued: " + orch + " is not ready (" + messages.SanitizeField(r.Reason) +
			"); the RESPONSE line is delivered at its next idle moment or turn boundary"
	}
	if r.Via == exchange.ViaSocket {
		return "the RESPONSE line was written to the messaging socket of " + orch + " (via socket)"
	}
	return "the RESPONSE line was pasted into " + orch
}

// Say words how the worker learns the answer.
func (r *AnswerResult) Say() string {
	st := r.Question
	switch r.Signal {
	case SignalAsk:
		return "the worker's waiting ask (pane " + string(st.Worker) + ") woke on the answer"
	case SignalPasted:
		if r.Via == exchange.ViaSocket {
			return "no ask was waiting: the ANSWER block was written to the messaging socket of worker pane " + string(st.Worker) + " (via socket)"
		}
		return "no ask was waiting: the ANSWER block was pasted into worker pane " + string(st.Worker)
	case SignalQueued:
		return "no ask was waiting and worker pane " + string(st.Worker) + " is busy: the ANSWER block is queued and reaches it when it is idle ('" +
			"wcomm ask --wait " + st.ID + "' there takes it at once)"
	}
	return ""
}
