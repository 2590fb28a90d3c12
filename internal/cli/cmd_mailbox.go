package cli

// The mailbox's commands: inbox (what waits for this pane), hook (an agent's turn-boundary hook
// taking it), and the hidden __deliver that a queuing command starts detached.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/mailbox"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func init() {
	register(&command{
		Name: "inbox", Args: "[--peek] [--all] [--pane %N]", Role: "both",
		Summary: "take the messages waiting for this pane (responses, questions, answers), oldest first",
		Help: `A message for a pane that is not ready (an agent mid-turn, someone's text in its input box, a
shell running a job, copy mode) waits in the pane's outbox and is typed in at its next idle moment, or
handed to the agent by its hooks at a turn boundary. 'wcomm inbox' takes what waits now: it prints
each message, oldest first, and they count as delivered, so none is typed in afterwards. --peek only
looks; --all also lists what ended in the last week (delivered, superseded, expired, undeliverable),
with how. A message typed in as it was sent never waited: its exchange's log has it, not the inbox.`,
		Example: "wcomm inbox\nwcomm inbox --peek --json\nwcomm inbox --all",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			peek := fs.Bool("peek", false, "only look: leave the messages waiting")
			all := fs.Bool("all", false, "also what ended in the last week")
			pane := fs.String("pane", "", "another pane's inbox (default: your own, $TMUX_PANE)")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("inbox takes no arguments")
				}
				if *pane != "" {
					if _, err := messages.ParsePaneID(*pane); err != nil {
						return usagef("--pane: %v", err)
					}
				}
				e := c.engine()
				res, err := e.Inbox(c.ctx, mailbox.InboxOptions{Pane: messages.PaneID(*pane), Take: !*peek, Via: "inbox", All: *all})
				if err != nil {
					return err
				}
				for _, p := range res.Problems {
					fmt.Fprintf(c.stderr, "wcomm inbox: %s\n", messages.SanitizeField(p))
				}
				if c.json {
					return c.printJSON(res)
				}
				printInbox(c.stdout, res, time.Now())
				return nil
			}
		},
	})
	register(&command{
		Name: "hook", Args: "--agent claude|codex|gemini", Role: "admin",
		Summary: "(run by an agent's hooks) hand the messages waiting for this pane to the model at a turn boundary; relay its permission prompts to the person",
		Help: `Installed by 'wcomm install-skill' into an agent's hook settings. It reads the hook's event JSON on
stdin, takes what waits in this pane's outbox (as 'wcomm inbox' does) and prints it in the form the
agent takes as context for its model: at a prompt, added context; at the end of a turn, a reason to
go on. Nothing waiting: it prints nothing. It never fails the agent's turn: a problem goes to stderr
and it exits 0. Run outside the pane its $TMUX_PANE names, it does nothing and exits 1.

At a PermissionRequest (Claude Code asks leave to run a tool) it records a question of type
permission for the person, reached through the answer channels, the console and 'wcomm answer ID
allow|always|deny [--message TEXT]', and waits: the first answer is handed back to the agent. An
answer given in the pane itself ends the question as answered at the terminal; when nobody answers
within the settings' permissions.wait (default 590s) it prints nothing and the dialog stays.`,
		Example: "echo '{\"hook_event_name\":\"Stop\"}' | wcomm hook --agent claude",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			agent := fs.String("agent", "claude", "whose hook: claude, codex or gemini")
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("hook takes no arguments")
				}
				if profile.HookAgent(*agent) == nil {
					return usagef("--agent: %q is not one of %s", *agent, strings.Join(profile.AgentsWith(func(a *profile.Agent) bool { return a.Hooks != nil }), ", "))
				}
				err := c.runHook(*agent)
				if errors.Is(err, tmuxcomm.ErrNotOwnPane) {
					return err // a forged pane: fail, so whoever ran it sees it
				}
				if err != nil {
					fmt.Fprintf(c.stderr, "wcomm hook: %v\n", err)
				}
				return nil
			}
		},
	})
	register(&command{
		Name: "__deliver", Args: "--server KEY --pane %N", Role: "admin", Hidden: true,
		Summary: "deliver what waits in a pane's outbox as soon as the pane is ready, then exit",
		Help:    "Started detached by a command that queued a message; at most one runs per pane. It exits when the outbox is empty.",
		Example: "wcomm __deliver --server 1234-1764000000 --pane %6",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			server := fs.String("server", "", "the tmux server's key (PID-STARTTIME)")
			pane := fs.String("pane", "", "the pane")
			guard := fs.Int("guard", 0, "watch this process's delivery; deliver only should it die before recording it")
			return func(args []string) error {
				if *server == "" || *pane == "" || len(args) > 0 {
					return usagef("__deliver needs --server KEY --pane %%N")
				}
				p, err := messages.ParsePaneID(*pane)
				if err != nil {
					return usagef("--pane: %v", err)
				}
				job := tmuxcomm.HelperJob{Kind: tmuxcomm.HelperDeliverer, Server: *server, Pane: p}
				if *guard > 0 {
					job.Kind, job.PID = tmuxcomm.HelperGuard, *guard
				}
				return c.engine().RunHelper(c.ctx, job)
			}
		},
	})
}

// printInbox prints an inbox: one block per message, its text last.
func printInbox(w io.Writer, res *mailbox.InboxResult, now time.Time) {
	if len(res.Items) == 0 {
		fmt.Fprintf(w, "nothing waits for pane %s\n", res.Pane)
		return
	}
	for i, it := range res.Items {
		if i > 0 {
			fmt.Fprintln(w)
		}
		from := ""
		if it.From != "" {
			from = " from " + string(it.From)
		}
		fmt.Fprintf(w, "%s%s, %s\n", it.Kind, from, inboxWhen(it, now))
		if it.Detail != "" {
			fmt.Fprintf(w, "  (%s)\n", messages.SanitizeField(it.Detail))
		}
		fmt.Fprintln(w, messages.Sanitize(it.Text, true))
	}
}

