package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/tmuxcomm"
)

// connect runs a server with cfg on in-memory transports and returns a client session.
func connect(t *testing.T, cfg Config) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	srv := New(cfg)
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, ToolError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "a tool's failure is a result, never a protocol error")
	var te ToolError
	if res.IsError {
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &te))
	}
	return res, te
}

// A panic in a call (here: no front door at all) is a tool error of class failure, logged, and the
// server answers the next call.
func TestServerRecoversPanics(t *testing.T) {
	var log strings.Builder
	cfg := testConfig(t.TempDir(), &log)
	cfg.Door = nil
	cs := connect(t, cfg)
	for i := 0; i < 2; i++ {
		res, te := call(t, cs, "history", nil)
		require.True(t, res.IsError)
		assert.Equal(t, "failure", te.Class)
		assert.Equal(t, 1, te.ExitCode)
		assert.Contains(t, te.Error, "internal error")
	}
	// A later call is still served: a bad id is refused before any engine is needed.
	res, te := call(t, cs, "answer", map[string]any{"id": "nope", "answer": "B"})
	require.True(t, res.IsError)
	assert.Equal(t, "usage", te.Class, te.Error)
	assert.Contains(t, log.String(), "panicked")
}

// Errors carry the command line's class: the exit code comes from the front door's ClassOf, a bad
// argument is usage, and every error validates against the tool's result schema (help gives it).
func TestServerErrorClasses(t *testing.T) {
	root := t.TempDir()
	cs := connect(t, testConfig(root, nil))
	schemas := resultSchemas(t, cs)
	tests := []struct {
		tool  string
		args  map[string]any
		class string
		code  int
	}{
		{"show", map[string]any{"ref": "20260117-120000-a1b2"}, "not_found", 4},
		{"show", map[string]any{}, "usage", 2},
		{"show", map[string]any{"ref": 7}, "usage", 2},
		{"await", map[string]any{"timeout_seconds": 601}, "usage", 2},
		{"history", map[string]any{"bogus": true}, "usage", 2},
		{"answer", map[string]any{"id": "not an id", "answer": "B"}, "usage", 2},
		{"ask", map[string]any{"question": "which?"}, "usage", 2},
		// An id's unique end is taken as the command line takes it: here no id ends so.
		{"show", map[string]any{"ref": "a1b2"}, "not_found", 4},
		{"notify", map[string]any{"id": "a1b2", "message": "done"}, "not_found", 4},
		{"answer", map[string]any{"id": "q7-0000", "answer": "B"}, "not_found", 4},
		{"questions", map[string]any{"resolve": "q7-0000", "reason": "gone"}, "not_found", 4},
		{"ask", map[string]any{"wait_ids": []string{"q7-0000"}}, "not_found", 4},
	}
	for _, tt := range tests {
		res, te := call(t, cs, tt.tool, tt.args)
		require.True(t, res.IsError, "%s %v", tt.tool, tt.args)
		assert.Equal(t, tt.class, te.Class, "%s %v: %s", tt.tool, tt.args, te.Error)
		assert.Equal(t, tt.code, te.ExitCode)
		var v any
		data, _ := json.Marshal(res.StructuredContent)
		require.NoError(t, json.Unmarshal(data, &v))
		assert.NoError(t, schemas[tt.tool].Validate(v), "%s error against its result schema", tt.tool)
		assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "wcomm "+tt.tool+": "+te.Error)
	}
	_, te := call(t, cs, "ask", map[string]any{"question": "which?"})
	assert.True(t, strings.HasSuffix(te.Error, tmuxcomm.BestJudgment), "ask's errors end as the command line's do: %s", te.Error)
}

func testConfig(root string, log *strings.Builder) Config {
	cfg := Config{Door: &tmuxcomm.Door{Root: root, Dir: root, Getenv: func(string) string { return "" }}}
	if log != nil {
		cfg.Log = slogTo(log)
	}
	return cfg
}

func slogTo(b *strings.Builder) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{w: b}, nil))
}

// lockedWriter serializes the log's writes: calls are handled concurrently.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
