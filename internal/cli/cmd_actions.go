package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/actions"
	"github.com/wcomm/wcomm/tmuxcomm/settings"
)

// Approved actions' commands: actions (list), actions run (the dispatcher) and trust (a
// project's settings file). Asking for an approval is ask --action.

func init() {
	register(&command{
		Name: "actions", Role: "orchestrator",
		Args:    "[--json] | run [--dry-run] [--id ID]",
		Summary: "list approved-action intents with their status; run the approved ones that still hold",
		Help: `An approval authorizes intent; the dispatcher executes. 'wcomm ask --action NAME' asks a yes-no
question bound to a fingerprint of the state: the action's definition, its targets' content, HEAD and
'git status' of its folder. 'wcomm actions' lists every intent: pending, approved, stale, blocked,
denied, running, interrupted, executed or failed, its advisory age (48h or older is pointed out;
age alone never makes an approval stale) and, for stale, blocked and denied ones, the reasons.
'wcomm actions run' executes each approved intent whose fingerprint is unchanged, exactly once
(a claim makes two dispatchers at once run it once), and records exit code, times and output
beside the intent; a stale one is blocked with its reasons and never runs. --dry-run prints what it
would do and changes nothing. --id runs one intent: exit 1 when it was not run now (blocked, denied,
pending, already run). An interrupted intent (its dispatcher died before recording a result) is never
run again.`,
		Example: "wcomm actions\nwcomm actions run --dry-run\nwcomm actions run --id task-3.q1-a1b2",
		Setup:   setupActions,
	})
	register(&command{
		Name: "trust", Role: "admin",
		Args:    "[FILE]",
		Summary: "trust a project's settings file as it is now, so its on_question and actions apply",
		Help: `A project's .wcomm.yaml comes with the repository you cloned, so the commands it names
(on_question, actions) apply only once you have trusted its exact content; until then wcomm says
what it ignored. trust checks that FILE (default ./.wcomm.yaml) loads, and keeps its path and sha256
in trusted.json in your config folder ($XDG_CONFIG_HOME/wcomm or ~/.config/wcomm). Any change to the
file needs a new trust. Your own config.yaml there is trusted as it is. Only the person may trust:
run from an agent's tool call, or from a process without a terminal of its own, trust is refused.`,
		Example: "wcomm trust\nwcomm trust ~/src/project/.wcomm.yaml",
		Setup:   setupTrust,
	})
}

func setupTrust(fs *flag.FlagSet, c *cli) func([]string) error {
	return func(args []string) error {
		if len(args) > 1 {
			return usagef("trust takes at most one FILE")
		}
		file := settings.ConfigFileName
		if len(args) == 1 {
			file = args[0]
		}
		// Trust lets a file's commands run: an agent must not grant it to a file it wrote.
		if err := c.engine().RequirePerson(c.ctx, "trust a settings file"); err != nil {
			return err
		}
		path, sum, err := settings.TrustConfig(file, c.getenv, time.Now())
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(map[string]string{"path": path, "sha256": sum, "trust_list": settings.TrustListPath(c.getenv)})
		}
		fmt.Fprintf(c.stdout, "trusted %s (sha256 %s)\n", path, sum[:16])
		return nil
	}
}

func setupActions(fs *flag.FlagSet, c *cli) func([]string) error {
	dry := fs.Bool("dry-run", false, "with run: print what would run or be blocked, change nothing")
	id := fs.String("id", "", "with run: only this intent (its question's id)")
	var timeout time.Duration
	durationVar(fs, &timeout, "timeout", 0, "with run: bound of one action's run (default 30m)")
	return func(args []string) error {
		s, err := c.settings()
		if err != nil {
			return err
		}
		c.warnIgnored(s)
		e := c.engine()
		opts := actions.ActionsOptions{Getenv: c.getenv, ID: *id}
		if *id != "" {
			if opts.ID, err = e.QuestionID(*id); err != nil {
				return err
			}
		}
		if len(args) > 0 && args[0] == "run" {
			if len(args) > 1 {
				return usagef("actions run takes no arguments; name one intent with --id ID")
			}
			runs, err := e.RunActions(c.ctx, actions.RunOptions{ActionsOptions: opts, DryRun: *dry, Timeout: timeout})
			if runs == nil && err != nil {
				return err
			}
			if c.json {
				if runs == nil {
					runs = []*actions.ActionRun{}
				}
				if perr := c.printJSON(map[string]any{"dry_run": *dry, "actions": runs}); perr != nil {
					return perr
				}
			} else {
				printActionRuns(c.stdout, runs, *dry)
			}
			if errors.Is(err, actions.ErrNotRun) {
				return &exitErr{code: exitFailure, err: err}
			}
			return err
		}
		if len(args) > 0 {
			return usagef("actions takes no arguments except 'run'")
		}
		if *dry || set(fs, "timeout") {
			return usagef("--dry-run and --timeout go with 'actions run'")
		}
		list, problems, err := e.Actions(c.ctx, opts)
		if err != nil {
			return err
		}
		if c.json {
			if list == nil {
				list = []*actions.ActionStatus{}
			}
			if problems == nil {
				problems = []string{}
			}
			return c.printJSON(map[string]any{"actions": list, "problems": problems})
		}
		printActions(c.stdout, list, problems)
		return nil
	}
}