// runHook runs the agent's hook through the engine: what it hands the agent goes to stdout, what
// goes wrong without stopping it to stderr.
func (c *cli) runHook(agent string) error {
	data, err := store.ReadBounded(c.ctx, c.stdin, 1<<20, "the hook's input on stdin")
	if err != nil {
		return err
	}
	return c.engine().Hook(c.ctx, tmuxcomm.Hooking{Agent: agent, Input: data,
		Out:  func(b []byte) error { _, err := c.stdout.Write(b); return err },
		Warn: func(w string) { fmt.Fprintf(c.stderr, "wcomm hook: %s\n", messages.SanitizeField(w)) }})
}

// mailQueue holds the mailbox flags of the commands that deliver.
type mailQueue struct {
	noQueue bool
	ttl     time.Duration
	set     func() map[string]bool
}

// mailFlags declares --no-queue and --ttl.
func mailFlags(fs *flag.FlagSet) *mailQueue {
	q := &mailQueue{set: func() map[string]bool { return flagsSet(fs) }}
	fs.BoolVar(&q.noQueue, "no-queue", false, "fail fast instead of queuing when the pane is not ready (env WCOMM_NO_QUEUE=1)")
	durationVar(fs, &q.ttl, "ttl", settings.DefaultMailTTL, "how long a queued message may wait for the pane before it expires (env WCOMM_MAIL_TTL)")
	return q
}

// choose puts the mailbox flags given into a call's choices.
func (q *mailQueue) choose(ch *tmuxcomm.Choices) {
	set := q.set()
	if set["no-queue"] {
		ch.NoQueue = &q.noQueue
	}
	if set["ttl"] {
		ch.TTL = &q.ttl
	}
}

// reportSent prints what send did: "ID RESPONSE-PATH" on stdout, and on stderr whether the request
// is queued and why; with wait it then awaits the response.
func (c *cli) reportSent(x *exchange.Exchange, err error, wait bool, timeout time.Duration) error {
	if err != nil {
		if x != nil && !c.json {
			fmt.Fprintf(c.stderr, "wcomm send: request kept at %s; 'wcomm send --resend %s' delivers it again\n", x.RequestPath, x.ID)
		}
		return err
	}
	if x.State == exchange.StateHeld && !c.json {
		fmt.Fprintf(c.stderr, "wcomm send: held: %s; the request waits in pane %s's outbox until the person releases it ('wcomm release %s')\n",
			messages.SanitizeField(x.Evidence), x.Worker, x.ID)
	}
	queued := x.State == exchange.StateQueued
	if queued && !c.json {
		fmt.Fprintf(c.stderr, "wcomm send: queued: pane %s is not ready (%s); the request is delivered at its next idle moment or turn boundary ('wcomm show %s' follows it)\n",
			x.Worker, messages.SanitizeField(x.Evidence), x.ID)
	}
	return c.reportOut(x, wait, timeout)
}

// reportOut prints a request that went out (its id and response path, or the exchange as JSON),
// or with wait, awaits its response and prints that.
func (c *cli) reportOut(x *exchange.Exchange, wait bool, timeout time.Duration) error {
	if !wait {
		if c.json {
			return c.printJSON(x)
		}
		fmt.Fprintf(c.stdout, "%s %s\n", x.ID, x.ResponsePath)
		return nil
	}
	fmt.Fprintf(c.stderr, "sent %s; waiting for %s\n", x.ID, x.ResponsePath)
	// By path, not by id: ids have 16 random bits per second, and another exchange with
	// the same id would be found first (TestSendWaitIDCollision).
	printed := false
	ctx, handed := c.awaitCtx()
	_, err := c.engine().Await(ctx, tmuxcomm.AwaitOptions{Refs: []string{x.ResponsePath}, Timeout: timeout, Lean: !c.json, Watch: handed,
		Each: func(_ string, done *exchange.Exchange) error {
			printed = true
			return c.printResponse(done)
		}})
	if err != nil && !printed {
		// The request went out: stdout says which, as a send without --wait does, so a script
		// can await it again.
		if c.json {
			_ = c.printJSON(x)
		} else {
			fmt.Fprintf(c.stdout, "%s %s\n", x.ID, x.ResponsePath)
		}
		return err
	}
	return err
}

// atOnce is how soon after it was sent a message that ended counts as ended "at once".
const atOnce = time.Second

// inboxWhen says when an inbox item was sent and how it ended, in facts the record holds: when it
// was sent, and how long after that it ended. Every message passes through the outbox, but one
// delivered as it was sent never waited there, so an ended one is not called "queued"; only one
// still waiting is.
func inboxWhen(it mailbox.InboxItem, now time.Time) string {
	ago := func(t time.Time) time.Duration { return now.Sub(t).Round(time.Second) }
	if it.EndedAt == nil {
		return fmt.Sprintf("queued %s ago, %s", ago(it.QueuedAt), it.State)
	}
	state := it.State
	if it.Via != "" {
		state += " via " + it.Via
	}
	after := it.EndedAt.Sub(it.QueuedAt)
	if after < atOnce {
		return fmt.Sprintf("sent %s ago, %s at once", ago(it.QueuedAt), state)
	}
	return fmt.Sprintf("sent %s ago, %s %s later", ago(it.QueuedAt), state, after.Round(time.Second))
}
