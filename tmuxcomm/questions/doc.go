// Package questions is the room of the workers' questions. A question lives as files in the
// session folder of the pair it belongs to: {task}.q{seq}.question (the question, JSON),
// {task}.q{seq}.answer (the first valid answer, claimed with link(2)), {task}.q{seq}.resolved
// (closed without an answer), {task}.q{seq}.answers.jsonl (every answer attempt and delivery event)
// and .{task}.q{seq}.wait.lock (held by a waiting ask). Nothing lives only in memory: a killed ask
// leaves a pending question that can still be answered and waited for. The room owns asking
// (ask.go), waiting (wait.go), answering and resolving (answer.go), the files (store.go,
// lookup.go, bound.go), carrying blocks to panes through the mailbox (relay.go), staleness
// (stale.go), the git binding (git.go) and the on_question hook (hook.go). What it needs of the
// mailbox, handing a block to a pane, it names as the small interface Mailer; the mailbox imports
// this room for the questions' files, never the other way round.
package questions

import (
	"context"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

// Desk asks, waits for, answers and lists the questions of one engine.
type Desk struct {
	*core.Config
	*exchange.Book
	*fleet.Finder
	Mailer
}

// Mailer hands a block to a pane through its outbox (the mailbox room).
type Mailer interface {
	Post(ctx context.Context, root string, m messages.Mail, pane paneops.Pane, srv paneops.ServerInfo) (*core.Posted, error)
}
