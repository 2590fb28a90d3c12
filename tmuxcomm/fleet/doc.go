// Package fleet is the room of the panes: listing them with what runs there (Panes), finding a
// worker's pane by its process tree (Find, Resolve), reaching a pane again by its id and server
// (Reach, with the pane cards that spare a tmux call), the agents' profiles (Detect, the paste
// forms), which door a delivery goes through (Route), and the overview of every pane's state for
// the console (Fleet, Waiting). It delivers nothing: the mailbox does. What it needs of the
// mailbox, the mail waiting per pane, it names as the small interface Mail. It imports core,
// store, exchange, paneops and messages.
package fleet

import (
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// Finder finds and reaches panes for one engine.
type Finder struct {
	*core.Config
	// Mail reads the mail waiting in a pane's outbox (the mailbox room).
	Mail Mail
}

// Mail is what the fleet reads of the mailbox.
type Mail interface {
	// Pending is the mail waiting in pane's outbox on server, oldest first.
	Pending(root, server string, pane messages.PaneID) []messages.Mail
}
