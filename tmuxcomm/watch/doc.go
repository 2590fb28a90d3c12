// Package watch is the room of the live feed. Watch reports what happens under the root
// (sessions, requests, delivery steps, responses, questions and their answers) as events, from
// file events (the store room's tree watcher: one inotify instance for the root and every session
// folder). It only reads: it owns no file, only the state of one watch (feed.go) and how it reads
// a session folder's exchanges (exchange.go), questions (question.go) and logs (read.go). It
// imports the exchange and questions rooms for their files' formats, core, store and messages.
// Follow (follow.go) is the same feed as a subscription, with a slow safety rescan inside: the
// permission hook's wait and the bridge hear of a question's change from it, and the console
// from Watch, so no one of them polls the files on its own.
package watch

import (
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Lookout watches the root of one engine.
type Lookout struct {
	*core.Config
	*questions.Desk
}
