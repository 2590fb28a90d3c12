package paneops

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
)

// Match is a pane whose process tree contains the agent, with the processes that matched.
type Match struct {
	Pane  Pane           `json:"pane"`
	Procs []proc.Process `json:"matches"`
}

// Exclude says what never matches: the caller's own pane and processes (wcomm's own command line
// holds the agent name it looks for).
type Exclude struct {
	Pane messages.PaneID
	PIDs []int
}

// Find returns the panes whose pane process or any descendant has a command line containing agent
// (case-sensitive substring, as the seed's grep -F), in pane order. Dead panes never match.
//
// An empty agent matches nothing rather than everything. A dead pane's pid may already belong to
// an unrelated process, which is one more reason to skip it.
func Find(panes []Pane, t *proc.Table, agent string, ex Exclude) []Match {
	if agent == "" || t == nil {
		return nil
	}
	excluded := make(map[int]bool, len(ex.PIDs))
	for _, pid := range ex.PIDs {
		excluded[pid] = true
	}
	// Every candidate's command line, read at once (several at a time), then matched in order.
	trees := make([][]int, len(panes))
	var all []int
	for i, p := range panes {
		if p.Dead || p.PID <= 0 || (ex.Pane != "" && p.ID == ex.Pane) {
			continue
		}
		trees[i] = append([]int{p.PID}, t.DescendantPIDs(p.PID)...)
		for _, pid := range trees[i] {
			if !excluded[pid] {
				all = append(all, pid)
			}
		}
	}
	t.ReadArgs(all)
	var out []Match
	for i, p := range panes {
		if trees[i] == nil {
			continue
		}
		var hits []proc.Process
		for _, pid := range trees[i] {
			if excluded[pid] {
				continue
			}
			if proc, ok := t.Proc(pid); ok && commandLineContains(proc, agent) {
				hits = append(hits, proc)
			}
		}
		if len(hits) > 0 {
			slices.SortFunc(hits, func(a, b proc.Process) int { return a.PID - b.PID })
			out = append(out, Match{Pane: p, Procs: hits})
		}
	}
	return out
}

// commandLineContains is strings.Contains(p.CommandLine(), agent) without building the command
// line: an agent without a space cannot span two arguments, so each argument is checked alone.
func commandLineContains(p proc.Process, agent string) bool {
	if len(p.Args) == 0 || strings.Contains(agent, " ") {
		return strings.Contains(p.CommandLine(), agent)
	}
	for _, a := range p.Args {
		if strings.Contains(a, agent) {
			return true
		}
	}
	return false
}

// shells are the programs Notable leaves out: a shell in a pane says nothing about what the pane
// is for. Login shells appear as "-bash" and are trimmed before the lookup.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "fish": true, "ksh": true, "mksh": true,
	"tcsh": true, "csh": true, "ash": true, "busybox": true, "nu": true, "elvish": true, "xonsh": true,
	"wcomm": true,
}

// interpreters run a script named by a later argument; that script's name says more (an npm
// program "codex" runs as "node /usr/local/bin/codex").
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "python": true, "python3": true, "ruby": true, "perl": true,
	"bun": true, "deno": true,
}

// shellScript returns the script operand of a shell's argv, "" when the shell reads commands from
// the terminal, stdin or -c.
func shellScript(args []string) string {
	if interactiveArgs(args) {
		return ""
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.Contains(a[1:], "c") && !strings.HasPrefix(a, "--") {
				return ""
			}
		default:
			return a
		}
	}
	return ""
}

// progName is the name a person would give a process: argv0's base name (so "exec -a NAME" and
// symlinked launchers show their chosen name), the script of an interpreter, or comm.
func progName(p proc.Process) string {
	if len(p.Args) == 0 {
		return p.Comm
	}
	args := p.Args
	if len(args) == 1 && strings.Contains(args[0], " ") {
		args = strings.Fields(args[0]) // setproctitle squeezed argv into one string
		if len(args) == 0 {
			return p.Comm
		}
	}
	name := strings.TrimPrefix(filepath.Base(args[0]), "-")
	if shells[name] && name != "wcomm" {
		// A shell running a script ("bash worker.sh", or a script started by its #! line) is that
		// script; a shell at its prompt or running -c code is the shell.
		if script := shellScript(args); script != "" {
			return filepath.Base(script)
		}
		return name
	}
	if interpreters[name] || strings.HasPrefix(name, "python3.") {
		for _, a := range args[1:] {
			if a != "" && !strings.HasPrefix(a, "-") {
				return filepath.Base(a)
			}
			if a == "-c" || a == "-e" || a == "-m" {
				break // inline code or a module: the interpreter's own name is the best we have
			}
		}
	}
	if name == "" || name == "." || name == "/" {
		return p.Comm
	}
	return name
}

// Notable returns the distinct command names running in a pane's tree, deepest first, skipping
// plain shells and wcomm itself, for `wcomm panes`.
func Notable(p Pane, t *proc.Table) []string {
	if t == nil || p.Dead || p.PID <= 0 {
		return nil
	}
	depth := t.Depths(p.PID)
	pids := make([]int, 0, len(depth))
	for pid := range depth {
		pids = append(pids, pid)
	}
	slices.SortFunc(pids, func(a, b int) int {
		if depth[a] != depth[b] {
			return depth[b] - depth[a]
		}
		return a - b
	})
	var names []string
	seen := map[string]bool{}
	for _, pid := range pids {
		proc, ok := t.Proc(pid)
		if !ok {
			continue
		}
		name := progName(proc)
		if name == "" || shells[strings.TrimPrefix(name, "-")] || seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	return names
}