func set(fs *flag.FlagSet, name string) bool { return flagsSet(fs)[name] }

func printActions(w io.Writer, list []*actions.ActionStatus, problems []string) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no approved-action intents")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tACTION\tSTATUS\tAGE\tSOURCE\tTARGETS")
		for _, a := range list {
			age := a.Age.Round(time.Second).String()
			if a.Old {
				age += " (advisory: over 48h)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Action, a.Status, age, orDash(answerSource(a)), orDash(targetList(a)))
		}
		tw.Flush()
		for _, a := range list {
			for _, r := range a.Reasons {
				fmt.Fprintf(w, "  %s: %s: %s\n", a.ID, a.Status, messages.SanitizeField(r))
			}
		}
	}
	for _, p := range problems {
		fmt.Fprintf(w, "! %s\n", messages.SanitizeField(p))
	}
}

func printActionRuns(w io.Writer, runs []*actions.ActionRun, dry bool) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no approved-action intents")
		return
	}
	for _, r := range runs {
		if dry {
			stale := "no"
			if r.Stale {
				stale = "yes"
			}
			would := "nothing"
			switch r.Status {
			case actions.ActionApproved:
				would = "run"
			case actions.ActionStale:
				would = "block"
			}
			fmt.Fprintf(w, "%s: action %s (%s), question %s, targets %s, approval %s, status %s, stale %s, would %s\n",
				r.ID, r.Action, messages.SanitizeField(strings.Join(r.Definition.Run, " ")), r.QuestionID, orDash(targetList(r.ActionStatus)),
				orDash(answerSource(r.ActionStatus)), r.Status, stale, would)
			for _, reason := range r.Reasons {
				fmt.Fprintf(w, "  reason: %s\n", messages.SanitizeField(reason))
			}
			continue
		}
		switch r.Did {
		case actions.DidRun:
			fmt.Fprintf(w, "%s: %s %s (exit %d), output %s\n", r.ID, r.Action, r.Status, r.Result.ExitCode, r.Output)
		case actions.DidBlock:
			fmt.Fprintf(w, "%s: %s blocked\n", r.ID, r.Action)
			for _, reason := range r.Reasons {
				fmt.Fprintf(w, "  reason: %s\n", messages.SanitizeField(reason))
			}
		default:
			fmt.Fprintf(w, "%s: %s %s: nothing done (%s)\n", r.ID, r.Action, r.Status, messages.SanitizeField(r.Note))
		}
	}
}

// answerSource says who approved or denied, and when.
func answerSource(a *actions.ActionStatus) string {
	if a.Answer == nil {
		return ""
	}
	return fmt.Sprintf("%s by %s at %s", a.Answer.Answer, messages.SanitizeField(a.Answer.Source), a.Answer.At.Local().Format(time.RFC3339))
}

func targetList(a *actions.ActionStatus) string {
	var out []string
	for _, t := range a.Targets {
		out = append(out, messages.SanitizeField(t.Path))
	}
	return strings.Join(out, ",")
}

// actionsNote is actionsSummary of every intent under the root; "" when none needs anyone or
// they cannot be read (the listing that asked is not about them).
func (c *cli) actionsNote() string {
	list, _, err := c.engine().Actions(c.ctx, actions.ActionsOptions{Getenv: c.getenv})
	if err != nil {
		return ""
	}
	return actionsSummary(list)
}

// actionsSummary is one line on intents that need a person or a dispatcher: approved and not
// run, blocked, or interrupted; "" when none does.
func actionsSummary(list []*actions.ActionStatus) string {
	n := map[string]int{}
	for _, a := range list {
		n[a.Status]++
	}
	var parts []string
	if k := n[actions.ActionApproved]; k > 0 {
		parts = append(parts, fmt.Sprintf("%d approved and not yet run ('wcomm actions run')", k))
	}
	if k := n[actions.ActionStale] + n[actions.ActionBlocked]; k > 0 {
		parts = append(parts, fmt.Sprintf("%d stale or blocked", k))
	}
	if k := n[actions.ActionInterrupted]; k > 0 {
		parts = append(parts, fmt.Sprintf("%d interrupted", k))
	}
	if len(parts) == 0 {
		return ""
	}
	return "approved actions: " + strings.Join(parts, ", ") + "; see 'wcomm actions'"
}
