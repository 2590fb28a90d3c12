// Package actions is the room of approved actions. An approval authorizes intent; it does not
// execute anything. `ask --action NAME` asks a yes-no question and stores beside it, before anyone
// can answer, an intent ({task}.q{seq}.intent): the action's definition and its hash, its targets'
// content hashes, HEAD and `git status` of its folder. The dispatcher (RunActions) later runs an
// approved intent's argv once, and only while all of that still hashes the same; otherwise it
// blocks the intent with the reasons. Its claim ({task}.q{seq}.dispatch, taken with link(2))
// makes it run once however many dispatchers race, and its result ({task}.q{seq}.result, with the
// output in {task}.q{seq}.output) is written after. The room owns the intents' fingerprints
// (fingerprint.go), their status (action.go) and their execution (dispatch.go); the questions and
// answers stay the questions room's, which it imports. Age never makes an approval stale.
package actions

import (
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// Registry reads, checks and runs the approved actions of one engine.
type Registry struct {
	*core.Config
	*questions.Desk
}
