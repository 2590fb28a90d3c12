package paneops

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wcomm/wcomm/paneops/profile"
)

// An agent is the program a process runs (argv0, or the script its interpreter was started on),
// never a process that only names the agent's files in its arguments.
func TestProfileAgentByTheProgramRun(t *testing.T) {
	set := profile.Defaults()
	const cc = "/usr/lib/node_modules/@anthropic-ai/claude-code"
	tests := []struct {
		name string
		args []string
		want string // "" for no agent
	}{
		{"claude code as node cli.js", []string{"node", cc + "/cli.js"}, "claude"},
		{"claude code with node options", []string{"/usr/bin/node", "--no-warnings", "--enable-source-maps", cc + "/cli.js", "--resume"}, "claude"},
		{"claude code after --", []string{"node", "--", cc + "/cli.js"}, "claude"},
		{"claude by name", []string{"claude", "--permission-mode", "default"}, "claude"},
		{"claude's own binary by path", []string{cc + "/bin/claude.exe"}, "claude"},
		{"codex as node", []string{"node", "/x/node_modules/@openai/codex/bin/codex.js"}, "codex"},
		{"codex by name", []string{"codex", "--no-daemon"}, "codex"},
		{"gemini through its bin link", []string{"node", "/x/node_modules/.bin/gemini", "--yolo"}, "gemini"},
		{"claude code under bun run", []string{"bun", "run", cc + "/cli.js"}, "claude"},
		{"aider as a python script", []string{"/usr/bin/python3", "/home/u/.local/bin/aider"}, "aider"},

		{"less on a file of claude code's", []string{"less", cc + "/README.md"}, ""},
		{"an editor on codex's launcher", []string{"vim", "/x/node_modules/@openai/codex/bin/codex.js"}, ""},
		{"grep naming the package", []string{"grep", "-r", "@anthropic-ai/claude-code", "."}, ""},
		{"node running another script that takes the path", []string{"node", "/w/lint.js", cc + "/cli.js"}, ""},
		{"node -e code that names it", []string{"node", "-e", "require('" + cc + "/cli.js')"}, ""},
		{"a shell starting it is the shell", []string{"bash", "-c", "node " + cc + "/cli.js"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if p := agentOf(set, mkProc(10, 1, 10, 10, 10, tt.args[0], tt.args...)); p != nil {
				got = p.Name
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// less in a pane's foreground, on Claude Code's README, is no agent with a dialog to answer.
func TestProfileDetectLessIsNotClaude(t *testing.T) {
	procs := ptable(
		mkProc(1, 0, 1, 1, -1, "init", "/sbin/init"),
		mkProc(100, 1, 100, 100, 101, "bash", "-bash"),
		mkProc(101, 100, 101, 100, 101, "less", "less", "/w/node_modules/@anthropic-ai/claude-code/README.md"),
	)
	det := Detect(profile.Defaults(), Pane{PID: 100}, procs, nil, Exclude{})
	assert.NotEqual(t, "claude", det.Name, det.Reason)
	assert.Nil(t, AgentIn(profile.Defaults(), Pane{PID: 100}, procs, Exclude{}))
}
