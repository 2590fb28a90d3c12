package cli

import (
	"flag"
	"fmt"

	"github.com/wcomm/wcomm/messages"
)

func init() {
	register(&command{
		Name: "release", Args: "ID | --all [--to TARGET]", Role: "admin",
		Summary: "deliver requests held over a loop cap (the person's call): one by id, or all held for a pane",
		Help: `A request an agent sends while it handles another continues that one's chain; past the settings'
loops.chain_depth, or past loops.rate chained requests from one pane to another, or from a source
loops.inbound holds, it is held in the receiver's outbox: never delivered, never dropped, listed by
'wcomm inbox --peek --pane PANE' with why, and the answer channels are told once per chain or pair.
release moves it into the outbox's queue, to be delivered as any queued request, once. ID is the
request's id (or the mail id inbox --json shows); --all releases every held request, or with --to
every one held for that pane. See 'wcomm help mailbox'.`,
		Example: "wcomm release 20260117-120000-a1b2\nwcomm release --all --to %7",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			all := fs.Bool("all", false, "release every held request (with --to: every one held for that pane)")
			to := fs.String("to", "", "the pane (or agent) whose held requests --all releases")
			return func(args []string) error {
				ref := ""
				switch {
				case len(args) > 1:
					return usagef("release takes one request id")
				case len(args) == 1 && (*all || *to != ""):
					return usagef("name one request, or --all [--to TARGET], not both")
				case len(args) == 1:
					ref = args[0]
				case !*all:
					return usagef("name the held request to release, or --all [--to TARGET]")
				}
				done, err := c.engine().Release(c.ctx, ref, *to, *all)
				if c.json {
					if jerr := c.printJSON(done); jerr != nil {
						return jerr
					}
				} else {
					for _, m := range done {
						fmt.Fprintf(c.stdout, "released %s for pane %s from %s\n", m.Exchange, m.Pane, m.From)
					}
				}
				return err
			}
		},
	})
	register(&command{
		Name: "cancel", Args: "ID", Role: "orchestrator",
		Summary: "withdraw a request of yours still waiting in its worker's outbox (queued or held)",
		Help: `A request whose worker was not ready waits in the worker's outbox (its deliverer polls for up to the
mailbox's ttl). cancel withdraws it: it is never delivered, and history and show say "cancelled". A
request that has already reached its worker cannot be withdrawn (exit 1): tell the worker instead.`,
		Example: "wcomm cancel 20260117-120000-a1b2",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("cancel takes the id of one request")
				}
				x, err := c.engine().Cancel(c.ctx, args[0])
				if err != nil {
					return err
				}
				if c.json {
					return c.printJSON(x)
				}
				fmt.Fprintf(c.stdout, "cancelled %s (it was waiting for pane %s; it is never delivered)\n", x.ID, messages.SanitizeField(string(x.Worker)))
				return nil
			}
		},
	})
}
