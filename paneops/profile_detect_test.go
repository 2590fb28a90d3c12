package paneops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wcomm/wcomm/paneops/proc"
	"github.com/wcomm/wcomm/paneops/profile"
)

func TestProfileInteractiveArgs(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"bash"}, true},
		{[]string{"-bash"}, true},
		{[]string{"bash", "-i"}, true},
		{[]string{"bash", "--norc", "--noprofile", "-i"}, true},
		{[]string{"bash", "-e"}, true},
		{[]string{"bash", "-o", "vi"}, true},
		{[]string{"bash", "--rcfile", "my.rc"}, true},
		{[]string{"sh", "-s", "a", "b"}, true},
		{[]string{"zsh", "-f"}, true},
		{[]string{"fish"}, true},
		{[]string{"dash", "-"}, true},
		{[]string{"bash", "worker.sh"}, false},
		{[]string{"/bin/bash", "./worker.sh", "--flag"}, false},
		{[]string{"bash", "-c", "read x"}, false},
		{[]string{"bash", "-lc", "x"}, false},
		{[]string{"dash", "--", "script"}, false},
		{[]string{"fish", "--command=ls"}, false},
		{[]string{"python3"}, true},
		{[]string{"/opt/py/bin/python3.11", "-q"}, true},
		{[]string{"python3", "-u"}, true},
		{[]string{"python3", "-W", "ignore"}, true},
		{[]string{"python3", "recorder.py", "log"}, false},
		{[]string{"python3", "-c", "pass"}, false},
		{[]string{"python3", "-m", "http.server"}, false},
		{[]string{"node"}, true},
		{[]string{"node", "-e", "1"}, false},
		{[]string{"node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, interactiveArgs(tt.args), "%q", tt.args)
	}
}

// proc is a process of a detection fixture: pid, parent, process group, session, foreground group
// of its terminal, comm and argv.
func mkProc(pid, ppid, pgrp, sid, tpgid int, comm string, args ...string) proc.Process {
	return proc.Process{PID: pid, PPID: ppid, PGRP: pgrp, SID: sid, TPGID: tpgid, Comm: comm, Args: args}
}

