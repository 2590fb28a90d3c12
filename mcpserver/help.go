package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/messages"
)

type helpIn struct {
	Tool string `json:"tool,omitempty" jsonschema:"a tool's name (default: every tool)"`
}

// toolHelp is one tool as help tells of it.
type toolHelp struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Result is the JSON schema of the tool's structured content: its result's, or ToolError's.
	Result any `json:"result_schema" jsonschema:"the JSON schema of the tool's structured content: its result, or a ToolError"`
}

type helpOut struct {
	Tools []toolHelp `json:"tools"`
}

// helpTool tells of the tools of list: each one's description and the schema of what it returns,
// which tools/list leaves out (tool.go says why).
func (s *server) helpTool(list []tool) tool {
	return typed(s, mcp.Tool{
		Name:  "help",
		Title: "What each tool returns",
		Description: `Returns a tool's description and the JSON schema of its structured content (the result's
fields, or a failed call's error, class and exit_code), which the tool list leaves out to stay small.`,
	}, func(_ context.Context, _ *mcp.CallToolRequest, in helpIn) (*helpOut, string, error) {
		out := &helpOut{}
		var names []string
		for _, t := range list {
			names = append(names, t.def.Name)
			if in.Tool == "" || in.Tool == t.def.Name {
				out.Tools = append(out.Tools, toolHelp{Name: t.def.Name, Description: t.def.Description, Result: t.out})
			}
		}
		if len(out.Tools) == 0 {
			return nil, "", usagef("no tool %q; the tools: %s", messages.SanitizeField(in.Tool), strings.Join(names, ", "))
		}
		var b strings.Builder
		for _, t := range out.Tools {
			fmt.Fprintf(&b, "%s: %s\n", t.Name, t.Description)
		}
		return out, b.String(), nil
	})
}
