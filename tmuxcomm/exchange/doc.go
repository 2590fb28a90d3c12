// Package exchange is the room of the exchanges' files: the session folders under the root (one
// per orchestrator and worker pair on one tmux server), their sequenced request and response files
// and delivery logs, the request ids and where each one is, reading an exchange back (Locate,
// Show, Parse) and the history. It writes and reads files only: sending, awaiting and notifying
// are the door's, delivery is the mailbox's and paneops'. It imports core, store, paneops and
// messages, never a room above it.
package exchange

import (
	"sync/atomic"

	"github.com/wcomm/wcomm/tmuxcomm/core"
)

// Book reads and writes the exchanges under one engine's root.
type Book struct {
	*core.Config
	// Numbers, when set, tells a sender the next request number of a folder it watches (see
	// Numbers); nil: the folder's hint and files tell it.
	Numbers Numbers
	// noIndex makes history read every file and keep no index: what the index is checked against.
	noIndex bool
	// loads counts the exchanges a history read from their files, when set (tests).
	loads *atomic.Int64
	// clock, when set (tests), stands for the file system's clock a history reads (fsClock).
	clock func() int64
}
