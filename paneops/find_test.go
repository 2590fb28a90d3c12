package paneops

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops/proc"
)

// findFixture is a server with seven panes and the processes below them:
//
//	%1 pid 100: bash -> node codex -> bash -> bash -> deep-agent   (agent 4 levels deep)
//	%2 pid 200: sleep 301; orphan-agent (ppid 1, sid 200)          (orphan by sid)
//	%3 pid 300: bash -> claude                                     (the caller's own pane)
//	%4 pid 400: bash -> wcomm send --to claude                     (the caller's own process, not a pane of its own)
//	%5 pid 500: dead; pid 500 now belongs to a "claude"            (dead pane, reused pid)
//	%6 pid 600: bash -> claude --resume -> claude-helper           (match, two processes)
//	%7 pid 700: claude itself as the pane process                  (match)
//
// plus "sshd: claude" (pid 50) outside every pane.
func findFixture() ([]Pane, *proc.Table) {
	panes := []Pane{
		{ID: "%1", Session: "w", Window: 0, PID: 100},
		{ID: "%2", Session: "w", Window: 1, PID: 200},
		{ID: "%3", Session: "w", Window: 2, PID: 300},
		{ID: "%4", Session: "w", Window: 3, PID: 400},
		{ID: "%5", Session: "w", Window: 4, PID: 500, Dead: true},
		{ID: "%6", Session: "w", Window: 5, PID: 600},
		{ID: "%7", Session: "w", Window: 6, PID: 700},
	}
	args := func(a ...string) []string { return a }
	t := ptable(
		proc.Process{PID: 1, Comm: "init", Args: args("/sbin/init")},
		proc.Process{PID: 50, PPID: 1, SID: 50, Comm: "sshd", Args: args("sshd: claude")},
		proc.Process{PID: 90, PPID: 1, SID: 90, Comm: "tmux: server", Args: args("tmux", "new", "-s", "w")},

		proc.Process{PID: 100, PPID: 90, SID: 100, Comm: "bash", Args: args("-bash")},
		proc.Process{PID: 101, PPID: 100, SID: 100, Comm: "node", Args: args("node", "/usr/local/bin/codex", "--yolo")},
		proc.Process{PID: 102, PPID: 101, SID: 100, Comm: "bash", Args: args("/bin/bash", "-c", "x")},
		proc.Process{PID: 103, PPID: 102, SID: 100, Comm: "bash", Args: args("bash")},
		proc.Process{PID: 104, PPID: 103, SID: 100, Comm: "sleep", Args: args("deep-agent", "300")},

		proc.Process{PID: 200, PPID: 90, SID: 200, Comm: "sleep", Args: args("sleep", "301")},
		proc.Process{PID: 250, PPID: 1, SID: 200, Comm: "sleep", Args: args("orphan-agent", "300")},

		proc.Process{PID: 300, PPID: 90, SID: 300, Comm: "bash", Args: args("bash")},
		proc.Process{PID: 301, PPID: 300, SID: 300, Comm: "claude", Args: args("claude")},

		proc.Process{PID: 400, PPID: 90, SID: 400, Comm: "bash", Args: args("bash")},
		proc.Process{PID: 401, PPID: 400, SID: 400, Comm: "wcomm", Args: args("wcomm", "send", "--to", "claude")},

		proc.Process{PID: 500, PPID: 1, SID: 500, Comm: "claude", Args: args("claude")},

		proc.Process{PID: 600, PPID: 90, SID: 600, Comm: "bash", Args: args("bash")},
		proc.Process{PID: 601, PPID: 600, SID: 600, Comm: "claude", Args: args("claude", "--resume")},
		proc.Process{PID: 602, PPID: 601, SID: 600, Comm: "claude-helper"}, // no Args: matched by comm

		proc.Process{PID: 700, PPID: 90, SID: 700, Comm: "claude", Args: args("claude")},
	)
	return panes, t
}

