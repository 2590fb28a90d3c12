package paneops

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

// The tmux server (90) has two panes: %1 a shell (100, tty 34816) where the person types, %2 a
// shell (200, tty 34817) that runs claude (201).
const (
	ttyShell = 34816
	ttyAgent = 34817
	ttyOther = 34818
)

func callerPanes() []Pane {
	return []Pane{{ID: "%1", PID: 100, TTY: "/dev/pts/0"}, {ID: "%2", PID: 200, TTY: "/dev/pts/1"}}
}

func callerDev(path string) (int, error) {
	switch path {
	case "/dev/pts/0":
		return ttyShell, nil
	case "/dev/pts/1":
		return ttyAgent, nil
	}
	return 0, errors.New("no such terminal")
}

// callerTable is the server's processes plus the caller's (pid 999 unless the case adds its own).
func callerTable(extra ...proc.Process) *proc.Table {
	base := []proc.Process{
		{PID: 90, PPID: 1, SID: 90, PGRP: 90, Comm: "tmux: server", Args: []string{"tmux"}},
		{PID: 100, PPID: 90, SID: 100, PGRP: 100, TTY: ttyShell, TPGID: 100, Comm: "bash", Args: []string{"-bash"}},
		{PID: 200, PPID: 90, SID: 200, PGRP: 200, TTY: ttyAgent, TPGID: 201, Comm: "bash", Args: []string{"-bash"}},
		{PID: 201, PPID: 200, SID: 200, PGRP: 201, TTY: ttyAgent, TPGID: 201, Comm: "claude", Args: []string{"claude"}},
	}
	return proc.NewProcTable(append(base, extra...))
}

