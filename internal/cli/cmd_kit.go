package cli

// The agent integration kit's commands (prompt, install-skill, install-mcp, completion and
// __complete): the flags and the printing; what they make and write is the kit's (internal/kit),
// which reads the command registry through book.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wcomm/wcomm/internal/kit"
	"github.com/wcomm/wcomm/tmuxcomm"
)

func init() {
	register(&command{
		Name: "prompt", Args: "orchestrator|worker [--agent claude|codex|gemini|generic]", Role: "admin",
		Summary: "print the instructions an agent needs for its role, to paste into its prompt",
		Help: `Prints concise instructions for an orchestrator (finds workers, sends, awaits, reads RESPONSE
lines, answers questions) or for a worker (reads a request, answers with notify, asks questions),
with the exit codes and what to do on each. The text is generated from this binary's own commands,
so it always matches them. --agent adds the notes that differ for that agent (how it runs a shell
command, its tool time limits).`,
		Example: "wcomm prompt orchestrator --agent claude\nwcomm prompt worker --agent codex | tmux load-buffer - && tmux paste-buffer -t %7",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			agent := fs.String("agent", "generic", "claude, codex, gemini or generic")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("prompt takes one role: orchestrator or worker")
				}
				text, err := book().Prompt(args[0], *agent)
				if err != nil {
					return err
				}
				if c.json {
					return c.printJSON(map[string]string{"role": args[0], "agent": *agent, "text": text})
				}
				_, err = io.WriteString(c.stdout, text)
				return err
			}
		},
	})
	register(&command{
		Name: "install-skill", Args: "[--dir DIR | --user] [--for claude,codex,gemini] [--bin PATH] [--force]", Role: "admin",
		Summary: "install the instructions as a Claude Code skill and an AGENTS.md / GEMINI.md block",
		Help: `Writes DIR/.claude/skills/wcomm/SKILL.md (Claude Code loads it when a task needs it) and a block
between <!-- wcomm:begin --> and <!-- wcomm:end --> in DIR/AGENTS.md (Codex) and DIR/GEMINI.md
(Gemini CLI reads GEMINI.md, not AGENTS.md, unless configured otherwise). The rest of those files is
kept. --user writes the per-user places instead: ~/.claude/skills/wcomm/SKILL.md,
~/.codex/AGENTS.md and ~/.gemini/GEMINI.md. Running it again changes nothing ("unchanged") unless
this wcomm writes different text ("updated"). Each file or block carries the hash of what wcomm
wrote: one edited since is kept (exit 0, with a note on stderr) unless --force. New files are 0644:
they are the project's, read by everyone who works in it.

It also installs the agents' own hooks (unless --no-hooks), each running 'wcomm hook --agent NAME';
everything else in those files is kept:
  Claude Code, .claude/settings.json:
    UserPromptSubmit, Stop   hand the model the messages waiting in its pane's outbox at a turn's
                             start or end, without typing into its pane (Stop also records the idle
                             notice of settings' notify_idle)
    PermissionRequest        relays a permission prompt (a command to run, a file to write) to you
                             through your channels, the console and 'wcomm answer', and hands your
                             answer back; it may wait 600 s (wcomm help questions)
  Codex, .codex/hooks.json:  UserPromptSubmit, Stop as above (Codex asks you to trust new hooks once)
  Gemini CLI, .gemini/settings.json: BeforeAgent, AfterAgent as UserPromptSubmit and Stop
With --user, the same files under your home folder. The hooks run "wcomm", found on the agent's
PATH, since a project's files are committed and read on other machines; --bin PATH names another
program (a warning on stderr says when "wcomm" is not on this PATH).`,
		Example: "wcomm install-skill\nwcomm install-skill --dir ~/src/project --for claude,codex\nwcomm install-skill --user --force",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			dir := fs.String("dir", "", "the project folder (default: the current folder)")
			user := fs.Bool("user", false, "install for your user instead of one project")
			forAgents := fs.String("for", "claude,codex,gemini", "which agents' files to write")
			force := fs.Bool("force", false, "overwrite files and blocks edited since wcomm wrote them")
			noHooks := fs.Bool("no-hooks", false, "do not install the agents' hooks")
			bin := fs.String("bin", "", `the program the hooks run (default: "wcomm", found on the agent's PATH)`)
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("install-skill takes no arguments")
				}
				if *user && *dir != "" {
					return usagef("give --dir or --user, not both")
				}
				if !*noHooks {
					c.warnBin("install-skill", *bin)
				}
				return c.installSkill(kit.SkillOptions{Dir: *dir, User: *user, For: *forAgents, Force: *force, NoHooks: *noHooks, Bin: *bin, Getenv: c.getenv})
			}
		},
	})
	register(&command{
		Name: "install-mcp", Args: "[--for claude,codex,gemini] [--user | --dir DIR] [--bin PATH] [--dry-run]", Role: "admin",
		Summary: "register 'wcomm mcp' as an MCP server with Claude Code, Codex and Gemini CLI",
		Help: `Adds a "wcomm" server that runs 'wcomm mcp' to each agent's configuration, in its own format:
Claude Code: DIR/.mcp.json (project scope; --user: ~/.claude.json), "mcpServers".
Codex: DIR/.codex/config.toml (read in trusted projects; --user: ~/.codex/config.toml, or
$CODEX_HOME/config.toml), a [mcp_servers.wcomm] table whose env_vars forward ` + forwardedEnv() + `,
and that allows 660 s per tool call (tool_timeout_sec).
Gemini CLI: DIR/.gemini/settings.json (--user: ~/.gemini/settings.json), "mcpServers", 660 s timeout.
Only wcomm's entry changes: other servers and settings, comments, key order and indentation stay;
keys you added to wcomm's entry stay too. Running it again changes nothing ("unchanged"). A file
that is not valid JSON or TOML is left untouched (exit 1). --dry-run prints what would be written.
The entries run "wcomm", found on the agent's PATH, since a project's files are committed and read on
other machines; --bin PATH names another program (a warning on stderr says when "wcomm" is not on
this PATH).`,
		Example: "wcomm install-mcp\nwcomm install-mcp --for codex --user\nwcomm install-mcp --dir ~/src/project --dry-run",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			// --for, as install-skill takes it: --agent means a delivery profile everywhere else.
			agent := fs.String("for", "all", "which agents' files to write (claude, codex, gemini, all)")
			dir := fs.String("dir", "", "the project folder (default: the current folder)")
			user := fs.Bool("user", false, "register for your user instead of one project")
			dryRun := fs.Bool("dry-run", false, "print what would change, write nothing")
			bin := fs.String("bin", "", `the program the agents run (default: "wcomm", found on the agent's PATH)`)
			return func(args []string) error {
				if len(args) > 0 {
					return usagef("install-mcp takes no arguments")
				}
				if *user && *dir != "" {
					return usagef("give --dir or --user, not both")
				}
				c.warnBin("install-mcp", *bin)
				targets, err := kit.MCPTargets(kit.MCPOptions{For: *agent, Dir: *dir, User: *user, Bin: *bin, Getenv: c.getenv})
				if err != nil {
					return err
				}
				return c.installMCP(targets, *dryRun)
			}
		},
	})
	register(&command{
		Name: "completion", Args: "bash|zsh|fish", Role: "admin",
		Summary: "print a shell completion script (commands, flags, live pane ids and agent names)",
		Help: `Prints a completion script for bash, zsh or fish. Command names and flags are built in; pane ids
(--to, --from) and agent names (find, send --to) come from the live tmux server when you press Tab,
through the hidden 'wcomm __complete'.
  bash: add  source <(wcomm completion bash)  to ~/.bashrc
  zsh:  add  source <(wcomm completion zsh)   to ~/.zshrc (after compinit)
  fish: wcomm completion fish > ~/.config/fish/completions/wcomm.fish`,
		Example: "source <(wcomm completion bash)\nwcomm completion fish > ~/.config/fish/completions/wcomm.fish",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("completion takes one shell: bash, zsh or fish")
				}
				script, err := book().CompletionScript(args[0])
				if err != nil {
					return err
				}
				_, err = io.WriteString(c.stdout, script)
				return err
			}
		},
	})
	register(&command{
		Name: "__complete", Args: "[--describe] KIND [PREFIX]", Role: "admin", Hidden: true,
		Summary: "print completion candidates of one kind, one per line (used by the completion scripts)",
		Help: `KIND is one of: ` + strings.Join(kit.CompleteKinds, ", ") + `. Candidates start with PREFIX.
--describe adds a tab and a short description to each line. Prints nothing, and exits 0, when the
tmux server or the root cannot be read: a completion must never print errors into a command line.`,
		Example: "wcomm __complete panes %\nwcomm __complete --describe agents co",
		Setup: func(fs *flag.FlagSet, c *cli) func([]string) error {
			describe := fs.Bool("describe", false, "add a tab and a description to each candidate")
			return func(args []string) error {
				if len(args) < 1 || len(args) > 2 {
					return usagef("__complete takes KIND [PREFIX]")
				}
				prefix := ""
				if len(args) == 2 {
					prefix = args[1]
				}
				ctx, cancel := context.WithTimeout(c.ctx, 3*time.Second)
				defer cancel()
				cands, err := book().Complete(ctx, c.engine, args[0])
				if err != nil {
					var ue *tmuxcomm.UsageError
					if errors.As(err, &ue) {
						return err
					}
					return nil
				}
				for _, cand := range cands {
					if !strings.HasPrefix(cand.Value, prefix) {
						continue
					}
					if *describe && cand.Desc != "" {
						fmt.Fprintf(c.stdout, "%s\t%s\n", cand.Value, cand.Desc)
					} else {
						fmt.Fprintln(c.stdout, cand.Value)
					}
				}
				return nil
			}
		},
	})
}

