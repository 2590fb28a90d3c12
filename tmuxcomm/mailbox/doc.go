// Package mailbox is the room of the outboxes. Every message wcomm types into a pane (a request, a
// RESPONSE line, QUESTION and ANSWER blocks) is first written to the pane's outbox (outbox.go),
// then delivered at once when the pane is ready, else later by the pane's deliverer (deliverer.go),
// by the agent's own hooks at a turn boundary, or by the pane's reader running 'wcomm inbox'
// (inbox.go); kinds.go holds what differs per kind of mail (its log events, what makes it unwanted,
// its text), route.go the deliveries through an agent's own door, held.go the requests held over a
// loop cap (the loops room decides) until a person releases them, and cancel. "Ready" is strict: an
// agent's input box on screen, empty and idle; a shell at its prompt with no foreground job; no
// copy mode. What is not ready never blocks the sender: the message waits. The room owns each
// pane's outbox folder under .outbox (see the store room's map) and the guard that presses a dead
// sender's Enter. It imports the exchange, fleet and questions rooms (for the files a delivery is
// recorded in), core, store, paneops and messages, never the door.
package mailbox

import (
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Office delivers the mail of one engine.
type Office struct {
	*core.Config
	*exchange.Book
	*fleet.Finder
	*questions.Desk
}
