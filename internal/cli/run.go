// Package cli is the wcomm command line: flags, output (text and --json) and exit codes, over the
// protocol engine's front door (tmuxcomm.Door: settings, error classes, typed results). It lives
// outside cmd/wcomm so that the four programs share it: wcomm itself, and its companions wcomm-mcp,
// wcomm-bridge and wcomm-ui, the same commands plus one part each (companions.go says why).
//
// Files: run.go (the command registry, flag parsing, exit codes), cli.go (one invocation: global
// flags, the door, reading a message), companions.go (the companion programs), hints.go (this
// face's words for what a call lacks), output.go (sanitised printing), flags_delivery.go (the
// delivery flags), cmd_*.go (the commands: panes and find, send/await/notify, parse/history/show,
// ask, answer and questions, actions, the mailbox, watch, doctor, mcp, remote hosts, version, and
// the agent kit's, whose work is internal/kit's). Detached helpers start through internal/launch.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/wcomm/wcomm/internal/kit"
	"github.com/wcomm/wcomm/internal/safeout"
	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm"
)

// Exit codes are part of the interface: scripts and agents branch on them. They are the engine's
// error classes (tmuxcomm.Class), which the MCP server reports too.
const (
	exitOK       = int(tmuxcomm.ClassOK)
	exitFailure  = int(tmuxcomm.ClassFailure)
	exitUsage    = int(tmuxcomm.ClassUsage)
	exitTimeout  = int(tmuxcomm.ClassTimeout)
	exitNotFound = int(tmuxcomm.ClassNotFound)
)

