// Package relay is the engine's side of remote hosts (internal/remote drives it over ssh). On the
// worker's host, a relayed send is an ordinary send under the orchestrator's id, in a session
// folder marked relayed: its orchestrator pane is on another host, so notify saves the response
// and leaves the signal to the orchestrator's wcomm, which pulls it. On the orchestrator's host,
// the exchange is mirrored in a session folder marked with the host, so history, show, parse and
// await see it as any other; the pulled response is written there by an ordinary notify. It owns
// the .relay folder's locks. What it needs of the door, an ordinary send, it names as the small
// interface Sender; it imports the exchange room, core, store and messages.
package relay

import (
	"context"

	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// Station relays exchanges to and from other hosts for one engine.
type Station struct {
	*core.Config
	*exchange.Book
	Sender
}

// Sender sends a request as the door does.
type Sender interface {
	Send(ctx context.Context, o core.SendOptions) (*exchange.Exchange, error)
}
