package messages

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func permInput(t *testing.T, js string) HookInput {
	t.Helper()
	var in HookInput
	require.NoError(t, json.Unmarshal([]byte(js), &in))
	return in
}

func TestParsePermissionRequest(t *testing.T) {
	tests := []struct {
		name        string
		input       string
		wantSubject string
		wantAlways  string // the "always" rule in words, "" for none
	}{
		{"bash, suggestions broader than the call: the exact command",
			`{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch c.txt","description":"make it"},
			 "permission_suggestions":[{"type":"addDirectories","directories":["/w"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`,
			"touch c.txt", "Bash(touch c.txt) for this session"},
		{"bash, the agent's own rule, made a session rule",
			`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"npm test"},
			 "permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"}]}`,
			"npm test", "Bash(npm test:*) for this session"},
		{"a rule for the whole tool is broader: not taken",
			`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"},
			 "permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash"}],"behavior":"allow","destination":"session"}]}`,
			"ls", "Bash(ls) for this session"},
		{"a file tool: its path, and no rule of its own",
			`{"hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"/w/a.go","content":"x"}}`,
			"/w/a.go", ""},
		{"an unknown tool: its input whole",
			`{"hook_event_name":"PermissionRequest","tool_name":"mcp__x__y","tool_input":{"q":1}}`,
			`{"q":1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePermissionRequest("claude", permInput(t, tt.input))
			require.NoError(t, err)
			assert.Equal(t, tt.wantSubject, p.Subject)
			var words string
			for _, u := range p.Always {
				assert.Equal(t, "session", u.Destination, "never broader than the session")
				assert.Equal(t, "addRules", u.Type)
				words = u.Words()
			}
			assert.Equal(t, tt.wantAlways, words)
			q := PermissionQuestion(p, "%3").Normalized()
			require.NoError(t, q.Validate())
			assert.Contains(t, q.Text, tt.wantSubject)
		})
	}
	_, err := ParsePermissionRequest("claude", permInput(t, `{"hook_event_name":"Stop"}`))
	assert.ErrorIs(t, err, ErrSyntax)
	_, err = ParsePermissionRequest("claude", permInput(t, `{"hook_event_name":"PermissionRequest"}`))
	assert.ErrorIs(t, err, ErrSyntax, "no tool")
}

func TestMatchPermissionAnswer(t *testing.T) {
	q := Question{Text: "x", Task: PermissionTask, Type: Permission, Options: PermissionOptions()}
	tests := []struct {
		raw, want, note string
		ok              bool
	}{
		{"allow", PermAllow, "", true},
		{" Yes ", PermAllow, "", true},
		{"1", PermAllow, "", true},
		{"always", PermAlways, "", true},
		{"B", PermAlways, "", true},
		{"deny", PermDeny, "", true},
		{"no", PermDeny, "", true},
		{"deny: use the staging database", PermDeny, "use the staging database", true},
		{"deny not now", PermDeny, "not now", true},
		{"allow but carefully", "", "", false},
		{"maybe", "", "", false},
		{"4", "", "", false},
	}
	for _, tt := range tests {
		m, err := MatchAnswer(q, tt.raw)
		if !tt.ok {
			assert.ErrorIs(t, err, ErrInvalidAnswer, tt.raw)
			continue
		}
		require.NoError(t, err, tt.raw)
		assert.Equal(t, tt.want, m.Value, tt.raw)
		assert.Equal(t, tt.note, m.Note, tt.raw)
	}
}

func TestFormatDecisionClaude(t *testing.T) {
	p, err := ParsePermissionRequest("claude", permInput(t,
		`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch k"}}`))
	require.NoError(t, err)
	tests := []struct {
		answer, message, want string
	}{
		{PermAllow, "", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{PermDeny, "Denied from the phone", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied from the phone"}}}`},
		{PermAlways, "", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch k"}],"behavior":"allow","destination":"session"}]}}}`},
	}
	for _, tt := range tests {
		d, err := DecisionOf(p, tt.answer, tt.message)
		require.NoError(t, err)
		out, err := FormatDecision(DecisionClaudeHook, d)
		require.NoError(t, err)
		assert.JSONEq(t, tt.want, string(out), tt.answer)
		back, err := ParseDecision(DecisionClaudeHook, out)
		require.NoError(t, err)
		assert.Equal(t, d, back, "the decision reads back as it was printed")
	}
	d, err := DecisionOf(p, PermDeny, "")
	require.NoError(t, err)
	assert.NotEmpty(t, d.Message, "a deny always tells the model something")
	_, err = DecisionOf(p, "perhaps", "")
	assert.True(t, errors.Is(err, ErrInvalidAnswer))
	_, err = FormatDecision("no-such-format", d)
	assert.ErrorIs(t, err, ErrSyntax, "a format no record may name is refused, not printed as another's")
	_, err = ParseDecision(DecisionClaudeHook, []byte(`{"hookSpecificOutput":{"hookEventName":"Stop"}}`))
	assert.ErrorIs(t, err, ErrSyntax, "another event's output is not a decision")
}

func TestPermissionTypeNotAskedByName(t *testing.T) {
	_, err := ParseQuestionType("permission")
	assert.ErrorIs(t, err, ErrSyntax, "ask --type permission is not a way to ask one")
	q := Question{Text: "x", Task: PermissionTask, Type: Permission, Urgency: Blocking, Options: []string{"yes", "no"}, Context: "c"}
	assert.ErrorIs(t, q.Validate(), ErrSyntax, "a permission question's options are fixed")
}

// An agent that has no session rule to give (Codex's approvals) is asked allow or deny only, and
// an "always" is refused rather than taken as an allow.
func TestPermissionQuestionWithoutAlways(t *testing.T) {
	p := PermissionRequest{Agent: "codex", Tool: "Bash", Subject: "touch x", Answers: []string{PermAllow, PermDeny}}
	q := PermissionQuestion(p, "%3").Normalized()
	require.NoError(t, q.Validate())
	assert.Equal(t, []string{PermAllow, PermDeny}, q.Options)
	_, err := MatchAnswer(q, "always")
	assert.ErrorIs(t, err, ErrInvalidAnswer)
	m, err := MatchAnswer(q, "deny: not there")
	require.NoError(t, err)
	assert.Equal(t, PermDeny, m.Value)
	assert.Equal(t, PermissionOptions(), PermissionRequest{}.Options(), "all three by default")

	q.Options = []string{PermDeny, PermAllow}
	assert.ErrorIs(t, q.Validate(), ErrSyntax, "in the usual order only")
	q.Options = []string{PermAllow, PermAlways}
	assert.ErrorIs(t, q.Validate(), ErrSyntax, "deny is always offered")
}