// command is one subcommand. Its texts feed --help, `wcomm help` and `wcomm prompt`, so the
// instructions an agent reads never drift from the binary.
type command struct {
	Name    string
	Args    string // synopsis after the name, e.g. "[--all] AGENT"
	Summary string // one line
	Help    string // a paragraph or two
	Example string // one or more example lines
	Role    string // "orchestrator", "worker", "both", "admin": who uses it (for prompts)
	// Setup declares the command's flags on fs and returns the function that runs it.
	Setup func(fs *flag.FlagSet, c *cli) func(args []string) error
	// Hidden commands are not listed.
	Hidden bool
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// commandNames returns the visible commands in a stable order.
func commandNames() []string {
	var names []string
	for n, c := range commands {
		if !c.Hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// usagef is a mistake in the call's words: exit 2 (the engine's front door holds the classes).
var usagef = tmuxcomm.Usagef

// Run runs one command line in a process that goes on after it (a test runs many): it parses
// args, runs one command and returns its exit code, with the parts of the companion programs that
// main links (none for wcomm), and then stops its watch of the process's signals. It prints the
// error once, on stderr.
func Run(comp Companions, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, end := runWatched(comp, args, stdin, stdout, stderr)
	end()
	return code
}

// Main is Run for a main function, which exits with the code at once: the watch of the signals
// and its goroutine are left for the exit to end. Stopping them woke the goroutine and the
// runtime's signal thread on the way out, and often made a thread to run them: 0.2 ms of the exit
// of a command handed to the resident, which a `send --wait` pays on its round trip's path
// (measured from the kernel's scheduler events, about 1,500 trips).
func Main(comp Companions, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, _ := runWatched(comp, args, stdin, stdout, stderr)
	return code
}

// runWatched runs one command line with Ctrl-C and SIGTERM cancelling its context; end stops
// that watch.
func runWatched(comp Companions, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, end func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	watched := make(chan struct{})
	// The watch is set up beside the parsing of the command line, not before it: the first
	// signal.Notify of a process hands the runtime's signal mask to a thread of its own, and
	// makes a thread to go on with, about 0.2 ms (measured) that a command handed to the
	// resident would otherwise pay before it connects. A command run here waits for it before its
	// work begins, one handed to the resident before it waits for anything (watching, hand), so
	// an interrupt that finds a command waiting always finds it watched.
	go func() {
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		close(watched)
		select {
		case sig := <-sigs:
			cancel(stopped{sig.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	c := &cli{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, comp: comp, res: &residentState{}, watched: watched}
	code = c.run(args)
	// A command stopped by Ctrl-C or SIGTERM exits 128+N, as a shell reports a program the signal
	// ended: a script tells an interrupted await from a failed one.
	if s := (stopped{}); code != exitOK && errors.As(context.Cause(ctx), &s) {
		code = 128 + int(s.sig)
	}
	return code, func() {
		<-watched // a Stop before the Notify would leave the watch in place
		signal.Stop(sigs)
		cancel(nil)
	}
}

// run runs one command line (after the program's name) and returns its exit code, printing its
// error once on c's stderr: Run's, and the resident's for a command a caller handed to it.
func (c *cli) run(args []string) int {
	stdout, stderr := c.stdout, c.stderr
	global, args, err := leadingGlobals(args)
	if err != nil {
		fmt.Fprintf(stderr, "wcomm: %v\n", err)
		return exitUsage
	}
	if len(args) == 0 {
		c.printUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		c.printUsage(stdout)
		return exitOK
	case "--version", "-version":
		name = "version"
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "wcomm: unknown command %q; %s\n", messages.SanitizeField(name), didYouMean(name, commandNames()))
		return exitUsage
	}
	err = tmuxcomm.Hinted(tmuxcomm.Named(c.runCommand(cmd, append(global, args[1:]...)), argNames), needHints)
	code := exitCode(err)
	if err != nil && !errors.Is(err, errSilent) {
		// An error can quote what another process wrote (tmux's stderr, a damaged file's line).
		fmt.Fprintf(safeout.Term{W: stderr}, "wcomm %s: %v\n", cmd.Name, err)
		if code == exitUsage {
			fmt.Fprintf(stderr, "usage: wcomm %s %s (wcomm %s --help)\n", cmd.Name, cmd.Args, cmd.Name)
		}
	}
	return code
}

// watching waits until the signals are watched (runWatched): before a command's work begins, and
// before a handed command waits for its stdin or for the resident (hand).
func (c *cli) watching() {
	if c.watched != nil {
		<-c.watched
	}
}

// stopped is the cause of a run's context that a signal ended.
type stopped struct{ sig syscall.Signal }

func (s stopped) Error() string { return "stopped by " + s.sig.String() }

// leadingGlobals takes the global flags standing before the command (`wcomm -L work send ...`, as
// tmux takes its own) and returns them apart, to be parsed with the command's flags.
func leadingGlobals(args []string) (global, rest []string, err error) {
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !isGlobalFlag(name) || name == "help" {
			break
		}
		if name == "json" || hasValue {
			global, args = append(global, a), args[1:]
			continue
		}
		if len(args) < 2 {
			return nil, nil, fmt.Errorf("flag %s needs a value; usage: wcomm [-L NAME | -S PATH] [--root DIR] [--json] COMMAND [ARGS]", a)
		}
		global, args = append(global, a, args[1]), args[2:]
	}
	return global, args, nil
}

// errSilent carries an exit code whose message was already printed.
var errSilent = errors.New("")

type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func (c *cli) runCommand(cmd *command, args []string) error {
	if handed, err := c.handScanned(cmd, args); handed {
		return err
	}
	c.command, c.args = cmd.Name, args
	fs, runFn, help := c.flagSet(cmd)
	pos, err := parseInterleaved(fs, args)
	stdout, stderr := c.stdout, c.stderr
	c.guardOutput(cmd.Name)
	if *help {
		c.printCommandHelp(c.stdout, cmd, fs)
		return nil
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printCommandHelp(c.stdout, cmd, fs)
			return nil
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			// The flag package's words name the flag with one dash whatever was typed.
			name = strings.TrimLeft(name, "-")
			return usagef("unknown flag %s; %s", flagSpelling(messages.SanitizeField(name)), didYouMeanFlag(name, cmd.Name, fs))
		}
		return usagef("%v", err)
	}
	if handed, err := c.hand(handingOf(fs, pos), stdout, stderr); handed {
		return err
	}
	c.watching()
	if c.call != nil {
		c.absolute(fs)
	}
	if readsSettings(cmd) {
		// One rule for every command that works with exchanges: a settings file with a misspelt
		// key is an error, never a warning that silently drops the rest of the file.
		if _, err := c.settings(); err != nil {
			return err
		}
	}
	if err := runFn(pos); err != nil {
		return err
	}
	c.residentAfterSuccess()
	return nil
}

// flagSet makes cmd's flag set on c: the global flags, help, the output flags and the command's
// own, whose Setup returns what runs the command.
func (c *cli) flagSet(cmd *command) (fs *flag.FlagSet, runFn func([]string) error, help *bool) {
	fs = flag.NewFlagSet("wcomm "+cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.globalFlags(fs)
	help = fs.Bool("help", false, "show this help")
	fs.BoolVar(help, "h", false, "show this help")
	c.outputFlags(fs, cmd.Name)
	return fs, cmd.Setup(fs, c), help
}

// readsSettings reports whether cmd works with exchanges or questions, and so must refuse a broken
// settings file before it acts. Admin commands (doctor reports the file, help and completion need
// none) and the background ones (the deliverer, agents' hooks) are spared; ask checks the file
// itself, so that its error ends with the instruction to go on.
func readsSettings(cmd *command) bool {
	return !cmd.Hidden && cmd.Role != "admin" && cmd.Name != "ask"
}

// parseInterleaved lets flags stand before or after positional arguments (`wcomm await ID
// --timeout 30s`), as agents write them. "--" ends the flags; "-" is a positional (stdin).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return append(pos, args[1:]...), nil
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			args = args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		args = rest
	}
	return pos, nil
}

// exitCode is err's exit code: one the command set itself, else its class (tmuxcomm.ClassOf).
func exitCode(err error) int {
	var ee *exitErr
	if errors.As(err, &ee) {
		return ee.code
	}
	return tmuxcomm.ClassOf(err).ExitCode()
}

func (c *cli) printUsage(w io.Writer) {
	fmt.Fprintln(w, "wcomm: requests, responses and questions between agents in tmux panes")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: wcomm [global flags] COMMAND [flags] [args]   (flags may stand before or after args)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-14s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "global flags: -L NAME | -S PATH (tmux server), --root DIR (default /tmp/worker-comm, env WCOMM_ROOT), --json")
	fmt.Fprintln(w)
	printTopics(w)
	fmt.Fprintln(w)
	fmt.Fprint(w, exitCodesText)
	fmt.Fprintln(w, "\nrun 'wcomm COMMAND --help' for a command's flags and an example, 'wcomm help TOPIC' for a topic")
}

// exitCodesText is printed by --help and `wcomm help exit-codes`.
const exitCodesText = `exit codes:
  0  success
  1  failure (the message says what happened and what to do)
  2  usage: the call's words are wrong
  3  timed out (await, ask, send --wait)
  4  target not found or ambiguous (no such pane, exchange or question; several panes match)
`

func (c *cli) printCommandHelp(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: wcomm %s %s\n\n%s\n", cmd.Name, cmd.Args, cmd.Summary)
	if cmd.Help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(cmd.Help))
	}
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "h" || isGlobalFlag(f.Name) {
			return
		}
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  %s%-16s %s%s\n", dash, f.Name, f.Usage, def)
	})
	fmt.Fprintln(w, "  global: -L NAME, -S PATH, --root DIR, --json")
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nexample:\n%s\n", kit.Indent(strings.TrimSpace(cmd.Example), "  "))
	}
	fmt.Fprintf(w, "\n%s", exitCodesText)
}
