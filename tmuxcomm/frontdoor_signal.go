package tmuxcomm

// The typed results of a hand-over, with one wording for both faces.

import (
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// Say words how the orchestrator learns of the response, for a person or an agent to read.
func (r *NotifyResult) Say() string {
	orch := "pane " + string(r.Exchange.Orchestrator)
	switch r.Signal {
	case core.SignalAwait:
		// A send through MCP holds the lock an await takes for the await its client calls next
		// (awaitHolds): from here the two look alike, and the holder posts the line if no await comes.
		return "the orchestrator's await was waiting (or its send held the response for the await it calls next) and has the file; no line pasted"
	case core.SignalRelayed:
		return "the orchestrator (" + orch + ") is on another host: its wcomm pulls the response from here; no line pasted on this host"
	case core.SignalQueued:
		return "queued: " + orch + " is not ready (" + messages.SanitizeField(r.Reason) +
			"); the RESPONSE line is delivered at its next idle moment or turn boundary"
	}
	if r.Via == exchange.ViaSocket {
		return "the RESPONSE line was written to the messaging socket of " + orch + " (via socket)"
	}
	return "the RESPONSE line was pasted into " + orch
}

// Signal is how the other side learned of what a call handed over (see core.Signal).
type Signal = core.Signal

// The signals.
const (
	SignalPasted  = core.SignalPasted
	SignalQueued  = core.SignalQueued
	SignalAwait   = core.SignalAwait
	SignalAsk     = core.SignalAsk
	SignalRelayed = core.SignalRelayed
)
