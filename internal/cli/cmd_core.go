package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
)

// maxParseInput bounds what parse reads: a screen capture with a RESPONSE line in it.
const maxParseInput = 16 << 20

// DefaultAwaitTimeout bounds an await without --timeout, so a forgotten worker never hangs an
// orchestrator for ever; --timeout 0 waits without limit.
const DefaultAwaitTimeout = 30 * time.Minute

func init() {
	register(&command{
		Name: "panes", Args: "[--all] [--session S]", Role: "orchestrator",
		Summary: "list panes with their ids and the programs running in each",
		Help:    "Lists the panes of this session (--all: of every session) with pane id, session:window.pane, pane pid and the notable programs anywhere in the pane's process tree. Your own pane is marked.",
		Example: "wcomm panes\nwcomm panes --all --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			all := fs.Bool("all", false, "every session of the server")
			session := fs.String("session", "", "this session instead of your own")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("panes takes no arguments")
				}
				e := c.engine()
				panes, err := e.Panes(c.ctx, paneops.Scope{All: *all, Session: *session})
				if err != nil {
					return err
				}
				if c.json {
					if panes == nil {
						panes = []tmuxcomm.PaneInfo{}
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
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("find takes one AGENT")
				}
				e := c.engine()
				scope := paneops.Scope{All: *all, Session: *session}
				p, err := e.Find(c.ctx, args[0], scope, *first)
				if err != nil {
					var fe *tmuxcomm.FindError
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
					return c.printJSON(p)
				}
				fmt.Fprintln(c.stdout, p.ID)
				return nil
			}
		},
	})
	register(&command{
		Name: "send", Args: "--to TARGET [--capability READONLY|WRITABLE] [--file F | -] [MESSAGE...] | --resend ID", Role: "orchestrator",
		Summary: "write the next request file for a worker and deliver it into the worker's pane",
		Help: `TARGET is a pane id (%7), a tmux target (work:1.0) or an agent name found as 'wcomm find' does.
The request goes to /tmp/worker-comm/{STARTED_AT}-o{N}-w{M}/NNN-request.md with the header, your message
and the response instructions; then it is pasted into the worker's pane through a uniquely named tmux
buffer and submitted with Enter after --enter-delay. A request too long to paste safely is delivered as
one line pointing at its file. Prints "ID RESPONSE-PATH" (--json: the exchange). --wait also awaits the
response and prints its body.

When the worker's pane is not ready (an agent mid-turn, someone's text in its input box, a shell
running a job, copy mode), send does not wait: the request waits in the pane's outbox, send says
"queued" on stderr and exits 0, and a background deliverer types it in at the pane's next idle moment
(or the agent's hook hands it over at its next turn boundary). --no-queue restores fail-fast: wait
up to --busy-wait, then exit 1 with the request kept on disk. --resend ID delivers a kept request
(refused, undelivered, expired, or lost by its worker) again under the same id and sequence number.

Delivery follows the target's profile (wcomm doctor --pane TARGET shows it; --agent NAME forces one):
for Claude Code, Codex CLI, Gemini CLI and aider it waits up to --busy-wait for an empty input box
(never pasting into text someone else typed), checks after Enter that the box took the message and
presses Enter again, with backoff, only while the box still holds exactly what was pasted. Into an
interactive shell it types only a comment line pointing at the request file, never the request.
send exits 0 once the message is submitted or queued.`,
		Example: "wcomm send --to codex 'List the failing tests in ./pkg'\nwcomm send --to %7 --capability WRITABLE --file task.md --wait --timeout 10m\nwcomm send --resend 20260117-120000-a1b2",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			to := fs.String("to", "", "worker: pane id, tmux target or agent name")
			capability := fs.String("capability", "READONLY", "READONLY (look, change nothing) or WRITABLE")
			file := fs.String("file", "", "read the message from this file (- for stdin)")
			wait := fs.Bool("wait", false, "await the response and print it")
			var timeout time.Duration
			durationVar(fs, &timeout, "timeout", DefaultAwaitTimeout, "with --wait: how long to wait (0: no limit); without --wait, a usage error")
			first := fs.Bool("first", false, "with an agent name: take the first of several matches")
			all := fs.Bool("all", false, "with an agent name: search every session")
			dv := declareDelivery(fs, flagEnterDelay, flagBusyWait, flagFrom, flagAgent)
			agent := &dv.agent
			mq := mailFlags(fs)
			resend := fs.String("resend", "", "deliver the kept request ID again (same id and sequence number)")
			return func(args []string) error {
				if flagGiven(fs, "timeout") && !*wait {
					return usagef("--timeout is how long --wait waits, and send alone does not wait: add --wait, or use 'wcomm await ID --timeout D'")
				}
				if *resend != "" {
					if *to != "" || len(args) > 0 || *file != "" {
						return usagef("--resend ID takes no --to, --file or message: it sends the kept request again")
					}
					if err := messages.ValidID(*resend); err != nil {
						return usagef("--resend: %v", err)
					}
					e := c.engine()
					mq.apply(e)
					x, err := e.Resend(c.ctx, *resend, *agent)
					if err != nil {
						// Not reportSent's "send --resend ID delivers it again": that is this call.
						if x != nil && !c.json {
							fmt.Fprintf(c.stderr, "wcomm send: the request stays kept at %s; 'wcomm show %s' shows its delivery log\n", x.RequestPath, x.ID)
						}
						return err
					}
					return c.reportSent(x, nil, *wait, timeout, e)
				}
				if *to == "" {
					return usagef("send needs --to TARGET")
				}
				capab, err := messages.ParseCapability(*capability)
				if err != nil {
					return usagef("%v", err)
				}
				body, err := c.readBody(*file, args)
				if err != nil {
					return err
				}
				e := c.engine()
				if err := dv.apply(e); err != nil {
					return err
				}
				mq.apply(e)
				o := tmuxcomm.SendOptions{To: *to, Scope: paneops.Scope{All: *all}, First: *first, Capability: capab, Body: body, Agent: *agent}
				if h, target, ok, err := c.remoteTarget(*to); err != nil {
					return err
				} else if ok {
					o.To = target
					return c.sendRemote(e, h, o, *wait, timeout)
				}
				x, err := e.Send(c.ctx, o)
				return c.reportSent(x, err, *wait, timeout, e)
			}
		},
	})
	register(&command{
		Name: "await", Args: "[ID | RESPONSE-PATH] [--timeout D]", Role: "orchestrator",
		Summary: "wait for a response and print its body",
		Help: `Blocks until the response of the exchange is complete, then prints its body (--json: the whole
exchange). Without an argument: the newest request sent from this pane whose response no await has
returned yet. Returns at once if the response is already there; wakes within milliseconds of the
worker's notify (file events, not a sleep loop). A response written by a plain 'cat > file' is read only once its writer has closed it.
Exit 3 on timeout.`,
		Example: "wcomm await 20260117-120000-a1b2 --timeout 5m\nwcomm await --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			var timeout time.Duration
			durationVar(fs, &timeout, "timeout", DefaultAwaitTimeout, "how long to wait (0: no limit)")
			return func(args []string) error {
				if len(args) > 1 {
					return usagef("await takes at most one ID or path")
				}
				ref := ""
				if len(args) == 1 {
					ref = args[0]
					if err := checkExchangeRef(ref); err != nil {
						return err
					}
				}
				e := c.engine()
				e.LeanAwait = !c.json // only the response is printed
				c.pullRemote(e)
				start := time.Now()
				if err := c.awaitRelayed(e, ref, timeout); err != nil {
					return err
				}
				if timeout > 0 {
					timeout = max(timeout-time.Since(start), time.Millisecond)
				}
				// Printed before it is recorded as read: output that fails leaves it unread.
				_, err := e.AwaitThen(c.ctx, ref, timeout, c.printResponse)
				return err
			}
		},
	})
	register(&command{
		Name: "notify", Args: "[--response PATH | --id ID] [--file F | -] [MESSAGE...]", Role: "worker",
		Summary: "(worker) write the response file and signal the orchestrator",
		Help: `Writes the response file atomically with its [WORKER RESPONSE ...] header, then pastes the path-only
line "[RESPONSE started_at=... orchestrator=%N worker=%M] PATH" into the orchestrator's pane. Without
--response/--id: the newest unanswered request addressed to this pane. When the orchestrator is already
running 'wcomm await' on the exchange, the await wakes on the file and no line is pasted (one signal,
not two). The first response stands: a second notify for the same request exits 1. When the
orchestrator's pane is gone, the response file is kept and notify exits 1 saying so. When the
orchestrator's pane is not ready (busy, someone typing, a shell running a job), notify returns at once
and the line waits in that pane's outbox ("queued"); RESPONSE lines waiting together are delivered as
one paste. --no-queue: wait up to --busy-wait instead, and exit 1 if it never gets ready.`,
		Example: "wcomm notify --response /tmp/worker-comm/20260117-120000-o6-w7/002-response.md 'All 14 tests pass.'\nwcomm notify --file answer.md\nprintf '%s\\n' \"$ANSWER\" | wcomm notify --id 20260117-120000-a1b2 -",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			response := fs.String("response", "", "the response file named in the request's instructions")
			id := fs.String("id", "", "the request's id")
			file := fs.String("file", "", "read the response from this file (- for stdin)")
			dv := declareDelivery(fs, flagEnterDelay, flagBusyWait)
			mq := mailFlags(fs)
			return func(args []string) error {
				if *response != "" && *id != "" {
					return usagef("give --response or --id, not both")
				}
				if *id != "" {
					if err := messages.ValidID(*id); err != nil {
						return usagef("--id: %v", err)
					}
				}
				o := tmuxcomm.NotifyOptions{Ref: *response + *id}
				later, err := laterBodyFile(*file)
				if err != nil {
					return err
				}
				if later && len(args) > 0 {
					return usagef("give the message either with --file or as arguments, not both")
				}
				if later {
					o.BodyFile = *file
				} else if o.Body, err = c.readBody(*file, args); err != nil {
					return err
				}
				e := c.engine()
				if err := dv.apply(e); err != nil {
					return err
				}
				mq.apply(e)
				res, err := e.Notify(c.ctx, o)
				if res != nil && !c.json {
					for _, w := range res.Warnings {
						fmt.Fprintf(c.stderr, "wcomm notify: warning: %s\n", w)
					}
				}
				if err != nil {
					if res != nil && res.Exchange != nil && errors.Is(err, tmuxcomm.ErrOrchestratorGone) && c.json {
						c.printJSON(res)
					}
					return err
				}
				if c.json {
					return c.printJSON(res)
				}
				how := "the RESPONSE line was pasted into pane " + string(res.Exchange.Orchestrator)
				switch res.Signal {
				case "await":
					how = "the orchestrator's await was waiting and woke on the file; no line pasted"
				case "queued":
					how = "queued: pane " + string(res.Exchange.Orchestrator) + " is not ready (" + messages.SanitizeField(res.Reason) +
						"); the RESPONSE line is delivered at its next idle moment or turn boundary"
				}
				fmt.Fprintf(c.stdout, "%s\n", res.Exchange.ResponsePath)
				fmt.Fprintf(c.stderr, "response saved; %s\n", how)
				return nil
			}
		},
	})
	register(&command{
		Name: "parse", Args: "[LINE | -]", Role: "orchestrator",
		Summary: "read a [RESPONSE ...] line back into its exchange: request, response, ids, status",
		Help:    "Finds the [RESPONSE ...] line in the text (as an agent's prompt shows it, colours and all), checks that its path lies inside the root, and prints the exchange: ids, panes, status and both bodies. Reads stdin when given '-' or nothing.",
		Example: "wcomm parse '[RESPONSE started_at=20260117-120000 orchestrator=%6 worker=%7] /tmp/worker-comm/20260117-120000-o6-w7/002-response.md'\ntmux capture-pane -p | wcomm parse --json -",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				var text string
				if len(args) == 0 || (len(args) == 1 && args[0] == "-") {
					data, err := tmuxcomm.ReadBounded(c.ctx, c.stdin, maxParseInput, "the text on stdin")
					if err != nil {
						return err
					}
					text = string(data)
				} else {
					text = strings.Join(args, " ")
				}
				x, err := c.engine().Parse(c.ctx, text)
				if err != nil {
					if errors.Is(err, messages.ErrSyntax) {
						return &exitErr{code: exitUsage, err: err}
					}
					return err
				}
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
		Help:    "Reads the files under the root (they are the history) and lists each session's exchanges: seq, id, status (pending, answered, undelivered, damaged), delivery state, age and the request's first line. Damaged or foreign files are named, not fatal.",
		Example: "wcomm history\nwcomm history --pending --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			pending := fs.Bool("pending", false, "only exchanges still waiting for a response")
			return func(args []string) error {
				if len(args) > 1 {
					return usagef("history takes at most one SESSION")
				}
				o := tmuxcomm.HistoryOptions{Pending: *pending}
				if len(args) == 1 {
					if _, err := messages.ParseSessionName(args[0]); err != nil {
						return usagef("%v", err) // a malformed name can name no folder
					}
					o.Session = args[0]
				}
				// Each session is printed as it is read, not gathered first: 10,000 exchanges
				// are about 20 MiB of JSON. The bytes are those of printJSON of the whole.
				w, flush := c.buffered()
				n, now := 0, time.Now()
				start := func(foreign []string) error {
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
				foreign, err := c.engine().HistoryEach(c.ctx, o, start, func(s tmuxcomm.SessionSummary) error {
					n++
					if !c.json {
						printHistorySession(w, n-1, s, now)
						return nil
					}
					data, err := json.MarshalIndent(s, "    ", "  ")
					if err != nil {
						return err
					}
					// One write per session, whole JSON text after the separator: the JSON
					// sanitiser sees no character split between two writes.
					sep := "\n    "
					if n > 1 {
						sep = ",\n    "
					}
					_, err = w.Write(append([]byte(sep), data...))
					return err
				})
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
				}
				return flush()
			}
		},
	})
	register(&command{
		Name: "show", Args: "ID | PATH | QUESTION-ID", Role: "both",
		Summary: "show one exchange whole: header, delivery log, request and response (or one question whole)",
		Example: "wcomm show 20260117-120000-a1b2\nwcomm show /tmp/worker-comm/20260117-120000-o6-w7/001-request.md --json",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("show takes one ID or PATH")
				}
				if _, err := messages.ParseQuestionID(args[0]); err == nil && !strings.ContainsRune(args[0], '/') {
					// A question's id (task-3.q1-a1b2): show the question, options and all.
					st, err := c.engine().Question(c.ctx, args[0])
					if err != nil {
						return err
					}
					if c.json {
						return c.printJSON(st)
					}
					printQuestion(c.stdout, st, time.Now())
					return nil
				}
				if err := checkExchangeRef(args[0]); err != nil {
					return err
				}
				x, err := c.engine().Show(c.ctx, args[0])
				if err != nil {
					return err
				}
				if c.json {
					return c.printJSON(x)
				}
				printExchange(c.stdout, x)
				return nil
			}
		},
	})
}

