package cli

// The pane commands: panes lists what runs where, find names the one pane that runs an agent.

import (
	"errors"
	"flag"
	"fmt"

	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
)

func init() {
	register(&command{
		Name: "panes", Args: "[--all] [--session S]", Role: "orchestrator",
		Summary: "list panes with their ids and the programs running in each",
		Help:    "Lists the panes of this session (--all: of every session) with pane id, session:window.pane, pane pid, the agent it runs (what send --all reaches) and the notable programs anywhere in the pane's process tree. Your own pane is marked. A pane where something waits on a person says what: its agent's permission prompt (waits: permission: Bash touch x), its question, or its agent at rest after its turn (waits: idle).",
		Example: "wcomm panes\nwcomm panes --all --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			all := fs.Bool("all", false, "every session of the server")
			session := fs.String("session", "", "this session instead of your own")
			host := fs.String("host", "", "the panes of this declared remote host")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("panes takes no arguments")
				}
				if *host != "" {
					return c.remotePanes(*host)
				}
				e := c.engine()
				panes, err := e.Panes(c.ctx, tmuxcomm.PanesOptions{Scope: paneops.Scope{All: *all, Session: *session}, Waits: true})
				if err != nil {
					return err
				}
				if c.json {
					if panes == nil {
						panes = []fleet.PaneInfo{}
					}
					return c.printJSON(panes)
				}
				printPanes(c.stdout, panes)
				return nil
			}
		},
	})
	register(&command{
		Name: "find", Args: "AGENT [--all] [--first]", Role: "orchestrator",
		Summary: "print the pane id of the one pane whose process tree runs AGENT",
		Help:    "Looks for a process whose command line contains AGENT anywhere below each pane's process (not only its direct children). Your own pane never matches. No match, or several: exit 4 with what runs where; --first takes the first of several.",
		Example: "wcomm find codex          # prints e.g. %7\nwcomm send --to \"$(wcomm find codex)\" 'review the diff'",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			all := fs.Bool("all", false, "search every session of the server")
			first := fs.Bool("first", false, "take the first of several matches")
			session := fs.String("session", "", "search this session instead of your own")
			host := fs.String("host", "", "search this declared remote host (prints HOST:%N)")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("find takes one AGENT")
				}
				if *host != "" {
					return c.remoteFind(*host, args[0], *first)
				}
				e := c.engine()
				scope := paneops.Scope{All: *all, Session: *session}
				f, err := e.Find(c.ctx, tmuxcomm.FindOptions{Agent: args[0], Scope: scope, First: *first})
				if err != nil {
					var fe *fleet.FindError
					if errors.As(err, &fe) && !c.json {
						fmt.Fprintf(c.stderr, "wcomm find: %v\n", err)
						if len(fe.Panes) > 0 {
							fmt.Fprintln(c.stderr, "what runs where:")
							printPanes(c.stderr, fe.Panes)
						}
						return &exitErr{code: exitNotFound, err: errSilent}
					}
					return err
				}
				if c.json {
					return c.printJSON(f.Pane)
				}
				fmt.Fprintln(c.stdout, f.Pane.ID)
				return nil
			}
		},
	})
}
