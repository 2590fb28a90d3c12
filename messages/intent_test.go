package messages

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var seedTime = time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)

func seedIntent() Intent {
	def := ActionDef{Run: []string{"make", "docs"}, Targets: []string{"docs"}, Dir: "/src/p"}
	return Intent{QuestionID: "task-3.q1-a1b2", RequestID: "20260117-120000-a1b2", Action: "publish", Definition: def,
		DefinitionHash: def.Hash(), Config: "/src/p/.wcomm.yaml",
		Targets:   []Target{{Path: "docs", Kind: TargetDir, SHA256: ContentSHA256([]byte("d"))}},
		Git:       GitState{Dir: "/src/p", Head: strings.Repeat("a", 40), StatusSHA256: ContentSHA256(nil), Changed: 1},
		CreatedAt: seedTime}
}

func seedDispatch() Dispatch {
	return Dispatch{Decision: DecisionBlock, Reasons: []string{"HEAD moved"}, PID: 42, Host: "h", At: seedTime}
}

func seedResult() ActionResult {
	return ActionResult{ExitCode: 0, StartedAt: seedTime, EndedAt: seedTime.Add(time.Second), Output: "task-3.q1.output"}
}

func TestActionRecordsRoundTrip(t *testing.T) {
	in, err := ParseIntent(FormatIntent(seedIntent()))
	require.NoError(t, err)
	assert.Equal(t, seedIntent(), in)
	d, err := ParseDispatch(FormatDispatch(seedDispatch()))
	require.NoError(t, err)
	assert.Equal(t, seedDispatch(), d)
	r, err := ParseActionResult(FormatActionResult(seedResult()))
	require.NoError(t, err)
	assert.Equal(t, seedResult(), r)
	l := TrustList{}.With("/p/.wcomm.yaml", ContentSHA256([]byte("a")), seedTime).With("/p/.wcomm.yaml", ContentSHA256([]byte("b")), seedTime)
	got, err := ParseTrustList(FormatTrustList(l))
	require.NoError(t, err)
	assert.Equal(t, l, got)
	assert.True(t, got.Trusts("/p/.wcomm.yaml", ContentSHA256([]byte("b"))))
	assert.False(t, got.Trusts("/p/.wcomm.yaml", ContentSHA256([]byte("a"))), "a new trust replaces the old content's")
}

func TestParseActionRecordsRefuse(t *testing.T) {
	bad := func(f func(*Intent)) []byte { in := seedIntent(); f(&in); return FormatIntent(in) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown field", []byte(`{"question_id":"t.q1-abcd","extra":1}`), `unknown field "extra"`},
		{"bad action", bad(func(i *Intent) { i.Action = "a b" }), "action name"},
		{"empty run", bad(func(i *Intent) { i.Definition.Run = nil }), "definition.run is empty"},
		{"relative dir", bad(func(i *Intent) { i.Definition.Dir = "p" }), "not an absolute folder"},
		{"bad hash", bad(func(i *Intent) { i.DefinitionHash = "x" }), "not a sha256"},
		{"bad target", bad(func(i *Intent) { i.Targets[0].Kind = "link" }), "targets[0]"},
		{"trailing data", append(FormatIntent(seedIntent()), []byte("{}")...), "data after the record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseIntent(tt.data)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSyntax)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := ParseDispatch([]byte(`{"decision":"maybe","pid":1,"at":"2026-01-17T12:00:00Z"}`))
	assert.ErrorIs(t, err, ErrSyntax)
	_, err = ParseActionResult([]byte(`{"exit_code":0,"started_at":"2026-01-17T12:00:00Z","ended_at":"2026-01-17T12:00:00Z","output":"../x"}`))
	assert.ErrorIs(t, err, ErrSyntax)
}

func TestActionDefHash(t *testing.T) {
	a := ActionDef{Run: []string{"make", "docs"}, Targets: []string{"docs"}, Dir: "/p"}
	b := a
	b.Run = []string{"make", "docs", "-j2"}
	assert.NotEqual(t, a.Hash(), b.Hash())
	assert.Equal(t, a.Hash(), ActionDef{Run: []string{"make", "docs"}, Targets: []string{"docs"}, Dir: "/p"}.Hash())
	assert.Len(t, a.Hash(), 64)
}
