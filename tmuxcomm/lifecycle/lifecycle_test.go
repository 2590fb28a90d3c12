package lifecycle

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/paneops/profile"
	"github.com/wcomm/wcomm/tmuxcomm/core"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

func TestCommand(t *testing.T) {
	r := &Room{Profiles: profile.Defaults()}
	tests := []struct {
		name      string
		o         SpawnOptions
		wantArgv  []string
		wantAgent string
		wantErr   error
		usage     bool
	}{
		{name: "a profile's launch command", o: SpawnOptions{Profile: "claude"}, wantArgv: []string{"claude"}, wantAgent: "claude"},
		{name: "a command of an agent, by its program", o: SpawnOptions{Argv: []string{"/usr/local/bin/codex", "--model", "x"}}, wantArgv: []string{"/usr/local/bin/codex", "--model", "x"}, wantAgent: "codex"},
		{name: "a command of an agent, by its package", o: SpawnOptions{Argv: []string{"node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"}}, wantArgv: []string{"node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"}, wantAgent: "claude"},
		{name: "a program given an agent's file is not that agent", o: SpawnOptions{Argv: []string{"less", "/x/node_modules/@anthropic-ai/claude-code/README.md"}}, wantArgv: []string{"less", "/x/node_modules/@anthropic-ai/claude-code/README.md"}},
		{name: "a plain program", o: SpawnOptions{Argv: []string{"python3", "worker.py"}}, wantArgv: []string{"python3", "worker.py"}},
		{name: "a wrapper named with its agent", o: SpawnOptions{Argv: []string{"bash", "start.sh"}, Agent: "claude"}, wantArgv: []string{"bash", "start.sh"}, wantAgent: "claude"},
		{name: "an unknown profile", o: SpawnOptions{Profile: "nosuch"}, wantErr: store.ErrNotFound},
		{name: "a profile without a launch command", o: SpawnOptions{Profile: "shell"}, wantErr: store.ErrNotFound},
		{name: "both", o: SpawnOptions{Profile: "claude", Argv: []string{"cat"}}, usage: true},
		{name: "neither", o: SpawnOptions{}, usage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, p, err := r.command(tt.o)
			if tt.wantErr != nil || tt.usage {
				require.Error(t, err)
				if tt.wantErr != nil {
					assert.ErrorIs(t, err, tt.wantErr)
					assert.Contains(t, err.Error(), "claude, codex, gemini, opencode, copilot, qwen")
				}
				var ue *core.UsageError
				assert.Equal(t, tt.usage, errors.As(err, &ue))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantArgv, argv)
			if tt.wantAgent == "" {
				assert.Nil(t, p)
			} else {
				require.NotNil(t, p)
				assert.Equal(t, tt.wantAgent, p.Name)
			}
		})
	}
}

func TestConversationWords(t *testing.T) {
	claude := profile.Defaults().Lookup("claude").Session
	require.NotNil(t, claude)
	assert.Equal(t, []string{"claude", "--model", "x", "--session-id", "U1"}, withSession([]string{"claude", "--model", "x"}, claude.Start, "U1"))
	assert.Equal(t, []string{"claude", "--resume", "U1"}, withSession([]string{"claude"}, claude.Resume, "U1"))
	codex := profile.Defaults().Lookup("codex").Session
	require.NotNil(t, codex)
	assert.Equal(t, []string{"codex", "resume", "T9"}, withSession([]string{"codex"}, codex.Resume, "T9"))

	assert.True(t, namesConversation([]string{"claude", "--resume", "x"}))
	assert.True(t, namesConversation([]string{"claude", "--session-id=x"}))
	assert.False(t, namesConversation([]string{"claude", "--model", "opus"}))
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, newUUID())
}

func TestWorktreePath(t *testing.T) {
	assert.Equal(t, "/src/app-worktrees/alpha", WorktreePath("/src/app", "", "alpha"))
	assert.Equal(t, "/src/agents/alpha", WorktreePath("/src/app", "../agents", "alpha"))
	assert.Equal(t, "/wt/alpha", WorktreePath("/src/app", "/wt", "alpha"))
}