func TestWhoCalls(t *testing.T) {
	set := profile.Defaults()
	tests := []struct {
		name   string
		procs  []proc.Process
		person bool
		agent  string
		why    string
	}{
		{"typed in the person's shell pane", []proc.Process{
			{PID: 999, PPID: 100, SID: 100, PGRP: 999, TTY: ttyShell, TPGID: 999, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, true, "", ""},
		{"typed in a terminal outside tmux", []proc.Process{
			{PID: 50, PPID: 1, SID: 50, PGRP: 50, TTY: ttyOther, TPGID: 999, Comm: "zsh", Args: []string{"-zsh"}},
			{PID: 999, PPID: 50, SID: 50, PGRP: 999, TTY: ttyOther, TPGID: 999, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, true, "", ""},
		{"an agent's tool call", []proc.Process{
			{PID: 300, PPID: 201, SID: 200, PGRP: 201, TTY: ttyAgent, TPGID: 201, Comm: "bash", Args: []string{"bash", "-c", "wcomm answer"}},
			{PID: 999, PPID: 300, SID: 200, PGRP: 201, TTY: ttyAgent, TPGID: 201, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, false, "claude", "under the agent claude (pid 201)"},
		{"setsid -f from an agent: no terminal, no agent above", []proc.Process{
			{PID: 999, PPID: 1, SID: 999, PGRP: 999, TTY: 0, TPGID: -1, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, false, "", "no controlling terminal"},
		{"tmux run-shell -b: a child of the server, no terminal", []proc.Process{
			{PID: 400, PPID: 90, SID: 90, PGRP: 90, TTY: 0, TPGID: -1, Comm: "sh", Args: []string{"/bin/sh", "-c", "wcomm answer"}},
			{PID: 999, PPID: 400, SID: 90, PGRP: 90, TTY: 0, TPGID: -1, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, false, "", "no controlling terminal"},
		{"double fork from an agent keeps the agent pane's terminal", []proc.Process{
			{PID: 999, PPID: 1, SID: 200, PGRP: 201, TTY: ttyAgent, TPGID: 201, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, false, "", "pane %2's, where the agent claude runs"},
		{"a background job of the person's shell", []proc.Process{
			{PID: 999, PPID: 100, SID: 100, PGRP: 999, TTY: ttyShell, TPGID: 100, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, false, "", "not in the foreground"},
		{"a terminal an agent runs on outside tmux", []proc.Process{
			{PID: 60, PPID: 1, SID: 60, PGRP: 60, TTY: ttyOther, TPGID: 60, Comm: "claude", Args: []string{"claude"}},
			{PID: 999, PPID: 1, SID: 60, PGRP: 60, TTY: ttyOther, TPGID: 60, Comm: "wcomm", Args: []string{"wcomm", "answer"}},
		}, false, "", "the agent claude (pid 60) runs on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WhoCalls(callerTable(tt.procs...), 999, callerPanes(), callerDev, set)
			assert.Equal(t, tt.person, got.Person, "%+v", got)
			assert.Equal(t, tt.agent, got.Agent)
			if tt.why == "" {
				assert.Empty(t, got.Why)
			} else {
				assert.Contains(t, got.Why, tt.why)
			}
		})
	}
}

// A set of profiles that hides claude (a project's agent_profiles) does not make its tool call
// the person: any set that names an agent counts.
func TestWhoCallsProfilesOnlyAdd(t *testing.T) {
	hide, err := profile.Load([]byte(`{"profiles":[{"name":"claude","detect":{"names":["not-claude"],"cmdline":[]}}]}`))
	require.NoError(t, err)
	tbl := callerTable(proc.Process{PID: 999, PPID: 201, SID: 200, PGRP: 201, TTY: ttyAgent, TPGID: 201, Comm: "wcomm", Args: []string{"wcomm"}})
	assert.True(t, WhoCalls(tbl, 999, nil, callerDev, hide).Person, "the hiding set alone is fooled (the case guarded against)")
	got := WhoCalls(tbl, 999, nil, callerDev, profile.Defaults(), hide)
	assert.False(t, got.Person)
	assert.Equal(t, "claude", got.Agent)
}

func TestOwnPane(t *testing.T) {
	find := func(_ context.Context, target string) (Pane, error) {
		for _, p := range callerPanes() {
			if string(p.ID) == target {
				return p, nil
			}
		}
		return Pane{}, errors.New("can't find pane")
	}
	tests := []struct {
		name    string
		claimed messages.PaneID
		procs   []proc.Process
		err     string
	}{
		{"the agent's hook in its own pane", "%2", []proc.Process{
			{PID: 999, PPID: 201, SID: 200, PGRP: 201, Comm: "wcomm"},
		}, ""},
		{"an orphan of the pane's session", "%2", []proc.Process{
			{PID: 999, PPID: 1, SID: 200, PGRP: 201, Comm: "wcomm"},
		}, ""},
		{"a process of pane %1 claiming %2", "%2", []proc.Process{
			{PID: 999, PPID: 100, SID: 100, PGRP: 999, Comm: "wcomm"},
		}, "does not run in pane %2"},
		{"setsid out of the pane", "%2", []proc.Process{
			{PID: 999, PPID: 1, SID: 999, PGRP: 999, Comm: "wcomm"},
		}, "does not run in pane %2"},
		{"a pane this server lacks", "%7", []proc.Process{
			{PID: 999, PPID: 201, SID: 200, PGRP: 201, Comm: "wcomm"},
		}, "cannot be looked up"},
		{"nothing claimed", "", nil, "not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scan := func(int) (*proc.Table, error) { return callerTable(tt.procs...), nil }
			err := OwnPane(context.Background(), find, scan, tt.claimed, 999)
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
			}
		})
	}
}

// A real pane: the tty_nr its process has is its #{pane_tty}'s device number, so a caller's
// terminal is told from the panes' by number; and that process runs in the pane, while this test
// process, which names the pane, does not.
func TestCallerRealPane(t *testing.T) {
	s := startServer(t)
	id := s.newWindow("sleep", "86400")
	p := s.pane(id)
	tbl, err := proc.Scan()
	require.NoError(t, err)
	self, ok := tbl.Procs[p.PID]
	require.True(t, ok)
	dev, err := StatTTYDev(p.TTY)
	require.NoError(t, err)
	assert.NotZero(t, self.TTY)
	assert.Equal(t, self.TTY, dev, "tty_nr of the pane's process and st_rdev of %s", p.TTY)

	scan := func(panePID int) (*proc.Table, error) { return proc.ScanPane(panePID, p.PID) }
	require.NoError(t, OwnPane(context.Background(), s.c.Pane, scan, id, p.PID))
	scan = func(panePID int) (*proc.Table, error) { return proc.ScanPane(panePID, os.Getpid()) }
	err = OwnPane(context.Background(), s.c.Pane, scan, id, os.Getpid())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not run in pane "+string(id))
}
