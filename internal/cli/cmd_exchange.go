package cli

// The exchange commands: send (with --resend), await and notify.

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm"
)

func init() {
	register(&command{
		Name: "send", Args: "--to TARGET[,TARGET...] | --all [--capability READONLY|WRITABLE] [--file F | -] [MESSAGE...] | --resend ID", Role: "orchestrator",
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
send exits 0 once the message is submitted or queued.

Several targets (--to repeated, or comma-separated: --to %3,codex,gpu1:%2), a group of the settings
(--to @reviewers) or --all without --to (every other pane of this session that runs an agent) make
a broadcast. Every target is resolved first: one that names no pane or several refuses the whole
send (exit 4) and nothing is written; targets that reach one pane get one request. Each pane gets
an exchange of its own; send prints the broadcast's id, then "PANE ID RESPONSE-PATH" for each
(--json: an array of the exchanges). 'wcomm await BROADCAST-ID' (or --wait) waits for every answer.`,
		Example: "wcomm send --to codex 'List the failing tests in ./pkg'\nwcomm send --to %7 --capability WRITABLE --file task.md --wait --timeout 10m\nwcomm send --to %3,codex --to @reviewers 'Review the diff'\nwcomm send --resend 20260117-120000-a1b2",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			var to listFlag
			fs.Var(&to, "to", "worker: pane id, tmux target or agent name; several: repeated, comma-separated or @GROUP")
			capability := fs.String("capability", string(tmuxcomm.DefaultCapability), "READONLY (look, change nothing) or WRITABLE")
			file := fs.String("file", "", "read the message from this file (- for stdin)")
			wait := fs.Bool("wait", false, "await the response and print it")
			var timeout time.Duration
			durationVar(fs, &timeout, "timeout", DefaultAwaitTimeout, "with --wait: how long to wait (0: no limit); without --wait, a usage error")
			first := fs.Bool("first", false, "with an agent name: take the first of several matches")
			all := fs.Bool("all", false, "without --to: every other pane of this session that runs an agent; with an agent name: search every session")
			dv := declareDelivery(fs, flagEnterDelay, flagBusyWait, flagFrom, flagAgent)
			agent := &dv.agent
			mq := mailFlags(fs)
			resend := fs.String("resend", "", "deliver the kept request ID again (same id and sequence number)")
			return func(args []string) error {
				if flagGiven(fs, "timeout") && !*wait {
					return usagef("--timeout is how long --wait waits, and send alone does not wait: add --wait, or use 'wcomm await ID --timeout D'")
				}
				ch := dv.choices()
				mq.choose(&ch)
				if *resend != "" {
					if len(to) > 0 || len(args) > 0 || *file != "" {
						return usagef("--resend ID takes no --to, --file or message: it sends the kept request again")
					}
					x, err := c.engine().Resend(c.ctx, tmuxcomm.ResendOptions{Ref: *resend, Agent: *agent, Choices: ch})
					if err != nil {
						// Not reportSent's "send --resend ID delivers it again": that is this call.
						if x != nil && !c.json {
							fmt.Fprintf(c.stderr, "wcomm send: the request stays kept at %s; 'wcomm show %s' shows its delivery log\n", x.RequestPath, x.ID)
						}
						return err
					}
					return c.reportSent(x, nil, *wait, timeout)
				}
				capab, err := tmuxcomm.ParseCapability(*capability)
				if err != nil {
					return err
				}
				body, err := c.readBody(*file, args)
				if err != nil {
					return err
				}
				// Handed (c.call): the resident runs it, and lives on to send into that folder again.
				s, err := c.engine().Send(c.ctx, tmuxcomm.SendOptions{Targets: to, All: *all, First: *first, Capability: capab, Body: body, Agent: *agent,
					Watch: c.call != nil, Choices: ch})
				switch {
				case s == nil:
					return err
				case s.Broadcast != nil:
					return c.reportBroadcast(s.Broadcast, err, *wait, timeout)
				case s.Host != "":
					return c.reportRelayed(s.Exchange, err, *wait, timeout)
				}
				return c.reportSent(s.Exchange, err, *wait, timeout)
			}
		},
	})
	register(&command{
		Name: "await", Args: "[ID | RESPONSE-PATH | BROADCAST-ID]... [--timeout D]", Role: "orchestrator",
		Summary: "wait for a response and print its body",
		Help: `Blocks until the response of the exchange is complete, then prints its body (--json: the whole
exchange). Without an argument: the newest request sent from this pane whose response no await has
returned yet. Returns at once if the response is already there; wakes within milliseconds of the
worker's notify (file events, not a sleep loop). A response written by a plain 'cat > file' is read only once its writer has closed it.
Exit 3 on timeout. Several ids, or a broadcast's id: waits for every response at once and prints
each as it comes under a line "--- PANE ID" (--json: at the end, the answers and the exchanges
still without one); exit 3 when the timeout passes first, naming the panes that answered and not.`,
		Example: "wcomm await 20260117-120000-a1b2 --timeout 5m\nwcomm await --json\nwcomm await bc-20260117-120000-1a2b3c4d",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			var timeout time.Duration
			durationVar(fs, &timeout, "timeout", DefaultAwaitTimeout, "how long to wait (0: no limit)")
			return func(args []string) error {
				return c.await(args, timeout)
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
				o := tmuxcomm.NotifyOptions{Ref: *response + *id, Choices: dv.choices()}
				mq.choose(&o.Choices)
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
				res, err := c.engine().Notify(c.ctx, o)
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
				fmt.Fprintf(c.stdout, "%s\n", res.Exchange.ResponsePath)
				fmt.Fprintf(c.stderr, "response saved; %s\n", res.Say())
				if which := res.Which(); which != "" {
					fmt.Fprintln(c.stderr, which)
				}
				return nil
			}
		},
	})
}
