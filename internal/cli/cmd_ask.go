package cli

// The ask command: a worker's questions from flags or an envelope, asked, waited for and
// printed; every error ends with the instruction to go on on best judgment.

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// judged ends an ask's error with the instruction to continue on best judgment.
var judged = tmuxcomm.Judged

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
		// What the flags leave unset the door takes from the settings.
		var given tmuxcomm.Asking
		if set["timeout"] {
			given.Timeout = &timeout
		}
		if set["auto-answer"] {
			given.AutoAnswer = auto
		}
		if _, err := c.settings(); err != nil {
			return judged(err)
		}
		e := c.engine()
		given.Choices = dv.choices()

		if len(waits) > 0 {
			for _, n := range []string{"task", "option", "context", "type", "pattern", "envelope", "exchange", "to", "bind-git", "urgency", "action", "target"} {
				if set[n] {
					return judged(usagef("--wait picks up questions asked before; it takes no --%s", n))
				}
			}
			if len(args) > 0 {
				return judged(usagef("--wait takes no question text"))
			}
			// The wait is bounded as a blocking ask is, from now: a question asked
			// non-blocking never expires by its age.
			res, _, err := e.Ask(c.ctx, tmuxcomm.Asking{Choices: given.Choices, Again: &tmuxcomm.Waiting{IDs: waits, Timeout: given.Timeout, AutoAnswer: given.AutoAnswer, Afresh: true}})
			return c.askOutput(res, err)
		}

		// Without a task the request the question is about names it (the door's rule).
		taskID := func() (string, error) {
			t, err := e.Task(c.ctx, *task, *exchange, given.Choices)
			*task = t
			return t, err
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
			given.Action = &actions.IntentOptions{Action: *action, Targets: targets, RunID: c.getenv("WCOMM_RUN_ID")}
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
		given.Questions, given.Exchange, given.To, given.Wait = qs, *exchange, *to, u == messages.Blocking
		given.BindGit, given.Dir = *bindGit, *dir
		res, off, err := e.Ask(c.ctx, given)
		if off != nil {
			fmt.Fprintln(c.stderr, "wcomm ask: the question relay is off (question_relay.enabled: false); nothing was asked")
			if c.json {
				return c.printJSON(map[string]any{"questions": []any{}, "relay_enabled": false})
			}
			for i, a := range off {
				if i > 0 {
					fmt.Fprintln(c.stdout)
				}
				fmt.Fprintln(c.stdout, messages.FormatAnswerBlock(a))
			}
			return nil
		}
		if given.Action != nil && res != nil && len(res.Questions) == 1 {
			if b := res.Questions[0].AnswerBlock(); b != nil && b.Text == "yes" && res.Questions[0].State == questions.QuestionAnswered {
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
		data, err = store.ReadBounded(c.ctx, c.stdin, maxEnvelope, "the envelope on stdin")
	} else {
		data, err = store.ReadFileBounded(c.ctx, file, maxEnvelope)
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
func (c *cli) askOutput(res *questions.AskResult, err error) error {
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
			if note := st.AutoNote(); note != "" {
				fmt.Fprintf(c.stderr, "wcomm ask: %s\n", note)
			}
		}
	}
	if err == nil {
		var pending []string
		for _, st := range res.Questions {
			if st.State == questions.QuestionPending {
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