// commandFlags builds cmd's flag set as runCommand does, without running it: for help and
// completion. Setup only declares flags; the function it returns is dropped.
func commandFlags(cmd *command) *flag.FlagSet {
	c := &cli{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	fs := flag.NewFlagSet("wcomm "+cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.globalFlags(fs)
	fs.Bool("help", false, "show this help")
	fs.Bool("h", false, "show this help")
	c.outputFlags(fs, cmd.Name)
	cmd.Setup(fs, c)
	return fs
}

// book is the command registry as the kit reads it: the visible commands, by name.
func book() kit.Book {
	v, _ := buildVersion()
	b := kit.Book{Topics: reference.Names(), ExitCodes: exitCodesText, Version: v}
	for _, n := range commandNames() {
		cmd := commands[n]
		b.Commands = append(b.Commands, kit.Command{Name: n, Summary: cmd.Summary, Example: cmd.Example, Role: cmd.Role,
			Flags: func() *flag.FlagSet { return commandFlags(cmd) }})
	}
	return b
}

// installSkill runs install-skill and prints what it did to each file.
func (c *cli) installSkill(o kit.SkillOptions) error {
	files, hooks, err := book().InstallSkill(o)
	if err != nil {
		return err
	}
	if err := c.printInstalled(append(files, hooks...), false); err != nil {
		return err
	}
	if n := countKept(files); n > 0 {
		// Keeping someone's edit is the intended outcome, not a failure: say so and exit 0.
		fmt.Fprintf(c.stderr, "wcomm install-skill: %d file(s) edited since wcomm wrote them were kept; compare them with 'wcomm prompt', then run again with --force to overwrite\n", n)
	}
	if n := countKept(hooks); n > 0 {
		// A settings file wcomm cannot read: its hooks are not installed.
		return &exitErr{code: exitFailure, err: fmt.Errorf("%d settings file(s) could not be read, so their hooks are not installed; fix them and run again", n)}
	}
	return nil
}

// warnBin says on stderr when the agents may not find the program their entries run.
func (c *cli) warnBin(name, bin string) {
	if w := kit.BinWarning(bin); w != "" {
		fmt.Fprintf(c.stderr, "wcomm %s: warning: %s\n", name, w)
	}
}

func countKept(results []kit.Result) int {
	n := 0
	for _, r := range results {
		if r.Status == kit.Kept {
			n++
		}
	}
	return n
}

// installMCP runs install-mcp over targets and prints what it did (or, dry, would do).
func (c *cli) installMCP(targets []kit.MCPTarget, dryRun bool) error {
	if c.comp.MCP == nil {
		if _, err := findProgram(mcpProgram, "the MCP server"); err != nil {
			// The entries are still written: they are right once wcomm-mcp is installed.
			fmt.Fprintf(c.stderr, "wcomm install-mcp: warning: 'wcomm mcp' will fail until then: %v\n", err)
		}
	}
	results, err := kit.InstallMCP(targets, dryRun)
	for _, r := range results {
		if r.Preview != nil && !c.json {
			fmt.Fprintf(c.stdout, "--- %s would become:\n%s", r.Path, r.Preview)
		}
	}
	if err != nil {
		return err
	}
	return c.printInstalled(results, true)
}

// printInstalled prints install results: as JSON, or a line each, with the agent when withAgent.
func (c *cli) printInstalled(results []kit.Result, withAgent bool) error {
	if c.json {
		return c.printJSON(results)
	}
	for _, r := range results {
		fmt.Fprintf(c.stdout, "%-9s %s", r.Status, r.Path)
		if withAgent {
			fmt.Fprintf(c.stdout, " (%s)", r.Agent)
		}
		if r.Note != "" {
			fmt.Fprintf(c.stdout, " (%s)", r.Note)
		}
		fmt.Fprintln(c.stdout)
	}
	return nil
}

// forwardedEnv names the variables install-mcp writes into Codex's env_vars, from the list it
// writes: "$TMUX, $TMUX_PANE and $WCOMM_ROOT".
func forwardedEnv() string {
	names := kit.MCPForwardEnv()
	for i, n := range names {
		names[i] = "$" + n
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
