package paneops

// Detection: which profile a pane runs, chosen from its foreground process group, its terminal's
// mode and the profiles' process patterns.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// TTYModeFunc reads whether a terminal is in canonical mode (nil error) or says why it cannot.
type TTYModeFunc func(tty string) (canonical bool, err error)

// Detect chooses the profile of a pane from its foreground process group (the pane's pid's tpgid in
// /proc): an interactive shell or REPL there wins, because Enter makes it RUN the line; else the
// shallowest process of that group (or below it) that an agent profile names; else "reader" when
// the terminal is in canonical mode; else "generic". Without a process table it falls back on
// #{pane_current_command}, which is the foreground leader's name. ttyMode may be nil.
func Detect(s *profile.Set, p Pane, t *proc.Table, ttyMode TTYModeFunc, ex Exclude) profile.Detection {
	var fg *proc.Process
	var candidates []proc.Process
	if t != nil && p.PID > 0 {
		if leader, group, ok := t.Foreground(p.PID); ok {
			fg = &leader
			candidates = group
		} else if root, ok := t.Proc(p.PID); ok {
			if sh := s.First(profile.KindShell); sh != nil && root.TPGID > 0 && matches(sh, root) {
				// The terminal names a foreground group that has no process left: the shell's job
				// has just ended, and the shell has not yet taken the terminal back nor set it
				// raw for its prompt. The terminal is still cooked as the job left it, so the
				// reader rule below would take the shell for a line reader, and a line typed now
				// would reach the shell's prompt and run. It is the shell's next read: its profile,
				// and "not ready" for a delivery that can wait a moment.
				det := found(profile.Detection{}, sh, fmt.Sprintf("%s (pid %d) is an interactive %s whose foreground job has just ended: Enter would run the line",
					progName(root), root.PID, sh.Name))
				det.Job = fmt.Sprintf("%s (pid %d) is taking its terminal back from a job that has just ended", progName(root), root.PID)
				return det
			}
			// No foreground group known (go-ps has no tpgid): the whole tree, shallowest first.
			candidates = append([]proc.Process{root}, t.Descendants(p.PID)...)
		}
	}
	det := profile.Detection{Foreground: fg}
	skip := make(map[int]bool, len(ex.PIDs))
	for _, pid := range ex.PIDs {
		skip[pid] = true
	}
	// The foreground leader decides first: a shell at its prompt means the agent, if any, is not
	// the one reading the keyboard now.
	if fg != nil {
		if sh := s.First(profile.KindShell); sh != nil && matches(sh, *fg) {
			return found(det, sh, fmt.Sprintf("%s (pid %d) is an interactive %s in the foreground: Enter would run the line",
				progName(*fg), fg.PID, sh.Name))
		}
	} else if t == nil && p.Command != "" {
		// #{pane_current_command} names the foreground leader; its arguments are unknown, so a
		// shell name counts as an interactive shell: the safe guess.
		if sh := s.First(profile.KindShell); sh != nil && slices.Contains(sh.Detect.Names, strings.TrimPrefix(p.Command, "-")) {
			return found(det, sh, fmt.Sprintf("pane_current_command %q is a shell (no process table to tell more)", p.Command))
		}
		candidates = []proc.Process{{PID: p.PID, Comm: p.Command}}
	}
	for _, c := range candidates {
		if skip[c.PID] || progName(c) == "wcomm" {
			continue
		}
		if prof := agentOf(s, c); prof != nil {
			det.Matched = &c
			return found(det, prof, fmt.Sprintf("process %s (pid %d) in the pane's foreground is %s", progName(c), c.PID, prof.Title))
		}
	}
	if fg != nil && fg.PID != p.PID {
		det.Job = shellJob(s, t, p.PID, candidates)
	}
	if ttyMode != nil && p.TTY != "" {
		canon, err := ttyMode(p.TTY)
		switch {
		case err != nil:
			det.TTYMode = ""
		case canon:
			det.TTYMode = "cooked"
			if r := s.First(profile.KindReader); r != nil && r.Detect.CanonicalTTY {
				return found(det, r, fmt.Sprintf("terminal %s is in canonical (cooked) mode: a line reader", p.TTY))
			}
		default:
			det.TTYMode = "raw"
		}
	}
	name := p.Command
	if fg != nil {
		name = progName(*fg)
	}
	return found(det, s.Lookup("generic"), fmt.Sprintf("no profile knows %q", name))
}

// shellJob describes the foreground job of the pane's own interactive shell when none of the job's
// processes reads the terminal, and returns "" otherwise (no shell, or a line reader at the
// keyboard, which is a real recipient).
func shellJob(s *profile.Set, t *proc.Table, panePID int, group []proc.Process) string {
	root, ok := t.Proc(panePID)
	sh := s.First(profile.KindShell)
	if !ok || sh == nil || !matches(sh, root) {
		return ""
	}
	const most = 16 // a pipeline's first processes are the ones at the keyboard
	for i, q := range group {
		if i == most {
			break
		}
		if readsTerminal(q.PID) {
			return ""
		}
	}
	return fmt.Sprintf("%s (pid %d) runs %s (pid %d) in the foreground", progName(root), root.PID, progName(group[0]), group[0].PID)
}

// found is det with the profile p chosen, for reason.
func found(det profile.Detection, p *profile.Profile, reason string) profile.Detection {
	det.Profile, det.Name, det.Reason = p, p.Name, reason
	return det
}

