package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// The question relay's commands: ask (worker), answer (orchestrator or a person), questions.

func init() {
	register(&command{
		Name: "ask", Role: "worker",
		Args:    "--task ID --context TEXT --option A --option B ... [--type T] [--urgency U] [--timeout D] QUESTION... | --action NAME [--target PATH ...] [QUESTION...] | --envelope FILE|- | --wait ID",
		Summary: "(worker) ask your orchestrator a structured question and print the ANSWER block",
		Help: `Stores the question in the session folder of the request you are working on (the newest
unanswered request addressed to your pane; --exchange ID names another; with no request, --to
PANE names the orchestrator), pastes a QUESTION block (QUESTION, TASK, URGENCY, OPTIONS, CONTEXT,
ID) into the orchestrator's pane, and waits. When the answer comes, it prints the ANSWER block
(ANSWER, TASK, DECIDED_BY, ID) on stdout: continue your task from there.
--type: numbered (default; at least 2 --option), yes-no, fixed (only the options' exact texts),
freeform (any text; --pattern REGEX narrows it). CONTEXT is one or two sentences: what you found
and why it blocks.
--urgency non-blocking prints the question's id at once; keep working and fetch the answer with
'wcomm ask --wait ID' (an answer that comes while no ask waits is pasted into your pane).
Timeout (default 180s, settings file or WCOMM_QUESTION_TIMEOUT; 0 = no limit): with auto-answer on
(default) the first option is taken, DECIDED_BY auto-timeout; with it off, ask exits 3. At most 3
questions per worker per task (settings): the next gets DECIDED_BY cap-exceeded at once.
--bind-git records HEAD and 'git status' of your folder: an answer after they change is refused.
--action NAME asks a yes-no approval of an action registered in the settings file (actions:), bound
to a fingerprint of its definition, its targets (and each --target) and HEAD and 'git status' of its
folder. A yes authorizes it; 'wcomm actions run' executes it once, only while that state holds. No
timeout ever approves it. An unregistered NAME is a usage error naming the registered ones.
--envelope reads your final message and asks the questions of its first fenced json block with an
"openQuestions" array (1 to 4). No envelope: nothing to ask, exit 0.
A question is never a blocker: whenever ask ends without an answer, it says so and you continue on
your best judgment, marking the choice "assumed — needs review".`,
		Example: `wcomm ask --task task-3 --context 'The plan names no hash; bcrypt is already a dependency.' \
  --option 'Use bcrypt (already in deps)' --option 'Use argon2 (stronger but new dep)' \
  'Should the auth module use bcrypt or argon2 for password hashing?'
wcomm ask --task task-3 --type yes-no --urgency non-blocking --context 'Tests pass either way.' 'May I rename Login to SignIn?'
wcomm ask --wait task-3.q2-a1b2 --timeout 5m
wcomm ask --task task-3 --envelope final-message.md
wcomm ask --task task-3 --action publish --target docs/index.md --urgency non-blocking 'Publish the docs?'`,
		Setup: setupAsk,
	})
	register(&command{
		Name: "answer", Role: "orchestrator",
		Args:    "ID ANSWER... [--source NAME] [--message TEXT]",
		Summary: "answer a worker's question: the first valid answer wins and wakes the worker",
		Help: `Checks ANSWER against the question's type: numbered takes the option's number (2), letter (B) or
exact text; yes-no takes yes or no; fixed takes one of the fixed answers exactly; freeform takes any
text (matching the question's pattern, if it has one). An invalid answer is refused with the
accepted forms (exit 2) and the question stays open. The first valid answer wins; a later one is
recorded as stale and changes nothing (exit 1). The answer is saved in the session folder, wakes the
worker's waiting 'wcomm ask' within milliseconds, or, when no ask waits, is pasted into the worker's
pane as an ANSWER block. Works from any pane or from none; --source names the channel (default local).
An answer to a stale question (its request was already answered, its worker pane is gone, or its
git binding changed) is refused with the reason.

A permission question (an agent asks leave to run a tool) takes allow, always (allow, and the
agent's rule for it for this session) or deny; --message gives a deny the words the model reads.
Its answer goes to the agent's waiting hook, never into a pane. Only the person answers one: typed in
the foreground of a terminal no agent runs on (an agent's tool call, setsid or tmux run-shell is
refused), unless your own config file's permissions.answerers names the agent or pane.`,
		Example: "wcomm answer task-3.q1-a1b2 B\nwcomm answer task-3.q1-a1b2 'Use bcrypt (already in deps)'\nwcomm answer task-3.q2-77e0 yes --source telegram\nwcomm answer permission.q4-c0de deny --message 'use the staging database'",
		Setup:   setupAnswer,
	})
	register(&command{
		Name: "questions", Role: "orchestrator",
		Args:    "[--pending] | ID... | resolve ID --reason TEXT",
		Summary: "list workers' questions, show one whole with its options, resolve an abandoned one",
		Help: `Lists every question under the root: id, state (pending, answered, auto-answered, cap-exceeded,
stale, resolved), task, worker pane, the request it is about, age, and the question; stale and
resolved ones say why. --pending shows only questions still waiting for an answer (stale ones are
not surfaced). 'questions ID' shows questions whole: the QUESTION block with its options, the
state, and how to answer. Questions survive any crash or restart: a pending one can always be answered.
'questions resolve ID --reason TEXT' closes a question without inventing an answer; a waiting ask
ends and tells its worker to continue on its best judgment.`,
		Example: "wcomm questions task-3.q1-a1b2\nwcomm questions --pending\nwcomm questions --json\nwcomm questions resolve task-3.q1-a1b2 --reason 'task was cancelled'",
		Setup:   setupQuestions,
	})
}

