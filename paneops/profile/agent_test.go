package profile

import (
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// TestAgentRecords walks every record and checks that it is whole and agrees with its profile:
// adding an agent is its profile and its record, and this test says what either lacks.
func TestAgentRecords(t *testing.T) {
	var names []string
	for _, a := range Agents() {
		t.Run(a.Name, func(t *testing.T) {
			require.NotEmpty(t, a.Name)
			assert.Equal(t, strings.ToLower(a.Name), a.Name, "the name is typed after --agent and --for")
			assert.NotContains(t, names, a.Name, "one record per agent")
			names = append(names, a.Name)
			assert.Same(t, a, AgentNamed(strings.ToUpper(a.Name)), "found by its name in any case")

			// Its process names and screen are its profile's.
			p := a.Profile()
			require.NotNil(t, p, "a record names a built-in profile (profiles.json)")
			assert.Equal(t, KindAgent, p.Kind)
			assert.NotEmpty(t, append(p.Detect.Names, p.Detect.Cmdline...), "its processes are recognised")
			assert.True(t, p.HasBox(), "its input box is read before a paste")
			assert.Contains(t, []string{"", DoorClaudeSocket, DoorCodexAppServer}, a.Door())

			if h := a.Hooks; h != nil {
				checkHooks(t, a)
				assert.NotNil(t, a.Skill, "install-skill installs the hooks of the agents it writes instructions for")
			}
			if s := a.Skill; s != nil {
				checkPath(t, "skill", s.Project)
				checkPath(t, "skill --user", s.User)
			}
			if m := a.MCP; m != nil {
				checkPath(t, "mcp", m.Project)
				checkPath(t, "mcp --user", m.User)
				assert.Contains(t, []string{MCPClaudeJSON, MCPGeminiJSON, MCPCodexTOML}, m.Format)
				if m.UserDirEnv != "" {
					assert.Contains(t, m.User, "/", "the folder $%s takes the place of", m.UserDirEnv)
				}
			}
			if n := a.Prompt; n != nil {
				assert.NotEmpty(t, n.Shell, "the prompt says how the agent runs a command")
				if n.AwaitTimeout != "" {
					d, err := time.ParseDuration(n.AwaitTimeout)
					require.NoError(t, err)
					assert.Less(t, d, 30*time.Minute, "a timeout is set only below the default's")
				}
			}
		})
	}
	for _, p := range Defaults().Profiles {
		if p.Kind == KindAgent {
			assert.NotNil(t, AgentNamed(p.Name), "the built-in agent profile %q has a record (agent.go)", p.Name)
		}
	}
	assert.Nil(t, AgentNamed("generic"), "only agents have records")
	assert.Nil(t, HookAgent("aider"), "an agent without hooks is no hook's agent")
}

// checkHooks checks an agent's hooks: their file, events that tell the kinds apart, and a
// permission hook's decision format that reads back what it prints.
func checkHooks(t *testing.T, a *Agent) {
	t.Helper()
	h := a.Hooks
	assert.Same(t, a, HookAgent(a.Name))
	checkPath(t, "hooks", h.File)
	require.NotEmpty(t, h.Prompt, "the event before a turn")
	require.NotEmpty(t, h.Stop, "the event at a turn's end")
	ev := h.Events()
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(ev))), len(ev), "each event is one kind: %v", ev)
	assert.Equal(t, HookPrompt, h.Kind(h.Prompt))
	assert.Equal(t, HookStop, h.Kind(h.Stop))
	assert.Empty(t, h.Kind(""), "no event is no kind")
	assert.Empty(t, h.Kind("SomethingElse"))
	if h.Permission == "" {
		assert.Empty(t, h.Decision, "a decision format without a permission hook is never used")
		assert.Zero(t, h.PermissionTimeout)
		return
	}
	assert.Equal(t, HookPermission, h.Kind(h.Permission))
	assert.Positive(t, h.Timeout(h.Permission), "the person is given time")
	assert.Zero(t, h.Timeout(h.Stop), "a turn-boundary hook does not wait")
	require.Contains(t, messages.DecisionFormats(), h.Decision, "the permission hook answers in a format messages prints")
	req := messages.PermissionRequest{Agent: a.Name, Tool: "Bash", Subject: "make test",
		Always: []messages.PermissionUpdate{{Type: "addRules", Rules: []messages.PermissionRule{{ToolName: "Bash", RuleContent: "make test"}},
			Behavior: "allow", Destination: "session"}}}
	for _, answer := range messages.PermissionOptions() {
		d, err := messages.DecisionOf(req, answer, "not now")
		require.NoError(t, err)
		out, err := messages.FormatDecision(h.Decision, d)
		require.NoError(t, err, answer)
		back, err := messages.ParseDecision(h.Decision, out)
		require.NoError(t, err, answer)
		assert.Equal(t, d, back, "%s: the decision the agent reads is the one decided", answer)
	}
}

// checkPath checks a record's file: a clean relative slash path, inside the folder it is under.
func checkPath(t *testing.T, what, p string) {
	t.Helper()
	require.NotEmpty(t, p, what)
	assert.Equal(t, path.Clean(p), p, what)
	assert.False(t, path.IsAbs(p) || strings.HasPrefix(p, ".."+"/") || strings.Contains(p, `\`), "%s: %q stays under its folder", what, p)
}