// matches reports whether a process is this profile's program.
func matches(p *profile.Profile, proc proc.Process) bool {
	d := p.Detect
	if len(d.Names) == 0 && len(d.Cmdline) == 0 {
		return false
	}
	name := progName(proc)
	base := strings.TrimPrefix(filepath.Base(proc.Comm), "-")
	if d.Interactive {
		// The program itself, not a script it runs: progName would name the script.
		argv0 := base
		if len(proc.Args) > 0 {
			argv0 = strings.TrimPrefix(filepath.Base(proc.Args[0]), "-")
		}
		return (namedIn(d.Names, argv0) || namedIn(d.Names, base)) && interactiveArgs(proc.Args)
	}
	if len(proc.Args) > 0 && shells[strings.TrimPrefix(filepath.Base(proc.Args[0]), "-")] {
		// A shell script named like an agent ("codex" with a #!/bin/bash line runs as "bash
		// ./codex", comm "codex") is not that agent: it has no input box to wait for.
		name, base = "", ""
	}
	if name != "" && (slices.Contains(d.Names, name) || slices.Contains(d.Names, base)) {
		return true
	}
	for _, path := range entryPoints(proc) {
		for _, sub := range d.Cmdline {
			if sub != "" && strings.Contains(path, sub) {
				return true
			}
		}
	}
	return false
}

// entryPoints are the paths of the program a process runs: argv0, and for an interpreter the
// script it was started on (node's first operand). Only these say what runs: any other argument
// is data ("less node_modules/@anthropic-ai/claude-code/README.md" is less, not Claude Code; "bash
// -c 'node .../codex.js'" is the bash that starts it).
func entryPoints(p proc.Process) []string {
	args := p.Args
	if len(args) == 1 && strings.Contains(args[0], " ") {
		args = strings.Fields(args[0]) // setproctitle squeezed argv into one string
	}
	if len(args) == 0 {
		return nil
	}
	out := []string{args[0]}
	name := strings.TrimPrefix(filepath.Base(args[0]), "-")
	if !interpreters[name] && !strings.HasPrefix(name, "python3.") {
		return out
	}
	for _, a := range args[1:] {
		if a == "-c" || a == "-e" || a == "-m" || a == "--eval" || a == "-p" || a == "--print" {
			break // inline code or a module: no script names the program
		}
		if a == "run" && (name == "bun" || name == "deno") {
			continue // bun run SCRIPT, deno run SCRIPT
		}
		if a != "" && !strings.HasPrefix(a, "-") {
			return append(out, a)
		}
	}
	if i := slices.Index(args, "--"); i > 0 && i+1 < len(args) {
		return append(out, args[i+1]) // node -- script.js
	}
	return out
}

// namedIn reports whether name, or name without a version suffix ("python3.11", "bash5"), is
// one of names.
func namedIn(names []string, name string) bool {
	return slices.Contains(names, name) || slices.Contains(names, strings.TrimRight(name, "0123456789."))
}

// interactiveArgs reports whether a shell's or interpreter's arguments leave it reading commands
// from the terminal: no inline code (-c for shells, also -e and -m for interpreters) and no script
// operand. -i and -s (commands from stdin, operands are then positional parameters) are
// interactive. Options that take a value are skipped with it. When unsure it says interactive:
// that is the safe mistake, since a shell taken for something else would run what is pasted.
func interactiveArgs(args []string) bool {
	if len(args) <= 1 {
		return true
	}
	prog := strings.TrimPrefix(filepath.Base(args[0]), "-")
	code := "c" // sh, bash, dash, zsh, ksh, fish, csh: -c CMD
	if interpreters[prog] || strings.HasPrefix(prog, "python") || prog == "irb" {
		code = "cem" // python -c/-m, node -e, irb -e
	}
	withValue := map[string]bool{"-o": true, "+o": true, "-O": true, "+O": true, "--rcfile": true,
		"--init-file": true, "-W": true, "-X": true, "-r": true, "--require": true, "-I": true}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i+1 >= len(args)
		case a == "-":
			return true // commands from stdin
		case withValue[a]:
			i++
		case strings.HasPrefix(a, "--"):
			if a == "--command" || strings.HasPrefix(a, "--command=") || a == "--eval" || strings.HasPrefix(a, "--eval=") {
				return false
			}
			// --norc, --noprofile, --login, --posix, --interactive ...: no value.
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.ContainsAny(a[1:], code) {
				return false
			}
			if strings.Contains(a[1:], "s") && !interpreters[prog] {
				return true // sh -s ARGS: commands from stdin, ARGS are positional parameters
			}
		default:
			return false // a script or file operand
		}
	}
	return true
}

// DefaultTTYMode is the terminal-mode reader Detect uses in production (TTYCanonical).
func DefaultTTYMode() TTYModeFunc { return TTYCanonical }

// AgentIn returns the agent profile of the first process in the pane's tree (the pane's own
// process, then its descendants) that an agent profile names, nil when none does: whether the
// pane runs an agent at all, busy or not, whatever holds its foreground now (send --all).
func AgentIn(s *profile.Set, p Pane, t *proc.Table, ex Exclude) *profile.Profile {
	if t == nil || p.Dead || p.PID <= 0 || (ex.Pane != "" && p.ID == ex.Pane) {
		return nil
	}
	for _, pid := range append([]int{p.PID}, t.DescendantPIDs(p.PID)...) {
		c, ok := t.Proc(pid)
		if !ok || slices.Contains(ex.PIDs, pid) || progName(c) == "wcomm" {
			continue
		}
		if prof := agentOf(s, c); prof != nil {
			return prof
		}
	}
	return nil
}

// agentOf returns the first agent profile of s whose program c is, nil when none is.
func agentOf(s *profile.Set, c proc.Process) *profile.Profile {
	for _, p := range s.Profiles {
		if p.Kind == profile.KindAgent && matches(p, c) {
			return p
		}
	}
	return nil
}
