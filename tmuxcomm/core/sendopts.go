package core

import (
	"time"

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
	// brings its own (package relay).
	ID string
	// Target, when set, is the pane To was resolved to already (a broadcast resolves every
	// target before it writes anything), and no lookup is made again.
	Target *Target
	// Broadcast names the broadcast this send is one member of, recorded in its delivery log.
	Broadcast string
	// HoldForAwait, when positive, holds the exchange's await lock from before the paste for up
	// to this long, for a caller whose await follows at once (the MCP server's client): see
	// tmuxcomm's awaitHolds.
	HoldForAwait time.Duration
	// Watch keeps the session folder's watch for the caller's next send (tmuxcomm.SendOptions).
	Watch bool
}

// Target is a resolved send target: the pane, its tmux server, and how it was found ("tmux").
type Target struct {
	Pane   paneops.Pane
	Server paneops.ServerInfo
}
