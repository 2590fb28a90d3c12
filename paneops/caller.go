package paneops

// Who calls: whether a command comes from the person at a terminal of their own or from an
// agent's tree, and whether a process runs in the pane it names. Both are told by what the kernel
// and tmux say of the process (its controlling terminal, its foreground group, its ancestors, the
// panes' terminals and processes), never by what the process says of itself ($TMUX_PANE, an
// argument): a process of an agent's tree can set any variable, but it cannot take another
// terminal as its controlling one, nor make itself a child of another pane's process.

import (
	"context"
	"fmt"
	"slices"
	"syscall"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// Caller is who runs a process, as far as what cannot be forged tells.
type Caller struct {
	// Person is true when the process runs in the foreground of a controlling terminal that no
	// agent runs on (not an agent pane's, not one an agent process has), with no agent among its
	// ancestors: a command the person typed in a shell of their own.
	Person bool `json:"person"`
	// Agent names the agent among its ancestors, "" when none is.
	Agent string `json:"agent,omitempty"`
	// Why says why it is not the person; "" when it is.
	Why string `json:"why,omitempty"`
}

// TTYDevFunc returns the device number of a terminal device path, as tty_nr of /proc/PID/stat
// names it.
type TTYDevFunc func(path string) (int, error)

// WhoCalls judges process pid of the table t against the panes of a tmux server: the caller is
// the person only when it has a controlling terminal, is in that terminal's foreground process
// group, the terminal is neither the tty of a pane in which an agent runs nor the controlling
// terminal of an agent's process, and no agent is among its ancestors. An agent is a process that
// any of sets names (the built-in profiles and the settings': settings may add an agent, never
// hide one). Without a controlling terminal (setsid, tmux run-shell, cron, a service) it is not
// the person. ttyDev may be nil (StatTTYDev).
func WhoCalls(t *proc.Table, pid int, panes []Pane, ttyDev TTYDevFunc, sets ...*profile.Set) Caller {
	if ttyDev == nil {
		ttyDev = StatTTYDev
	}
	if t == nil {
		return Caller{Why: "the process table cannot be read, so who runs this cannot be told"}
	}
	self, ok := t.Procs[pid]
	if !ok {
		return Caller{Why: fmt.Sprintf("process %d is not in the process table, so who runs it cannot be told", pid)}
	}
	if name, apid := agentAmong(sets, t, t.Ancestors(pid)); name != "" {
		return Caller{Agent: name, Why: fmt.Sprintf("it runs under the agent %s (pid %d)", name, apid)}
	}
	if self.TTY == 0 {
		return Caller{Why: "it has no controlling terminal (started detached: setsid, tmux run-shell, cron, a service)"}
	}
	if self.TPGID <= 0 || self.PGRP != self.TPGID {
		return Caller{Why: "it is not in the foreground of its terminal (a background job or a detached process)"}
	}
	for _, p := range panes {
		if p.TTY == "" {
			continue
		}
		if dev, err := ttyDev(p.TTY); err != nil || dev != self.TTY {
			continue
		}
		tree := append([]int{p.PID}, t.DescendantPIDs(p.PID)...)
		if name, _ := agentAmong(sets, t, tree); name != "" {
			return Caller{Why: fmt.Sprintf("its terminal is pane %s's, where the agent %s runs", p.ID, name)}
		}
	}
	var same []int
	for q, c := range t.Procs {
		if c.TTY == self.TTY && q != pid {
			same = append(same, q)
		}
	}
	slices.Sort(same) // the lowest pid is named, whatever the map's order
	if name, apid := agentAmong(sets, t, same); name != "" {
		return Caller{Why: fmt.Sprintf("its terminal is the one the agent %s (pid %d) runs on", name, apid)}
	}
	return Caller{Person: true}
}

// agentAmong is AgentAmong over several profile sets, with the agent's pid.
func agentAmong(sets []*profile.Set, t *proc.Table, pids []int) (string, int) {
	for _, pid := range pids {
		c, ok := t.Proc(pid)
		if !ok {
			continue
		}
		for _, s := range sets {
			if s == nil {
				continue
			}
			if p := agentOf(s, c); p != nil {
				return p.Name, pid
			}
		}
	}
	return "", 0
}

// StatTTYDev is the device number of a terminal device, in tty_nr's encoding (Linux's
// new_encode_dev, which stat's st_rdev uses too on 64-bit systems).
func StatTTYDev(path string) (int, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, fmt.Errorf("stat terminal %s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return 0, fmt.Errorf("%s is not a terminal device", path)
	}
	return int(st.Rdev), nil
}

// PaneLister lists the panes of a tmux server (Client.Panes).
type PaneLister func(ctx context.Context, scope Scope) ([]Pane, error)

// IdentifyCaller reads the process table and the panes of the server list reaches, and judges
// process pid (WhoCalls). A server that cannot be reached has no panes to compare with: the
// caller's terminal is then checked against the agents' processes only.
func IdentifyCaller(ctx context.Context, list PaneLister, scan func() (*proc.Table, error), pid int, sets ...*profile.Set) Caller {
	if scan == nil {
		scan = proc.Scan
	}
	t, err := scan()
	if err != nil {
		return Caller{Why: fmt.Sprintf("the process table cannot be read (%v), so who runs this cannot be told", err)}
	}
	var panes []Pane
	if list != nil {
		panes, _ = list(ctx, Scope{All: true})
	}
	return WhoCalls(t, pid, panes, StatTTYDev, sets...)
}

// InPane reports whether process pid runs in pane p: p's process is pid or one of its ancestors,
// or pid belongs to the session p's process leads (a process whose parent exited stays in it).
// Neither can be claimed: only the kernel makes a process a child, and a session is left with
// setsid, never joined from outside.
func InPane(t *proc.Table, p Pane, pid int) bool {
	if t == nil || p.PID <= 0 {
		return false
	}
	for _, a := range t.Ancestors(pid) {
		if a == p.PID {
			return true
		}
	}
	self, ok1 := t.Procs[pid]
	lead, ok2 := t.Procs[p.PID]
	return ok1 && ok2 && lead.SID == p.PID && self.SID == p.PID
}

// PaneFinder looks a pane up on a tmux server (Client.Pane).
type PaneFinder func(ctx context.Context, target string) (Pane, error)

// OwnPane checks the pane a process claims as its own ($TMUX_PANE) against tmux and the
// process table: nil only when pid runs in that pane's process tree (InPane) on the server
// find reaches. scan reads the processes InPane looks at (the pane's tree and pid's ancestors:
// proc.ScanPane(panePID, pid)). This is the one check everything that acts in a pane's name
// goes through.
func OwnPane(ctx context.Context, find PaneFinder, scan func(panePID int) (*proc.Table, error), claimed messages.PaneID, pid int) error {
	if claimed == "" {
		return fmt.Errorf("no pane is named ($TMUX_PANE is not set)")
	}
	if _, err := messages.ParsePaneID(string(claimed)); err != nil {
		return err
	}
	p, err := find(ctx, string(claimed))
	if err != nil {
		return fmt.Errorf("pane %s cannot be looked up: %w", claimed, err)
	}
	if p.ID != claimed {
		return fmt.Errorf("pane %s is not on this tmux server", claimed)
	}
	t, err := scan(p.PID)
	if err != nil {
		return fmt.Errorf("the process table cannot be read, so whether this process runs in pane %s cannot be told: %w", claimed, err)
	}
	if !InPane(t, p, pid) {
		return fmt.Errorf("this process (pid %d) does not run in pane %s (whose process is pid %d): $TMUX_PANE names a pane it is not in", pid, claimed, p.PID)
	}
	return nil
}