// printResponse prints an awaited response: its body, or with --json the whole exchange. Problems
// (an id or integrity mismatch) go to stderr.
func (c *cli) printResponse(x *tmuxcomm.Exchange) error {
	for _, p := range x.Problems {
		fmt.Fprintf(c.stderr, "wcomm: warning: %s\n", p)
	}
	if c.json {
		return c.printJSON(x)
	}
	body := x.ResponseBody
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	_, err := io.WriteString(c.stdout, body)
	return err
}

func printPanes(w io.Writer, panes []tmuxcomm.PaneInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PANE\tTARGET\tPID\tPROGRAMS")
	for _, p := range panes {
		progs := strings.Join(p.Programs, ", ")
		if p.Dead {
			progs = "(dead) " + progs
		}
		if p.Self {
			progs += "  (you)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.ID, messages.SanitizeField(p.Target()), p.PID, messages.SanitizeField(progs))
	}
	tw.Flush()
}

// printHistorySession prints the i-th session of a history listing.
func printHistorySession(w io.Writer, i int, s tmuxcomm.SessionSummary, now time.Time) {
	if i > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s  (orchestrator %s, worker %s)\n", s.Name, s.Orchestrator, s.Worker)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, x := range s.Exchanges {
		age := ""
		if !x.SentAt.IsZero() {
			age = tmuxcomm.Age(now, x.SentAt)
		}
		state := stateText(x, 60)
		fmt.Fprintf(tw, "  %03d\t%s\t%s\t%s\t%s\t%s\n", x.Seq, orDash(x.ID), x.Status, state, age, x.Summary)
	}
	tw.Flush()
	for _, p := range allProblems(s) {
		fmt.Fprintf(w, "  ! %s\n", p)
	}
}

