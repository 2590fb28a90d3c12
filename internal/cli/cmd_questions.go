package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
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
		Args:    "ID ANSWER... [--source NAME]",
		Summary: "answer a worker's question: the first valid answer wins and wakes the worker",
		Help: `Checks ANSWER against the question's type: numbered takes the option's number (2), letter (B) or
exact text; yes-no takes yes or no; fixed takes one of the fixed answers exactly; freeform takes any
text (matching the question's pattern, if it has one). An invalid answer is refused with the
accepted forms (exit 2) and the question stays open. The first valid answer wins; a later one is
recorded as stale and changes nothing (exit 1). The answer is saved in the session folder, wakes the
worker's waiting 'wcomm ask' within milliseconds, or, when no ask waits, is pasted into the worker's
pane as an ANSWER block. Works from any pane or from none; --source names the channel (default local).
An answer to a stale question (its request was already answered, its worker pane is gone, or its
git binding changed) is refused with the reason.`,
		Example: "wcomm answer task-3.q1-a1b2 B\nwcomm answer task-3.q1-a1b2 'Use bcrypt (already in deps)'\nwcomm answer task-3.q2-77e0 yes --source telegram",
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

// settings are the settings file and environment that apply in the working folder.
func (c *cli) settings() (tmuxcomm.Settings, error) {
	dir, err := os.Getwd()
	if err != nil {
		dir = ""
	}
	return tmuxcomm.LoadSettings(dir, c.getenv)
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

// judgedErr ends an ask's error with the instruction to continue on best judgment.
type judgedErr struct{ err error }

func (j *judgedErr) Error() string { return j.err.Error() + "; " + tmuxcomm.BestJudgment }
func (j *judgedErr) Unwrap() error { return j.err }

func judged(err error) error {
	var je *tmuxcomm.JudgedError
	if err == nil || errors.As(err, &je) {
		return err
	}
	return &judgedErr{err: err}
}

func setupAsk(fs *flag.FlagSet, c *cli) func([]string) error {
	task := fs.String("task", "", "task id, ^[a-zA-Z0-9_-]+$ (default $WCOMM_TASK, else the id of the request you work on)")
	urgency := fs.String("urgency", "blocking", "blocking (wait for the answer) or non-blocking (print the id and return)")
	var options, waits []string
	fs.Var(stringsFlag{&options}, "option", "an option (repeat: --option A --option B); numbered and fixed need 2 or more")
	context := fs.String("context", "", "one or two sentences: what you found and why it blocks")
	typ := fs.String("type", "numbered", "numbered, yes-no, fixed or freeform")
	pattern := fs.String("pattern", "", "freeform only: a regular expression the whole answer must match")
	var timeout time.Duration
	durationVar(fs, &timeout, "timeout", 0, "how long to wait (default from settings, 180s; 0 = no limit)")
	auto := fs.Bool("auto-answer", true, "on timeout take the first option (default from settings; --auto-answer=false exits 3)")
	exchange := fs.String("exchange", "", "the request (id or path) the question is about (default: the newest one addressed to you)")
	to := fs.String("to", "", "the orchestrator's pane, when no request ties the question to one")
	dv := declareDelivery(fs, flagEnterDelay, flagFrom)
	bindGit := fs.Bool("bind-git", false, "refuse answers given after HEAD or 'git status' of --dir changes")
	dir := fs.String("dir", "", "the working folder for --bind-git and on_question (default: the current one)")
	envelope := fs.String("envelope", "", "ask the openQuestions of an agent's final message in FILE (- for stdin)")
	fs.Var(stringsFlag{&waits}, "wait", "wait for the answer of a question asked before (repeatable)")
	action := fs.String("action", "", "ask a yes-no approval of this registered action (see 'wcomm actions')")
	var targets []string
	fs.Var(stringsFlag{&targets}, "target", "with --action: one more file or folder whose content the approval is bound to (repeatable)")
	return func(args []string) error {
		set := flagsSet(fs)
		s, err := c.settings()
		if err != nil {
			return judged(err)
		}
		if !set["timeout"] {
			timeout = s.QuestionTimeout
		}
		if !set["auto-answer"] {
			*auto = s.AutoAnswer
		}
		workdir := *dir
		if workdir == "" {
			workdir, _ = os.Getwd()
		}
		e := c.engine()
		if err := dv.apply(e); err != nil {
			return judged(err)
		}

		if len(waits) > 0 {
			for _, n := range []string{"task", "option", "context", "type", "pattern", "envelope", "exchange", "to", "bind-git", "urgency", "action", "target"} {
				if set[n] {
					return judged(usagef("--wait picks up questions asked before; it takes no --%s", n))
				}
			}
			if len(args) > 0 {
				return judged(usagef("--wait takes no question text"))
			}
			for _, id := range waits {
				if _, err := messages.ParseQuestionID(id); err != nil {
					return judged(usagef("--wait: %v", err))
				}
			}
			// The wait is bounded as a blocking ask is (flag, else environment, else settings),
			// from now: a question asked non-blocking never expires by its age.
			res, err := e.WaitQuestions(c.ctx, tmuxcomm.WaitOptions{IDs: waits, Timeout: timeout, TimeoutSet: true, AutoAnswer: auto})
			return c.askOutput(res, err)
		}

		if *task == "" {
			*task = c.getenv("WCOMM_TASK")
		}
		// Without --task the request the question is about names it: its id is the task.
		taskID := func() (string, error) {
			if *task != "" {
				return *task, nil
			}
			x, err := e.WorkingOn(c.ctx, *exchange)
			if err != nil {
				return "", usagef("ask needs --task ID: no request addressed to your pane names the task (%v)", err)
			}
			*task = x.ID
			return x.ID, nil
		}
		u, err := messages.ParseUrgency(*urgency)
		if err != nil {
			return judged(usagef("--urgency: %v", err))
		}
		var qs []messages.Question
		if len(targets) > 0 && *action == "" {
			return judged(usagef("--target goes with --action NAME"))
		}
		if *action != "" {
			if *envelope != "" || len(options) > 0 || set["pattern"] || *bindGit || (set["type"] && *typ != string(messages.YesNo)) {
				return judged(usagef("--action asks one yes-no question bound to its own fingerprint; give no --envelope, --option, --pattern, --bind-git or other --type"))
			}
			*typ = string(messages.YesNo)
			if len(args) == 0 {
				args = []string{fmt.Sprintf("May the dispatcher run action %s?", *action)}
			}
			if *context == "" {
				*context = "A yes lets 'wcomm actions run' run it once, only while its targets, HEAD and git status stay as they are now."
			}
		}
		if *envelope != "" {
			if len(args) > 0 || len(options) > 0 || set["type"] || set["pattern"] {
				return judged(usagef("--envelope takes its questions and options from the file; give no question text, --option, --type or --pattern"))
			}
			qs, err = c.envelopeQuestions(*envelope, taskID, u, *context)
			if err != nil {
				return judged(err)
			}
			if qs == nil {
				fmt.Fprintf(c.stderr, "wcomm ask: no openQuestions envelope in %s: nothing to ask\n", sourceName(*envelope))
				return nil
			}
		} else {
			if len(args) == 0 {
				return judged(usagef("ask needs the QUESTION text"))
			}
			if _, err := taskID(); err != nil {
				return judged(err)
			}
			t, err := messages.ParseQuestionType(*typ)
			if err != nil {
				return judged(usagef("--type: %v", err))
			}
			q := messages.Question{Text: strings.Join(args, " "), Task: *task, Urgency: u, Type: t,
				Options: options, Pattern: *pattern, Context: *context}.Normalized()
			if err := q.Validate(); err != nil {
				return judged(usagef("%v", err))
			}
			qs = []messages.Question{q}
		}
		if !s.RelayEnabled {
			fmt.Fprintln(c.stderr, "wcomm ask: the question relay is off (question_relay.enabled: false); nothing was asked")
			if c.json {
				return c.printJSON(map[string]any{"questions": []any{}, "relay_enabled": false})
			}
			for i, q := range qs {
				if i > 0 {
					fmt.Fprintln(c.stdout)
				}
				fmt.Fprintln(c.stdout, messages.FormatAnswerBlock(tmuxcomm.RelayOffAnswer(q.Task)))
			}
			return nil
		}
		c.warnIgnored(s)
		var intent *messages.Intent
		if *action != "" {
			intent, err = e.PrepareIntent(c.ctx, tmuxcomm.IntentOptions{Action: *action, Settings: s, Targets: targets,
				Dir: workdir, RunID: c.getenv("WCOMM_RUN_ID")})
			if errors.Is(err, tmuxcomm.ErrUnregistered) {
				return judged(&exitErr{code: exitUsage, err: err})
			}
			if err != nil {
				return judged(err)
			}
		}
		res, err := e.Ask(c.ctx, tmuxcomm.AskOptions{
			Questions: qs, Exchange: *exchange, To: *to, Wait: u == messages.Blocking, Timeout: timeout,
			AutoAnswer: *auto, MaxQuestions: s.MaxQuestions, BindGit: *bindGit, Dir: workdir,
			Hook: s.OnQuestion, HookTimeout: s.OnQuestionTimeout, Intent: intent,
		})
		if intent != nil && res != nil && len(res.Questions) == 1 {
			if b := res.Questions[0].AnswerBlock(); b != nil && b.Text == "yes" && res.Questions[0].State == tmuxcomm.QuestionAnswered {
				fmt.Fprintf(c.stderr, "wcomm ask: approved; the dispatcher runs it: 'wcomm actions run --id %s' (do not run it yourself)\n", res.Questions[0].ID)
			}
		}
		return c.askOutput(res, err)
	}
}

func sourceName(file string) string {
	if file == "-" {
		return "stdin"
	}
	return file
}

// maxEnvelope bounds an agent's message holding an openQuestions envelope.
const maxEnvelope = 16 << 20

// envelopeQuestions reads an agent's message and returns the questions of its envelope, nil
// when it has none (then no task is needed: there is nothing to ask). A malformed envelope is reported as FILE:LINE: PATH: what is wrong, the text
// to hand back to the agent.
func (c *cli) envelopeQuestions(file string, task func() (string, error), u messages.Urgency, context string) ([]messages.Question, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = tmuxcomm.ReadBounded(c.ctx, c.stdin, maxEnvelope, "the envelope on stdin")
	} else {
		data, err = tmuxcomm.ReadFileBounded(c.ctx, file, maxEnvelope)
	}
	if err != nil {
		return nil, fmt.Errorf("read the envelope: %w", err)
	}
	env, err := messages.ParseEnvelope(string(data))
	if err == nil && env != nil {
		id, terr := task()
		if terr != nil {
			return nil, terr
		}
		var qs []messages.Question
		if qs, err = env.ToQuestions(id, u, context); err == nil {
			return qs, nil
		}
	}
	if err != nil {
		var ee *messages.EnvelopeError
		if errors.As(err, &ee) {
			msg := ee.Msg
			if ee.Path != "" {
				msg = ee.Path + ": " + msg
			}
			return nil, fmt.Errorf("%s:%d: %s (fix the envelope and run ask --envelope again)", sourceName(file), ee.Line, msg)
		}
		return nil, err
	}
	return nil, nil
}

