package cli

// A send to several panes and an await of several exchanges (tmuxcomm/broadcast does the work):
// one line per pane, the answers labelled by pane as they come.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// listFlag is a flag that may be given several times (--to A --to B), each value kept.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// reportBroadcast prints what a send to several panes did: the broadcast's id, then "PANE ID
// RESPONSE-PATH" for each pane (--json: the exchanges); with wait it then awaits every answer.
func (c *cli) reportBroadcast(res *broadcast.Result, err error, wait bool, timeout time.Duration) error {
	for _, m := range res.Members {
		x := m.Exchange
		switch {
		case c.json:
		case m.Err != nil && x != nil && x.RequestPath != "":
			fmt.Fprintf(c.stderr, "wcomm send: %s: request kept at %s; 'wcomm send --resend %s' delivers it again\n", m.Label, x.RequestPath, x.ID)
		case x != nil && x.State == exchange.StateQueued:
			fmt.Fprintf(c.stderr, "wcomm send: queued: pane %s is not ready (%s); the request is delivered at its next idle moment or turn boundary\n",
				m.Label, messages.SanitizeField(x.Evidence))
		}
	}
	if c.json {
		if perr := c.printJSON(res.Exchanges()); perr != nil {
			return perr
		}
	} else {
		fmt.Fprintln(c.stdout, res.ID)
		for _, m := range res.Members {
			if x := m.Exchange; x != nil {
				fmt.Fprintf(c.stdout, "%s %s %s\n", m.Label, x.ID, orDash(x.ResponsePath))
			}
		}
	}
	if err != nil || !wait {
		return err
	}
	fmt.Fprintf(c.stderr, "sent %s to %s; waiting for every answer\n", res.ID, messages.Plural(len(res.Members), "pane"))
	return c.await([]string{res.ID}, timeout)
}

// awaitCtx is the context of an await, and whether this command was handed to the resident. A
// handed command runs in the resident, which lives on: it watches at once, as a server does,
// instead of polling first (what spares a command's exit the watch's grace period); and its
// caller gone, nobody reads the answer.
func (c *cli) awaitCtx() (context.Context, bool) {
	if c.call == nil {
		return c.ctx, false
	}
	if c.call.Gone != nil {
		return c.call.Gone, true
	}
	return c.ctx, true
}

// await awaits the exchanges refs name and prints each response as it comes: its body (--json:
// the whole exchange), or, of several, each under a line naming its pane and id (--json: at the
// end, the answers and the exchanges still without one). A response is printed before it is
// recorded as read: output that fails leaves it unread.
func (c *cli) await(refs []string, timeout time.Duration) error {
	ctx, handed := c.awaitCtx()
	a, err := c.engine().Await(ctx, tmuxcomm.AwaitOptions{Refs: refs, Timeout: timeout, Lean: !c.json, Watch: handed,
		Each: func(pane string, x *exchange.Exchange) error {
			if pane != "" && c.json {
				return nil
			} else if pane != "" {
				fmt.Fprintf(c.stdout, "--- %s %s\n", pane, x.ID)
			}
			return c.printResponse(x)
		}})
	if c.json && a != nil && a.Many != nil {
		if perr := c.printJSON(a.Many); perr != nil {
			return perr
		}
	}
	return err
}
