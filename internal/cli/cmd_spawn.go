package cli

// The lifecycle commands: spawn, stop and restart. Their work is the lifecycle room's
// (tmuxcomm/lifecycle), through the door; this face parses, calls and prints.

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/lifecycle"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// worktreeFlag is --worktree (a worktree named after the agent) or --worktree=BRANCH.
type worktreeFlag struct {
	on     bool
	branch string
}

func (w *worktreeFlag) String() string   { return w.branch }
func (w *worktreeFlag) IsBoolFlag() bool { return true }
func (w *worktreeFlag) Set(s string) error {
	w.on = true
	if s != "true" {
		w.branch = s
	}
	if s == "false" {
		w.on, w.branch = false, ""
	}
	return nil
}

func init() {
	register(&command{
		Name: "spawn", Args: "PROFILE | -- COMMAND [ARG...]  [--name NAME] [--prompt TEXT | --prompt-file F] [--worktree[=BRANCH]] [--dir D] [--split] [--session S] [--env K=V]", Role: "orchestrator",
		Summary: "start an agent in a new pane and return once it is ready for input",
		Help: `Starts an agent in a new tmux window (--split: a pane beside yours or --target's; --session S: in
that session) from a profile name (claude, codex, gemini, copilot, opencode, qwen, aider, or one of
the settings' agent_profiles with a launch command) or from a command after -- (run without a shell;
its agent is detected as 'wcomm find' does). It returns only once the agent is ready for input: its
own door open (Claude Code's socket, Codex's thread), else its input box empty and idle for the
profile's quiet time, or for a plain program, running with its screen quiet. --ready-timeout bounds
the wait (exit 3, saying what the screen showed); a spawn that fails removes its pane.

Prints the pane id alone on the first line (and the first prompt's exchange id on the second);
--json: pane, name, agent, folder, worktree, exchange. --prompt is the agent's first message, sent
as 'wcomm send' sends (an exchange: await it, see it in history), once, after readiness. --name
gives the pane a name unique on the tmux server, usable as a target anywhere (send --to NAME); a
name held by a pane is refused before anything starts. --worktree adds a git worktree for the agent
(branch named after it, or BRANCH) and starts it there. 'wcomm help lifecycle' says more.`,
		Example: "wcomm spawn claude --name alpha --prompt 'Fix the failing test in ./pkg'\nwcomm spawn --name beta --worktree --json -- codex\nwcomm spawn --name w1 -- python3 worker.py",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			name := fs.String("name", "", "the pane's name, unique on the tmux server")
			dir := fs.String("dir", "", "the folder to start in (default: this one)")
			var wt worktreeFlag
			fs.Var(&wt, "worktree", "start in a new git worktree named after the agent (--worktree=BRANCH: on that branch)")
			prompt := fs.String("prompt", "", "the agent's first message, sent once it is ready")
			promptFile := fs.String("prompt-file", "", "read the first message from this file")
			capability := fs.String("capability", string(tmuxcomm.DefaultCapability), "the first message's capability: READONLY or WRITABLE")
			var env listFlag
			fs.Var(&env, "env", "KEY=VALUE for the program's environment (repeated)")
			split := fs.Bool("split", false, "split your window (or --target's) instead of opening a window")
			target := fs.String("target", "", "with --split: the pane or window to split")
			session := fs.String("session", "", "open the window in this session")
			restart := fs.String("restart", "", "on-failure: restart the program in its pane whenever it ends with a failure (at most 3 times in 10 minutes)")
			agent := fs.String("agent", "", "treat the target as this profile ("+tmuxcomm.ProfileNames()+") instead of the detected one")
			var readyTimeout time.Duration
			durationVar(fs, &readyTimeout, "ready-timeout", lifecycle.DefaultReadyTimeout, "how long to wait for the agent to be ready")
			return func(args []string) error {
				o := tmuxcomm.SpawnOptions{SpawnOptions: lifecycle.SpawnOptions{Name: *name, Dir: *dir,
					Worktree: wt.on, Branch: wt.branch, Split: *split, Target: *target, Session: *session,
					Env: env, ReadyTimeout: readyTimeout, Restart: *restart, Agent: *agent}}
				// Words after "--" are the command; a word before it is a profile's name.
				after := 0
				if i := slices.Index(c.args, "--"); i >= 0 {
					after = len(c.args) - i - 1
				}
				before := args[:len(args)-after]
				o.Argv = args[len(args)-after:]
				switch {
				case len(before) > 1:
					return usagef("spawn takes one PROFILE, or a command after --: put the command's words after --")
				case len(before) == 1:
					o.Profile = before[0]
				}
				if *target != "" && !*split {
					return usagef("--target names the pane to split: add --split, or use --session for a new window")
				}
				if *prompt != "" && *promptFile != "" {
					return usagef("give the first message either with --prompt or --prompt-file, not both")
				}
				if *prompt != "" {
					o.Prompt = []byte(*prompt)
				} else if *promptFile != "" {
					data, err := store.ReadFileBounded(c.ctx, *promptFile, maxMessage)
					if err != nil {
						return fmt.Errorf("read --prompt-file: %w", err)
					}
					o.Prompt = data
				}
				capab, err := tmuxcomm.ParseCapability(*capability)
				if err != nil {
					return err
				}
				o.Capability = capab
				res, err := c.engine().Spawn(c.ctx, o)
				if res == nil {
					return err
				}
				if c.json {
					if jerr := c.printJSON(res); jerr != nil {
						return jerr
					}
				} else {
					fmt.Fprintln(c.stdout, res.Pane)
					if res.Exchange != "" {
						fmt.Fprintln(c.stdout, res.Exchange)
					}
				}
				if err == nil && !c.json {
					fmt.Fprintf(c.stderr, "wcomm spawn: %s ready (%s) after %s\n", res.Pane, res.Ready, res.ReadyAfter.Round(10*time.Millisecond))
				}
				return err
			}
		},
	})
	register(&command{
		Name: "__watch", Args: "--server KEY --pane %N", Role: "admin", Hidden: true,
		Summary: "watch a pane spawned with --restart on-failure and restart its program when it fails",
		Help:    "Started detached by spawn --restart on-failure; it ends when the pane is stopped, its program ends with status 0, or the restarts' bound is reached.",
		Example: "wcomm __watch --server 1234-1764000000 --pane %6",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			server := fs.String("server", "", "the tmux server's key (PID-STARTTIME)")
			pane := fs.String("pane", "", "the pane")
			return func(args []string) error {
				if *server == "" || *pane == "" || len(args) > 0 {
					return usagef("__watch needs --server KEY --pane %%N")
				}
				p, err := messages.ParsePaneID(*pane)
				if err != nil {
					return usagef("--pane: %v", err)
				}
				return c.engine().RunHelper(c.ctx, tmuxcomm.HelperJob{Kind: tmuxcomm.HelperWatcher, Server: *server, Pane: p})
			}
		},
	})
	register(&command{
		Name: "stop", Args: "TARGET [--remove-worktree [--force]]", Role: "orchestrator",
		Summary: "end the agent in a pane (its own quit first, then the pane) and free its name",
		Help: `Asks the agent to quit as its profile says (/exit for Claude Code; end of input, then Ctrl-C, for
a plain program), waits a few seconds, then removes the pane, which frees its name.
--remove-worktree also removes the worktree and branch its spawn made: refused, with nothing
stopped, while the worktree has uncommitted changes, unless --force, which prints what it threw away.`,
		Example: "wcomm stop alpha\nwcomm stop beta --remove-worktree",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			remove := fs.Bool("remove-worktree", false, "remove the pane's worktree and branch too")
			force := fs.Bool("force", false, "with --remove-worktree: throw away its uncommitted changes")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("stop takes one TARGET")
				}
				if *force && !*remove {
					return usagef("--force goes with --remove-worktree")
				}
				res, err := c.engine().Stop(c.ctx, tmuxcomm.StopOptions{Target: args[0], RemoveWorktree: *remove, Force: *force})
				if res == nil {
					return err
				}
				if c.json {
					if jerr := c.printJSON(res); jerr != nil {
						return jerr
					}
					return err
				}
				fmt.Fprintf(c.stdout, "stopped %s (%s)\n", res.Pane, res.Quit)
				if res.Worktree != "" {
					fmt.Fprintf(c.stdout, "removed worktree %s\n", res.Worktree)
				}
				if res.Discarded != "" {
					fmt.Fprintf(c.stdout, "threw away:\n%s\n", messages.SanitizeTerminal(res.Discarded))
				}
				if res.Note != "" {
					fmt.Fprintf(c.stderr, "wcomm stop: %s\n", res.Note)
				}
				return err
			}
		},
	})
	register(&command{
		Name: "restart", Args: "TARGET [--ready-timeout D]", Role: "orchestrator",
		Summary: "start a spawned agent again in the same pane, its conversation resumed where it can be",
		Help: `Starts the command 'wcomm spawn' recorded for the pane again in the same pane (whatever still
runs there is ended first), in the same folder, with the agent's conversation resumed where its
profile says how (Claude Code: --resume with the session id given at spawn; Codex: resume with its
thread), and returns once it is ready. At most 3 restarts in 10 minutes.`,
		Example: "wcomm restart alpha",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			var readyTimeout time.Duration
			durationVar(fs, &readyTimeout, "ready-timeout", lifecycle.DefaultReadyTimeout, "how long to wait for the agent to be ready")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("restart takes one TARGET")
				}
				res, err := c.engine().Restart(c.ctx, tmuxcomm.RestartOptions{Target: args[0], ReadyTimeout: readyTimeout})
				if res == nil || err != nil {
					return err
				}
				if c.json {
					return c.printJSON(res)
				}
				resumed := "started anew"
				if res.Resumed != "" {
					resumed = "resumed " + res.Resumed
				}
				fmt.Fprintf(c.stdout, "%s\n", res.Pane)
				fmt.Fprintf(c.stderr, "wcomm restart: %s ready (%s), %s\n", res.Pane, res.Ready, strings.TrimSpace(resumed))
				return nil
			}
		},
	})
}