// stringsFlag collects a repeatable flag.
type stringsFlag struct{ v *[]string }

func (f stringsFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strings.Join(*f.v, ", ")
}

func (f stringsFlag) Set(s string) error { *f.v = append(*f.v, s); return nil }

// flagsSet returns the names of the flags given on the command line.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

func setupAnswer(fs *flag.FlagSet, c *cli) func([]string) error {
	source := fs.String("source", "local", "who or which channel answers (local, telegram, a name)")
	message := fs.String("message", "", "a permission question's deny: what the model is told")
	dv := declareDelivery(fs, flagEnterDelay)
	return func(args []string) error {
		if len(args) < 2 {
			return usagef("answer takes the question ID and the ANSWER")
		}
		id := args[0]
		raw := strings.Join(args[1:], " ")
		if len(args) == 2 && args[1] == "-" {
			data, err := store.ReadBounded(c.ctx, c.stdin, 64<<10, "the answer on stdin")
			if err != nil {
				return err
			}
			raw = string(data)
		}
		if _, err := c.settings(); err != nil {
			return err
		}
		res, err := c.engine().Answer(c.ctx, tmuxcomm.AnswerOptions{Choices: dv.choices(),
			AnswerOptions: questions.AnswerOptions{ID: id, Raw: raw, Source: *source, Message: *message, CheckCaller: true}})
		if err != nil {
			return err
		}
		if res.Warning != "" {
			fmt.Fprintf(c.stderr, "wcomm answer: warning: %s\n", res.Warning)
		}
		if c.json {
			return c.printJSON(res)
		}
		fmt.Fprintln(c.stdout, res.Answered())
		if how := res.Say(); how != "" {
			fmt.Fprintln(c.stderr, how)
		}
		return nil
	}
}