func TestProfileDetect(t *testing.T) {
	procs := ptable(
		mkProc(1, 0, 1, 1, -1, "init", "/sbin/init"),
		// %1: an interactive bash at its prompt (it is the foreground group).
		mkProc(100, 1, 100, 100, 100, "bash", "bash", "--norc", "-i"),
		// %2: Claude Code started from an interactive bash: it leads its own foreground group, and
		// runs wcomm in a tool call, whose argv names another agent.
		mkProc(200, 1, 200, 200, 201, "bash", "-bash"),
		mkProc(201, 200, 201, 200, 201, "claude.exe", "claude.exe", "--permission-mode", "acceptEdits"),
		mkProc(202, 201, 202, 200, 201, "bash", "/bin/bash", "-c", "wcomm send --to codex hi"),
		mkProc(203, 202, 202, 200, 201, "wcomm", "wcomm", "send", "--to", "codex", "hi"),
		// %3: Claude Code in the background; the shell reads the keyboard.
		mkProc(300, 1, 300, 300, 300, "bash", "bash"),
		mkProc(301, 300, 301, 300, 300, "claude", "claude"),
		// %4: Codex as node running its launcher, under bash -c (one foreground group).
		mkProc(400, 1, 400, 400, 400, "bash", "bash", "-c", "node /x/node_modules/@openai/codex/bin/codex.js"),
		mkProc(401, 400, 400, 400, 400, "node", "node", "/x/node_modules/@openai/codex/bin/codex.js"),
		// %5: a shell script reading lines.
		mkProc(500, 1, 500, 500, 500, "bash", "bash", "worker.sh"),
		// %6: a raw-mode python program.
		mkProc(600, 1, 600, 600, 600, "python3", "python3", "recorder.py", "log"),
		// %7: aider as a python script; %8: Gemini CLI whose first process exec'd env.
		mkProc(700, 1, 700, 700, 700, "python3", "/usr/bin/python3", "/home/u/.local/bin/aider"),
		mkProc(800, 1, 800, 800, 800, "node", "node", "/x/node_modules/.bin/gemini", "--yolo"),
		// %9: Codex orchestrator whose tool call names claude.
		mkProc(900, 1, 900, 900, 900, "codex", "codex", "--no-daemon"),
		mkProc(901, 900, 900, 900, 900, "wcomm", "wcomm", "send", "--to", "claude", "x"),
		// %11: a bash script named codex, started by its #! line: not the Codex CLI.
		mkProc(1100, 1, 1100, 1100, 1100, "codex", "/bin/bash", "./codex"),
		// %10: a Python REPL under a versioned name: Enter runs the line too.
		mkProc(1000, 1, 1000, 1000, 1000, "python3.11", "/opt/py/bin/python3.11"),
		// %12: bash whose foreground job (group 1201) has just been reaped: the terminal still
		// names that group, and is still cooked.
		mkProc(1200, 1, 1200, 1200, 1201, "bash", "bash", "--norc", "-i"),
		// %13: a program that is not a shell, in the same moment.
		mkProc(1300, 1, 1300, 1300, 1301, "python3", "python3", "worker.py"),
	)
	canonical := func(tty string) (bool, error) {
		switch tty {
		case "/dev/pts/cooked":
			return true, nil
		case "/dev/pts/raw":
			return false, nil
		}
		return false, errors.New("no such terminal")
	}
	set := profile.Defaults()
	tests := []struct {
		name       string
		pane       Pane
		tab        *proc.Table
		ex         Exclude
		want       string
		wantReason string
		wantTTY    string
	}{
		{"interactive bash", Pane{PID: 100, TTY: "/dev/pts/raw"}, procs, Exclude{}, "shell", "Enter would run the line", ""},
		{"claude in the foreground, wcomm below it", Pane{PID: 200}, procs, Exclude{}, "claude", "claude.exe (pid 201)", ""},
		{"claude in the background of a shell", Pane{PID: 300}, procs, Exclude{}, "shell", "interactive shell", ""},
		{"codex through node", Pane{PID: 400}, procs, Exclude{}, "codex", "Codex CLI", ""},
		{"script reading a cooked terminal", Pane{PID: 500, TTY: "/dev/pts/cooked"}, procs, Exclude{}, "reader", "canonical", "cooked"},
		{"raw python program", Pane{PID: 600, TTY: "/dev/pts/raw"}, procs, Exclude{}, "generic", `"recorder.py"`, "raw"},
		{"unreadable terminal", Pane{PID: 600, TTY: "/dev/pts/gone"}, procs, Exclude{}, "generic", "no profile", ""},
		{"aider", Pane{PID: 700}, procs, Exclude{}, "aider", "aider", ""},
		{"gemini", Pane{PID: 800}, procs, Exclude{}, "gemini", "Gemini CLI", ""},
		{"codex orchestrator sending to claude", Pane{PID: 900}, procs, Exclude{}, "codex", "pid 900", ""},
		{"python REPL", Pane{PID: 1000}, procs, Exclude{}, "shell", "python3.11 (pid 1000) is an interactive shell", ""},
		{"shell script named like an agent", Pane{PID: 1100, TTY: "/dev/pts/raw"}, procs, Exclude{}, "generic", "no profile", "raw"},
		{"excluded process", Pane{PID: 900}, procs, Exclude{PIDs: []int{900}}, "generic", "no profile", ""},
		{"shell taking its terminal back", Pane{PID: 1200, TTY: "/dev/pts/cooked"}, procs, Exclude{}, "shell", "foreground job has just ended", ""},
		{"not a shell, foreground group gone", Pane{PID: 1300, TTY: "/dev/pts/cooked"}, procs, Exclude{}, "reader", "canonical", "cooked"},
		{"no table: shell command", Pane{PID: 5, Command: "zsh"}, nil, Exclude{}, "shell", "pane_current_command", ""},
		{"no table: agent command", Pane{PID: 5, Command: "codex"}, nil, Exclude{}, "codex", "codex", ""},
		{"no table: cooked cat", Pane{PID: 5, Command: "cat", TTY: "/dev/pts/cooked"}, nil, Exclude{}, "reader", "canonical", "cooked"},
		{"no table: unknown", Pane{PID: 5, Command: "htop", TTY: "/dev/pts/raw"}, nil, Exclude{}, "generic", `"htop"`, "raw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Detect(set, tt.pane, tt.tab, canonical, tt.ex)
			require.NotNil(t, d.Profile)
			assert.Equal(t, tt.want, d.Name)
			assert.Equal(t, tt.want, d.Profile.Name)
			assert.Contains(t, d.Reason, tt.wantReason)
			assert.Equal(t, tt.wantTTY, d.TTYMode)
		})
	}

	d := Detect(set, Pane{PID: 1200, TTY: "/dev/pts/cooked"}, procs, canonical, Exclude{})
	assert.Contains(t, d.Job, "taking its terminal back", "a delivery that can wait does")
	assert.Empty(t, Detect(set, Pane{PID: 100, TTY: "/dev/pts/raw"}, procs, canonical, Exclude{}).Job)

	d, err := set.Force("gemini")
	require.NoError(t, err)
	assert.True(t, d.Forced)
	assert.Equal(t, "gemini", d.Profile.Name)
	_, err = set.Force("nope")
	assert.ErrorContains(t, err, "claude, codex, gemini, opencode, copilot, qwen, aider, shell, reader, generic")
}

