package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuardFrames: good lines pass through whole, one write each; each bad one is answered with a
// JSON-RPC error, and what follows it is still read.
func TestGuardFrames(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name  string
		line  string
		code  int
		id    string
		limit int
	}{
		{name: "good", line: good},
		{name: "good with CRLF", line: good + "\r"},
		{name: "notification", line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "garbage", line: "garbage", code: -32700, id: "null"},
		{name: "truncated", line: `{"jsonrpc":"2.0","id":2`, code: -32700, id: "null"},
		{name: "trailing NUL", line: good + "\x00", code: -32700, id: "null"},
		{name: "two values", line: good + good, code: -32700, id: "null"},
		{name: "batch", line: "[" + good + "]", code: -32600, id: "null"},
		{name: "a number", line: "7", code: -32600, id: "null"},
		{name: "object id", line: `{"jsonrpc":"2.0","id":{},"method":"x"}`, code: -32600, id: "null"},
		{name: "no jsonrpc, string id", line: `{"id":"a","method":"x"}`, code: -32600, id: `"a"`},
		{name: "response without id", line: `{"jsonrpc":"2.0","result":{}}`, code: -32600, id: "null"},
		{name: "at the limit", line: `{"jsonrpc":"2.0","method":"` + strings.Repeat("a", 100-29) + `"}`, limit: 100},
		{name: "over the limit", line: `{"jsonrpc":"2.0","method":"` + strings.Repeat("a", 101-29) + `"}`, code: -32600, id: "null", limit: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = maxFrame
			}
			var passed, replies bytes.Buffer
			in := tt.line + "\n\n" + good + "\n"
			require.NoError(t, guardFrames(strings.NewReader(in), &passed, &replies, limit))
			if tt.code == 0 {
				assert.Equal(t, strings.TrimSuffix(tt.line, "\r")+"\n"+good+"\n", passed.String())
				assert.Empty(t, replies.String())
				return
			}
			assert.Equal(t, good+"\n", passed.String(), "the line after a bad one is read")
			var r struct {
				JSONRPC string             `json:"jsonrpc"`
				ID      json.RawMessage    `json:"id"`
				Error   struct{ Code int } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(replies.Bytes(), &r), "%q", replies.String())
			assert.Equal(t, "2.0", r.JSONRPC)
			assert.Equal(t, tt.id, string(r.ID))
			assert.Equal(t, tt.code, r.Error.Code)
		})
	}
}
