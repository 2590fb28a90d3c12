package cli

// The commands that read exchanges back: parse a RESPONSE line, history of the sessions, show one
// exchange or question.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/broadcast"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

func init() {
	register(&command{
		Name: "parse", Args: "[LINE | -]", Role: "orchestrator",
		Summary: "read a [RESPONSE ...] line back into its exchange: request, response, ids, status",
		Help:    "Finds the [RESPONSE ...] line in the text (as an agent's prompt shows it, colours and all), checks that its path lies inside the root, and prints the exchange: ids, panes, status and both bodies. Reads stdin when given '-' or nothing.",
		Example: "wcomm parse '[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/20260117-120000-o6-w7/002-response.md'\ntmux capture-pane -p | wcomm parse --json -",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				var text string
				if len(args) == 0 || (len(args) == 1 && args[0] == "-") {
					data, err := store.ReadBounded(c.ctx, c.stdin, maxParseInput, "the text on stdin")
					if err != nil {
						return err
					}
					text = string(data)
				} else {
					text = strings.Join(args, " ")
				}
				sh, err := c.engine().Show(c.ctx, tmuxcomm.ShowOptions{Text: text})
				if err != nil {
					if errors.Is(err, messages.ErrSyntax) {
						return &exitErr{code: exitUsage, err: err}
					}
					return err
				}
				x := sh.Exchange
				if x.Integrity == "mismatch" {
					warnIntegrity(c, x)
				} else {
					// A forged or mismatched field is said, not only listed in the output.
					for _, p := range x.Problems {
						fmt.Fprintf(c.stderr, "wcomm parse: warning: %s\n", p)
					}
				}
				if c.json {
					return c.printJSON(x)
				}
				printExchange(c.stdout, x)
				return nil
			}
		},
	})
	register(&command{
		Name: "history", Args: "[SESSION] [--pending]", Role: "both",
		Summary: "list session folders and their exchanges with status, age and first line",
		Help:    "Reads the files under the root (they are the history) and lists each session's exchanges: seq, id, status (pending, answered, undelivered, damaged), delivery state, age and the request's first line. Damaged or foreign files are named, not fatal. The exchanges of a broadcast (a send to several panes) are then listed together under BROADCASTS, each with its pane; --json gives each exchange its \"broadcast\" id.",
		Example: "wcomm history\nwcomm history --pending --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			pending := fs.Bool("pending", false, "only exchanges still waiting for a response")
			return func(args []string) error {
				if len(args) > 1 {
					return usagef("history takes at most one SESSION")
				}
				o := tmuxcomm.HistoryOptions{Pending: *pending, Encoded: c.json}
				if len(args) == 1 {
					if _, err := messages.ParseSessionName(args[0]); err != nil {
						return usagef("%v", err) // a malformed name can name no folder
					}
					o.Session = args[0]
				}
				// The listing makes many small objects that live until their session is printed:
				// with the collector's default pace a fifth of its time went to collecting.
				// Measured over 10,000 exchanges: 485 ms and 15 MiB at GOGC=100, 370 ms and
				// 25 MiB at 400 (median of 8). A GOGC the user set is left as it is.
				if os.Getenv("GOGC") == "" {
					debug.SetGCPercent(400)
				}
				// Each session is printed as it is read, not gathered first: 10,000 exchanges
				// are about 20 MiB of JSON. The bytes are those of printJSON of the whole.
				w, flush := c.buffered()
				n, now := 0, time.Now()
				var data []byte
				var groups broadcast.Groups // a broadcast's exchanges, shown together after the sessions
				o.Start = func(foreign []string) error {
					if !c.json {
						return nil
					}
					f, err := json.MarshalIndent(foreign, "  ", "  ")
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(w, "{\n  \"foreign\": %s,\n  \"sessions\": [", f)
					return err
				}
				o.Each = func(s exchange.SessionSummary) error {
					n++
					if !c.json {
						groups.Add(s)
						printHistorySession(w, n-1, s, now)
						return nil
					}
					// One write per session, whole JSON text after the separator: the JSON
					// sanitiser sees no character split between two writes. The bytes are
					// json.MarshalIndent's, the index's encodings copied in (AppendJSON).
					sep := "\n    "
					if n > 1 {
						sep = ",\n    "
					}
					data = append(data[:0], sep...)
					var err error
					if data, err = s.AppendJSON(data, "    ", "  "); err != nil {
						return err
					}
					_, err = w.Write(data)
					return err
				}
				_, foreign, err := c.engine().History(c.ctx, o)
				if err != nil {
					return err
				}
				switch {
				case c.json && n == 0:
					io.WriteString(w, "]\n}\n")
				case c.json:
					io.WriteString(w, "\n  ]\n}\n")
				default:
					printHistoryEnd(w, n, foreign)
					if lines := groups.Lines(); len(lines) > 0 {
						fmt.Fprintf(w, "\nBROADCASTS\n%s\n", strings.Join(lines, "\n"))
					}
				}
				return flush()
			}
		},
	})
	register(&command{
		Name: "show", Args: "ID | PATH | QUESTION-ID | BROADCAST-ID", Role: "both",
		Summary: "show one exchange whole: header, delivery log, request, response (or a question, or a broadcast)",
		Example: "wcomm show 20260117-120000-a1b2\nwcomm show /tmp/worker-comm/20260117-120000-o6-w7/001-request.md --json\nwcomm show bc-20260117-120000-0a1b2c3d",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("show takes one ID or PATH")
				}
				sh, err := c.engine().Show(c.ctx, tmuxcomm.ShowOptions{Ref: args[0]})
				switch {
				case err != nil:
					return err
				case sh.Broadcast != nil:
					return c.showBroadcast(sh.Broadcast)
				case c.json && sh.Question != nil:
					return c.printJSON(sh.Question)
				case sh.Question != nil:
					printQuestion(c.stdout, sh.Question, time.Now())
					return nil
				case c.json:
					return c.printJSON(sh.Exchange)
				}
				printExchange(c.stdout, sh.Exchange)
				return nil
			}
		},
	})
}

// showBroadcast prints every exchange of a broadcast whole, each under its pane's label, and the
// members that could not be shown (also on stderr, and as a failure, so a script notices).
func (c *cli) showBroadcast(s *broadcast.Shown) error {
	if c.json {
		if err := c.printJSON(s); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.stdout, "broadcast %s from %s at %s, %s\n", s.Broadcast.ID, orDash(string(s.Broadcast.From)),
			s.Broadcast.At.Local().Format(time.DateTime), messages.Plural(len(s.Broadcast.Members), "member"))
		for _, x := range s.Exchanges {
			fmt.Fprintf(c.stdout, "\n--- %s %s\n", broadcast.Label(x), x.ID)
			printExchange(c.stdout, x)
		}
	}
	if len(s.Problems) > 0 {
		return fmt.Errorf("broadcast %s: %s", s.Broadcast.ID, strings.Join(s.Problems, "; "))
	}
	return nil
}
