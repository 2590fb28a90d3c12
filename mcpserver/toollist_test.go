package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolListBound is what tools/list may weigh: every agent reads it whole into its context before
// any work (it was 59 KB, about 15,000 tokens).
const toolListBound = 20_000

// The tool list stays under its bound without losing what an agent needs to call a tool: each has
// its description, and an input schema whose every parameter is described and whose required ones
// are required; what each returns is one help call away, and validates the tools' results.
func TestToolListSize(t *testing.T) {
	cs := connect(t, testConfig(t.TempDir(), nil))
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	data, err := json.Marshal(list)
	require.NoError(t, err)
	t.Logf("tools/list: %d bytes, %d tools", len(data), len(list.Tools))
	assert.Less(t, len(data), toolListBound, "tools/list is read whole by every agent")

	required := map[string][]string{
		"answer": {"id", "answer"}, "find": {"agent"}, "notify": {"message"}, "send": {"message"}, "show": {"ref"}, "stop": {"target"}, "cancel": {"ref"},
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		assert.GreaterOrEqual(t, len(tl.Description), 80, "tool %s needs a description an agent can act on", tl.Name)
		in := schemaOf(t, tl.InputSchema)
		assert.Equal(t, "object", in.Type, tl.Name)
		assert.NotEmpty(t, in.Properties, tl.Name)
		for name, p := range in.Properties {
			assert.NotEmpty(t, p.Description, "%s's parameter %s says what it is", tl.Name, name)
		}
		assert.ElementsMatch(t, required[tl.Name], in.Required, "%s's required parameters", tl.Name)
	}
	assert.ElementsMatch(t, ToolNames(), names)

	// help: every tool's result schema, which resolves; one tool's alone; an unknown one is usage.
	res, _ := call(t, cs, "help", nil)
	require.False(t, res.IsError)
	var got helpOut
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &got))
	var helped []string
	for _, th := range got.Tools {
		helped = append(helped, th.Name)
		s := schemaOf(t, th.Result)
		_, err := s.Resolve(nil)
		require.NoError(t, err, th.Name)
		assert.NotEmpty(t, th.Description, th.Name)
	}
	assert.ElementsMatch(t, slices.DeleteFunc(names, func(n string) bool { return n == "help" }), helped, "every other tool")
	res, _ = call(t, cs, "help", map[string]any{"tool": "send"})
	require.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "send: ")
	raw, _ = json.Marshal(res.StructuredContent)
	assert.Contains(t, string(raw), `"broadcast_id"`, "send's result fields")
	res, te := call(t, cs, "help", map[string]any{"tool": "sned"})
	require.True(t, res.IsError)
	assert.Equal(t, "usage", te.Class)
	assert.Contains(t, te.Error, "send")
}

// resultSchemas are the schemas of the tools' structured content, as help gives them.
func resultSchemas(t *testing.T, cs *mcp.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	res, _ := call(t, cs, "help", nil)
	require.False(t, res.IsError)
	var got helpOut
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &got))
	out := map[string]*jsonschema.Resolved{}
	for _, th := range got.Tools {
		out[th.Name], err = schemaOf(t, th.Result).Resolve(nil)
		require.NoError(t, err, th.Name)
	}
	return out
}

// schemaOf is v (a schema as the client decoded it) as a jsonschema.Schema.
func schemaOf(t *testing.T, v any) *jsonschema.Schema {
	t.Helper()
	require.NotNil(t, v)
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(data, &s))
	return &s
}