// printHistoryEnd ends a history listing of n sessions: "no exchanges" when there were none
// (first in the output, as it has always been: nothing came before it), then the foreign names.
func printHistoryEnd(w io.Writer, n int, foreign []string) {
	if n == 0 {
		fmt.Fprintln(w, "no exchanges")
	}
	for _, f := range foreign {
		fmt.Fprintf(w, "! not a session folder: %s\n", messages.SanitizeField(f))
	}
}

func allProblems(s tmuxcomm.SessionSummary) []string {
	out := append([]string(nil), s.Problems...)
	for _, x := range s.Exchanges {
		out = append(out, x.Problems...)
	}
	for _, f := range s.Foreign {
		out = append(out, "foreign file: "+messages.SanitizeField(f))
	}
	for _, f := range s.Orphans {
		out = append(out, "response without a request: "+f)
	}
	return out
}

// stateText is a delivery state with its evidence: "submitted (verified: input box empty after
// Enter)"; width > 0 shortens the evidence for a table.
func stateText(x *tmuxcomm.Exchange, width int) string {
	if x.State == "" {
		return "-"
	}
	ev := messages.SanitizeField(x.Evidence)
	if ev == "" || x.State == tmuxcomm.StateAnswered || x.State == tmuxcomm.StateRead {
		return x.State
	}
	if width > 0 {
		if r := []rune(ev); len(r) > width {
			ev = string(r[:width-3]) + "..."
		}
	}
	if x.State == tmuxcomm.StateSubmitted {
		if x.Verified {
			return x.State + " (verified: " + ev + ")"
		}
		return x.State + " (unverified: " + ev + ")"
	}
	return x.State + " (" + ev + ")"
}

