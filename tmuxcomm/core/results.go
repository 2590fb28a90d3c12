package core

import "github.com/wcomm/wcomm/messages"

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
	// SignalRelayed: the orchestrator is on another host; its wcomm pulls the response from this
	// one, and nothing is pasted here.
	SignalRelayed Signal = "relayed"
)

// SignalOf is the signal of a message posted through the mailbox.
func SignalOf(p *Posted) Signal {
	switch {
	case p.Queued:
		return SignalQueued
	case p.Outcome == messages.MailSuperseded:
		return SignalAwait
	}
	return SignalPasted
}

// Posted says what became of a message handed to the mailbox.
type Posted struct {
	Mail messages.Mail
	// Queued: the message waits in the outbox; Reason says why (what made the pane not ready).
	Queued bool
	Reason string
	// Outcome is how it ended when it ended now: delivered, superseded or undeliverable.
	Outcome string
	// Via is the route of a delivery made now: ViaSocket or ViaTyped (mailbox/route.go).
	Via string
}