// askOutput prints what an ask got: ANSWER blocks on stdout for decided questions, the ids of
// questions still pending (non-blocking), warnings and notes on stderr; --json prints the result.
func (c *cli) askOutput(res *tmuxcomm.AskResult, err error) error {
	if res == nil {
		return judged(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(c.stderr, "wcomm ask: warning: %s\n", w)
	}
	if res.Queued && !c.json {
		fmt.Fprintln(c.stderr, "wcomm ask: the orchestrator's pane is busy: the question is queued and reaches it when it is idle")
	}
	if c.json {
		if perr := c.printJSON(res); perr != nil {
			return perr
		}
		return judged(err)
	}
	n := 0
	for _, st := range res.Questions {
		if b := st.AnswerBlock(); b != nil {
			if n > 0 {
				fmt.Fprintln(c.stdout)
			}
			fmt.Fprintln(c.stdout, messages.FormatAnswerBlock(*b))
			n++
			if st.State == tmuxcomm.QuestionAutoAnswered {
				fmt.Fprintf(c.stderr, "wcomm ask: nobody answered %s in time; its first option was taken for you: mark the choice \"assumed — needs review\"\n", st.ID)
			}
		}
	}
	if err == nil {
		var pending []string
		for _, st := range res.Questions {
			if st.State == tmuxcomm.QuestionPending {
				fmt.Fprintln(c.stdout, st.ID)
				pending = append(pending, st.ID)
			}
		}
		if len(pending) > 0 {
			fmt.Fprintf(c.stderr, "wcomm ask: asked; keep working and fetch the answer with 'wcomm ask --wait %s' (an answer that comes while no ask waits is pasted into your pane)\n",
				strings.Join(pending, " --wait "))
		}
	}
	return judged(err)
}

func setupAnswer(fs *flag.FlagSet, c *cli) func([]string) error {
	source := fs.String("source", "local", "who or which channel answers (local, telegram, a name)")
	dv := declareDelivery(fs, flagEnterDelay)
	return func(args []string) error {
		if len(args) < 2 {
			return usagef("answer takes the question ID and the ANSWER")
		}
		id := args[0]
		raw := strings.Join(args[1:], " ")
		if len(args) == 2 && args[1] == "-" {
			data, err := tmuxcomm.ReadBounded(c.ctx, c.stdin, 64<<10, "the answer on stdin")
			if err != nil {
				return err
			}
			raw = string(data)
		}
		if _, err := messages.ParseQuestionID(id); err != nil {
			return usagef("%v", err)
		}
		if _, err := c.settings(); err != nil {
			return err
		}
		e := c.engine()
		if err := dv.apply(e); err != nil {
			return err
		}
		res, err := e.Answer(c.ctx, tmuxcomm.AnswerOptions{ID: id, Raw: raw, Source: *source})
		if err != nil {
			if errors.Is(err, messages.ErrInvalidAnswer) {
				return &exitErr{code: exitUsage, err: err}
			}
			return err
		}
		if res.Warning != "" {
			fmt.Fprintf(c.stderr, "wcomm answer: warning: %s\n", res.Warning)
		}
		if c.json {
			return c.printJSON(res)
		}
		st := res.Question
		fmt.Fprintf(c.stdout, "%s answered: %s\n", st.ID, messages.SanitizeField(st.Answer.Answer))
		switch res.Signal {
		case "ask":
			fmt.Fprintf(c.stderr, "the worker's waiting ask (pane %s) woke on the answer\n", st.Worker)
		case "pasted":
			fmt.Fprintf(c.stderr, "no ask was waiting: the ANSWER block was pasted into worker pane %s\n", st.Worker)
		case "queued":
			fmt.Fprintf(c.stderr, "no ask was waiting and worker pane %s is busy: the ANSWER block is queued and reaches it when it is idle ('wcomm ask --wait %s' there takes it at once)\n", st.Worker, st.ID)
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
			if _, err := messages.ParseQuestionID(args[1]); err != nil {
				return usagef("%v", err)
			}
			st, err := c.engine().ResolveQuestion(c.ctx, args[1], *reason)
			if err != nil {
				return err
			}
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
			var sts []*tmuxcomm.QuestionStatus
			for _, id := range args {
				if _, err := messages.ParseQuestionID(id); err != nil {
					return usagef("%v (or 'questions resolve ID --reason TEXT')", err)
				}
				st, err := c.engine().Question(c.ctx, id)
				if err != nil {
					return err
				}
				sts = append(sts, st)
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
		list, problems, err := c.engine().Questions(c.ctx, tmuxcomm.QuestionsOptions{Pending: *pending})
		if err != nil {
			return err
		}
		if c.json {
			if list == nil {
				list = []*tmuxcomm.QuestionStatus{}
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
func printQuestion(w io.Writer, st *tmuxcomm.QuestionStatus, now time.Time) {
	q := st.Question
	q.ID = st.ID
	for _, line := range strings.Split(messages.FormatQuestionBlock(q), "\n") {
		fmt.Fprintln(w, messages.SanitizeField(line))
	}
	fmt.Fprintf(w, "STATE: %s (worker %s, request %s, asked %s ago)\n", st.State, st.Worker, orDash(st.Exchange), tmuxcomm.Age(now, st.AskedAt))
	switch {
	case st.Answer != nil:
		fmt.Fprintf(w, "ANSWER: %s (decided by %s, source %s)\n", messages.SanitizeField(st.Answer.Answer), st.Answer.DecidedBy, messages.SanitizeField(st.Answer.Source))
	case st.Reason != "":
		fmt.Fprintf(w, "REASON: %s\n", messages.SanitizeField(st.Reason))
	}
	if st.State == tmuxcomm.QuestionPending {
		fmt.Fprintln(w, messages.SanitizeField(messages.AnswerHint(q, "wcomm")))
	}
}

func printQuestions(w io.Writer, list []*tmuxcomm.QuestionStatus, problems []string, now time.Time) {
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
				tmuxcomm.Age(now, st.AskedAt), q)
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