func TestFind(t *testing.T) {
	panes, tb := findFixture()
	type hit struct {
		pane messages.PaneID
		pids []int
	}
	tests := []struct {
		name  string
		agent string
		ex    Exclude
		want  []hit
	}{
		{"nested four deep, by argv0", "deep-agent", Exclude{}, []hit{{"%1", []int{104}}}},
		{"orphan found by session id", "orphan-agent", Exclude{}, []hit{{"%2", []int{250}}}},
		{"substring of the full command line", "--resume", Exclude{}, []hit{{"%6", []int{601}}}},
		{"interpreter script in the arguments", "codex", Exclude{}, []hit{{"%1", []int{101}}}},
		{
			"own pane, own pids and dead pane excluded; two matches in pane order", "claude",
			Exclude{Pane: "%3", PIDs: []int{401, 400, 90, 1}},
			[]hit{{"%6", []int{601, 602}}, {"%7", []int{700}}},
		},
		{
			"without exclusions the caller's pane and process match too", "claude", Exclude{},
			[]hit{{"%3", []int{301}}, {"%4", []int{401}}, {"%6", []int{601, 602}}, {"%7", []int{700}}},
		},
		{"case-sensitive", "Claude", Exclude{}, nil},
		{"processes outside every pane never match", "sshd", Exclude{}, nil},
		{"empty agent matches nothing", "", Exclude{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []hit
			for _, m := range Find(panes, tb, tt.agent, tt.ex) {
				got = append(got, hit{m.Pane.ID, pids(m.Procs)})
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFindKeepsPaneOrderAndData(t *testing.T) {
	panes, tb := findFixture()
	reversed := []Pane{panes[6], panes[5]}
	got := Find(reversed, tb, "claude", Exclude{})
	if assert.Len(t, got, 2) {
		assert.Equal(t, panes[6], got[0].Pane)
		assert.Equal(t, messages.PaneID("%6"), got[1].Pane.ID)
		assert.Equal(t, []string{"claude", "--resume"}, got[1].Procs[0].Args)
	}
	assert.Nil(t, Find(panes, nil, "claude", Exclude{}))
}

func TestNotable(t *testing.T) {
	panes, tb := findFixture()
	tests := []struct {
		pane int
		want []string
	}{
		{0, []string{"deep-agent", "codex"}},   // deepest first, shells skipped, node's script named
		{1, []string{"orphan-agent", "sleep"}}, // the orphan counts as a child of the pane process
		{3, nil},                               // bash and wcomm only
		{4, nil},                               // dead
		{5, []string{"claude-helper", "claude"}},
		{6, []string{"claude"}},
	}
	for _, tt := range tests {
		t.Run(string(panes[tt.pane].ID), func(t *testing.T) {
			assert.Equal(t, tt.want, Notable(panes[tt.pane], tb))
		})
	}
}

func TestProgName(t *testing.T) {
	tests := []struct {
		name string
		p    proc.Process
		want string
	}{
		{"comm without args", proc.Process{Comm: "kthreadd"}, "kthreadd"},
		{"argv0 base name", proc.Process{Comm: "claude.exe", Args: []string{"/opt/cc/bin/claude.exe", "--x"}}, "claude.exe"},
		{"exec -a", proc.Process{Comm: "sleep", Args: []string{"fake-agent-x", "300"}}, "fake-agent-x"},
		{"login shell", proc.Process{Comm: "bash", Args: []string{"-bash"}}, "bash"},
		{"node script", proc.Process{Comm: "node", Args: []string{"node", "--no-warnings", "/usr/bin/gemini"}}, "gemini"},
		{"python -c", proc.Process{Comm: "python3", Args: []string{"/usr/bin/python3", "-c", "print(1)"}}, "python3"},
		{"python3.11 script", proc.Process{Comm: "python3.11", Args: []string{"python3.11", "rec.py", "out"}}, "rec.py"},
		{"setproctitle", proc.Process{Comm: "node", Args: []string{"claude --resume"}}, "claude"},
		{"blank title", proc.Process{Comm: "x", Args: []string{" "}}, "x"},
		{"shell script", proc.Process{Comm: "bash", Args: []string{"bash", "worker.sh"}}, "worker.sh"},
		{"script by its #! line", proc.Process{Comm: "codex", Args: []string{"/bin/bash", "./codex", "x"}}, "codex"},
		{"shell with options and a script", proc.Process{Comm: "bash", Args: []string{"bash", "-o", "pipefail", "-e", "/w/run.sh"}}, "run.sh"},
		{"shell -c", proc.Process{Comm: "bash", Args: []string{"bash", "-c", "sleep 1"}}, "bash"},
		{"interactive shell", proc.Process{Comm: "bash", Args: []string{"bash", "--norc", "-i"}}, "bash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, progName(tt.p))
		})
	}
}

func TestCommandLineContains(t *testing.T) {
	p := proc.Process{Comm: "node", Args: []string{"node", "/bin/claude", "--resume", "a b"}}
	for _, agent := range []string{"claude", "node /bin", "claude --res", "a b", "--resume a", "b"} {
		assert.Equal(t, strings.Contains(p.CommandLine(), agent), commandLineContains(p, agent), agent)
		assert.True(t, commandLineContains(p, agent), agent)
	}
	for _, agent := range []string{"claude  --resume", "nodex", "b "} {
		assert.False(t, commandLineContains(p, agent), agent)
	}
	assert.True(t, commandLineContains(proc.Process{Comm: "kworker"}, "work"))
}