func setupQuestions(fs *flag.FlagSet, c *cli) func([]string) error {
	pending := fs.Bool("pending", false, "only questions still waiting for an answer")
	reason := fs.String("reason", "", "with resolve: why the question is closed without an answer")
	return func(args []string) error {
		if _, err := c.settings(); err != nil {
			return err
		}
		if len(args) > 0 && args[0] == "resolve" {
			if len(args) != 2 {
				return usagef("questions resolve takes one question ID and --reason TEXT")
			}
			if strings.TrimSpace(*reason) == "" {
				return usagef("questions resolve needs --reason TEXT: say why it is closed without an answer")
			}
			sts, _, err := c.engine().Questions(c.ctx, questions.QuestionsOptions{IDs: args[1:], Resolve: *reason})
			if err != nil {
				return err
			}
			st := sts[0]
			if c.json {
				return c.printJSON(st)
			}
			fmt.Fprintf(c.stdout, "%s resolved: %s\n", st.ID, messages.SanitizeField(st.Reason))
			return nil
		}
		if *reason != "" {
			return usagef("--reason goes with 'questions resolve ID'")
		}
		if len(args) > 0 {
			if *pending {
				return usagef("--pending lists questions; give it no question ID")
			}
			sts, _, err := c.engine().Questions(c.ctx, questions.QuestionsOptions{IDs: args})
			if err != nil {
				return err
			}
			if c.json {
				return c.printJSON(map[string]any{"questions": sts})
			}
			for i, st := range sts {
				if i > 0 {
					fmt.Fprintln(c.stdout)
				}
				printQuestion(c.stdout, st, time.Now())
			}
			return nil
		}
		list, problems, err := c.engine().Questions(c.ctx, questions.QuestionsOptions{Pending: *pending})
		if err != nil {
			return err
		}
		if c.json {
			if list == nil {
				list = []*questions.QuestionStatus{}
			}
			if problems == nil {
				problems = []string{}
			}
			return c.printJSON(map[string]any{"questions": list, "problems": problems, "actions": c.actionsNote()})
		}
		printQuestions(c.stdout, list, problems, time.Now())
		if note := c.actionsNote(); note != "" {
			fmt.Fprintln(c.stdout, note)
		}
		return nil
	}
}

// printQuestion shows one question whole: its QUESTION block, options and all, where it stands,
// and how to answer it while it is pending.
func printQuestion(w io.Writer, st *questions.QuestionStatus, now time.Time) {
	q := st.Question
	q.ID = st.ID
	for _, line := range strings.Split(messages.FormatQuestionBlock(q), "\n") {
		fmt.Fprintln(w, messages.SanitizeField(line))
	}
	fmt.Fprintf(w, "STATE: %s (worker %s, request %s, asked %s ago)\n", st.State, st.Worker, orDash(st.Exchange), exchange.Age(now, st.AskedAt))
	switch {
	case st.Answer != nil:
		fmt.Fprintf(w, "ANSWER: %s (decided by %s, source %s)\n", messages.SanitizeField(st.Answer.Answer), st.Answer.DecidedBy, messages.SanitizeField(st.Answer.Source))
	case st.Reason != "":
		fmt.Fprintf(w, "REASON: %s\n", messages.SanitizeField(st.Reason))
	}
	if st.State == questions.QuestionPending {
		fmt.Fprintln(w, messages.SanitizeField(messages.AnswerHint(q, "wcomm")))
	}
}

func printQuestions(w io.Writer, list []*questions.QuestionStatus, problems []string, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no questions")
	}
	if len(list) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tTASK\tWORKER\tREQUEST\tAGE\tQUESTION")
		for _, st := range list {
			q := messages.SanitizeField(st.Text)
			if len(q) > 70 {
				q = q[:67] + "..."
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.ID, st.State, st.Task, st.Worker, orDash(st.Exchange),
				exchange.Age(now, st.AskedAt), q)
		}
		tw.Flush()
		for _, st := range list {
			switch {
			case st.Answer != nil:
				fmt.Fprintf(w, "  %s: %s (decided by %s, source %s)\n", st.ID, messages.SanitizeField(st.Answer.Answer), st.Answer.DecidedBy, messages.SanitizeField(st.Answer.Source))
			case st.Reason != "":
				fmt.Fprintf(w, "  %s: %s: %s\n", st.ID, st.State, messages.SanitizeField(st.Reason))
			}
		}
	}
	for _, p := range problems {
		fmt.Fprintf(w, "! %s\n", messages.SanitizeField(p))
	}
}
