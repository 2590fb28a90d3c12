package core

import (
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
)

// DefaultCapability is what a worker may do when a send names no capability: look, change nothing.
const DefaultCapability = messages.ReadOnly

// SendOptions are the inputs of one send.
type SendOptions struct {
	To         string // pane id, tmux target or agent name
	Scope      paneops.Scope
	First      bool                // take the first of several agent matches
	Capability messages.Capability // "": DefaultCapability
	Body       []byte
	// Agent names the profile to deliver with (--agent); "" detects it from the pane.
	Agent string
	// ID, when set, is the id to send under instead of a new one: a relay from another host
	// brings its own (remote.go).
	ID string
}