// warnIntegrity says on stderr when an exchange's files differ from what was sent.
func warnIntegrity(c *cli, x *tmuxcomm.Exchange) {
	if x.Integrity != "mismatch" {
		return
	}
	fmt.Fprintf(c.stderr, "wcomm: warning: integrity mismatch: the request file of %s changed after it was sent\n", orDash(x.ID))
	for _, p := range x.Problems {
		fmt.Fprintf(c.stderr, "wcomm: warning: %s\n", p)
	}
}

// busyWaitSetting maps the --busy-wait flag to Engine.BusyWait: 0 on the command line means "do
// not wait", which the engine spells as a negative duration (its 0 means the default).
func busyWaitSetting(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printExchange(w io.Writer, x *tmuxcomm.Exchange) {
	fmt.Fprintf(w, "id:            %s\n", orDash(x.ID))
	fmt.Fprintf(w, "session:       %s\n", x.Session)
	fmt.Fprintf(w, "seq:           %03d\n", x.Seq)
	fmt.Fprintf(w, "orchestrator:  %s\nworker:        %s\n", x.Orchestrator, x.Worker)
	fmt.Fprintf(w, "capability:    %s\n", orDash(x.Capability))
	if st := stateText(x, 0); st != x.Status {
		fmt.Fprintf(w, "status:        %s (%s)\n", x.Status, st)
	} else {
		fmt.Fprintf(w, "status:        %s\n", x.Status) // answered, and nothing more to say
	}
	if x.Form != "" {
		how := x.Form
		if x.Profile != "" {
			how += " to a " + x.Profile + " pane"
		}
		fmt.Fprintf(w, "delivered as:  %s\n", how)
	}
	switch x.Integrity {
	case "":
	case "mismatch":
		fmt.Fprintf(w, "integrity:     MISMATCH: the request on disk is not what was sent (see below)\n")
	default:
		fmt.Fprintf(w, "integrity:     %s\n", x.Integrity)
	}
	fmt.Fprintf(w, "request:       %s\n", x.RequestPath)
	fmt.Fprintf(w, "response:      %s\n", x.ResponsePath)
	if !x.SentAt.IsZero() {
		fmt.Fprintf(w, "sent:          %s\n", x.SentAt.Local().Format(time.RFC3339))
	}
	if x.AnsweredAt != nil {
		fmt.Fprintf(w, "answered:      %s\n", x.AnsweredAt.Local().Format(time.RFC3339))
	}
	for _, ev := range x.Events {
		var kv []string
		for _, k := range []string{"pane", "profile", "form", "bytes", "before", "waited", "shown_after", "enter_delay", "enters", "verified", "evidence", "buffer", "error", "signal"} {
			if v, ok := ev.Detail[k]; ok && v != "" {
				kv = append(kv, k+"="+v)
			}
		}
		fmt.Fprintf(w, "  %s  %-12s %s\n", ev.At.Local().Format("15:04:05.000"), ev.State, messages.SanitizeField(strings.Join(kv, " ")))
	}
	for _, p := range x.Problems {
		fmt.Fprintf(w, "! %s\n", p)
	}
	if x.Delta != nil {
		fmt.Fprintf(w, "delta:         changes=%d risks=%d alternatives=%d needs_consult=%v\n",
			len(x.Delta.Changes), len(x.Delta.Risks), len(x.Delta.Alternatives), x.Delta.NeedsConsult)
	}
	fmt.Fprintf(w, "\n--- request\n%s", ensureNL(x.RequestBody))
	if x.Response() != nil {
		fmt.Fprintf(w, "--- response\n%s", ensureNL(x.ResponseBody))
	}
}

func ensureNL(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// checkExchangeRef refuses, as a usage error, an argument that can name no exchange: neither an
// exchange id nor an absolute path. A well-formed one that names nothing is "not found" (exit 4),
// and a path outside the root a refusal (exit 1), both decided later.
func checkExchangeRef(ref string) error {
	if filepath.IsAbs(ref) || messages.ValidID(ref) == nil {
		return nil
	}
	return usagef("%q is neither an exchange id (YYYYMMDD-HHMMSS-xxxx) nor an absolute path to a request or response file", messages.SanitizeField(ref))
}
