package cli

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm"
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
		res, err := c.engine().Actions(c.ctx, tmuxcomm.ActionsOptions{Trust: file})
		if err != nil {
			return err
		}
		path, sum := res.Trusted, res.Sum
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
		opts := tmuxcomm.ActionsOptions{RunOptions: actions.RunOptions{ActionsOptions: actions.ActionsOptions{ID: *id}, DryRun: *dry, Timeout: timeout}}
		if len(args) > 0 && args[0] == "run" {
			if len(args) > 1 {
				return usagef("actions run takes no arguments; name one intent with --id ID")
			}
			opts.Run = true
			res, err := e.Actions(c.ctx, opts)
			if res == nil || res.Runs == nil && err != nil {
				return err
			}
			runs := res.Runs
			if c.json {
				if runs == nil {
					runs = []*actions.ActionRun{}
				}
				if perr := c.printJSON(map[string]any{"dry_run": *dry, "actions": runs}); perr != nil {
					return perr
				}
			} else {
				actions.WriteRuns(c.stdout, runs, *dry)
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
		res, err := e.Actions(c.ctx, opts)
		if err != nil {
			return err
		}
		list, problems := res.List, res.Problems
		if c.json {
			if list == nil {
				list = []*actions.ActionStatus{}
			}
			if problems == nil {
				problems = []string{}
			}
			return c.printJSON(map[string]any{"actions": list, "problems": problems})
		}
		actions.WriteList(c.stdout, list, problems)
		return nil
	}
}

func set(fs *flag.FlagSet, name string) bool { return flagsSet(fs)[name] }

// actionsNote is actions.Summary of every intent under the root; "" when none needs anyone or
// they cannot be read (the listing that asked is not about them).
func (c *cli) actionsNote() string {
	res, err := c.engine().Actions(c.ctx, tmuxcomm.ActionsOptions{})
	if err != nil {
		return ""
	}
	return actions.Summary(res.List)
}