func TestProfileForeground(t *testing.T) {
	procs := ptable(
		mkProc(10, 1, 10, 10, 12, "bash", "bash"),
		// The foreground group's leader exited; its member is still there.
		mkProc(13, 10, 12, 10, 12, "sleep", "sleep", "9"),
		mkProc(14, 13, 12, 10, 12, "cat", "cat"),
		mkProc(20, 1, 20, 20, -1, "daemon", "daemon"),
	)
	leader, group, ok := procs.Foreground(10)
	require.True(t, ok)
	assert.Equal(t, 13, leader.PID)
	assert.Equal(t, []int{13, 14}, pids(group))
	_, _, ok = procs.Foreground(20)
	assert.False(t, ok, "no terminal, no foreground")
	_, _, ok = procs.Foreground(99)
	assert.False(t, ok)
}

func TestProfileKnownBugs(t *testing.T) {
	applies := func(ver string) map[string]bool {
		m := map[string]bool{}
		for _, b := range KnownBugs(ver) {
			m[b.ID] = b.Applies
		}
		return m
	}
	assert.True(t, applies("3.3a")["dead-pane-paste-crash"])
	assert.True(t, applies("tmux 3.2")["dead-pane-paste-crash"])
	assert.False(t, applies("3.4")["dead-pane-paste-crash"])
	assert.False(t, applies("next-3.6")["dead-pane-paste-crash"])
	assert.True(t, applies("3.7b")["named-enter-3.7b"])
	assert.False(t, applies("3.7a")["named-enter-3.7b"])
	assert.True(t, applies("master")["trailing-semicolon"])
	assert.False(t, applies("master")["dead-pane-paste-crash"], "an unknown version is not assumed old")
	assert.True(t, NeedsLiteralEnter("3.7b"))
	assert.False(t, NeedsLiteralEnter("3.3a"))
}

func TestProfileAgentIn(t *testing.T) {
	procs := ptable(
		mkProc(1, 0, 1, 1, -1, "init", "/sbin/init"),
		// %1: Claude Code in the background of a shell: it runs an agent all the same.
		mkProc(300, 1, 300, 300, 300, "bash", "bash"),
		mkProc(301, 300, 301, 300, 300, "claude", "claude"),
		// %2: a plain shell; %3: Codex under node; %4: the caller's pane, whose wcomm names codex.
		mkProc(400, 1, 400, 400, 400, "bash", "bash", "-i"),
		mkProc(500, 1, 500, 500, 500, "node", "node", "/x/node_modules/@openai/codex/bin/codex.js"),
		mkProc(600, 1, 600, 600, 600, "bash", "bash"),
		mkProc(601, 600, 601, 600, 601, "wcomm", "wcomm", "send", "--all", "codex"),
		// %5: a bash script named codex is not Codex.
		mkProc(700, 1, 700, 700, 700, "codex", "/bin/bash", "./codex"),
	)
	set := profile.Defaults()
	tests := []struct {
		name string
		pane Pane
		ex   Exclude
		want string
	}{
		{"agent behind a shell", Pane{ID: "%1", PID: 300}, Exclude{}, "claude"},
		{"plain shell", Pane{ID: "%2", PID: 400}, Exclude{}, ""},
		{"codex under node", Pane{ID: "%3", PID: 500}, Exclude{}, "codex"},
		{"wcomm itself", Pane{ID: "%4", PID: 600}, Exclude{}, ""},
		{"script named like an agent", Pane{ID: "%5", PID: 700}, Exclude{}, ""},
		{"excluded pane", Pane{ID: "%1", PID: 300}, Exclude{Pane: "%1"}, ""},
		{"excluded process", Pane{ID: "%1", PID: 300}, Exclude{PIDs: []int{301}}, ""},
		{"dead pane", Pane{ID: "%1", PID: 300, Dead: true}, Exclude{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AgentIn(set, tt.pane, procs, tt.ex)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Name)
		})
	}
	assert.Nil(t, AgentIn(set, Pane{ID: "%1", PID: 300}, nil, Exclude{}), "no process table: no agent known")
}
