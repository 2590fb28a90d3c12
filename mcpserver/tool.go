package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wcomm/wcomm/paneops/callstack"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/fleet"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// ToolError is the structured content of a failed tool call: the words the command line prints
// after "wcomm COMMAND: ", and its exit code with the code's class.
type ToolError struct {
	Error    string `json:"error" jsonschema:"what went wrong and what to do next, the same words the command line prints"`
	Class    string `json:"class" jsonschema:"usage, failure, timed_out or not_found"`
	ExitCode int    `json:"exit_code" jsonschema:"the command line's exit code: 1 failure, 2 usage, 3 timed out, 4 not found or ambiguous"`
	// Panes is what runs where, when a find or a send's agent name matched no pane or several.
	Panes []fleet.PaneInfo `json:"panes,omitempty" jsonschema:"what runs where, when an agent name matched no pane or several"`
	// RequestPath is the request kept on disk by a send that could not deliver it.
	RequestPath string `json:"request_path,omitempty" jsonschema:"the request file kept on disk by a send that was not delivered"`
}

// usagef is a mistake in a call's arguments: class usage, exit code 2.
var usagef = tmuxcomm.Usagef

// detailedError adds what the structured error shows beside the words (panes, a kept request).
type detailedError struct {
	err    error
	detail func(*ToolError)
}

func (e *detailedError) Error() string { return e.err.Error() }
func (e *detailedError) Unwrap() error { return e.err }

// tool is one tool: its definition for tools/list, its handler, and the schema of its structured
// content (its result's or ToolError's), which the help tool gives.
type tool struct {
	def     *mcp.Tool
	handler mcp.ToolHandler
	out     *jsonschema.Schema
}

// typed builds a tool whose arguments decode into In and whose result is an Out with a text: the
// text an agent reads first (a response's body, an ANSWER block), the Out its structured content.
func typed[In, Out any](s *server, def mcp.Tool, run func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, string, error)) tool {
	return s.newTool(def, func(ctx context.Context, req *mcp.CallToolRequest, args *input) (any, string, error) {
		var in In
		if err := args.decode(&in); err != nil {
			return nil, "", err
		}
		return run(ctx, req, in)
	}, schemaFor[In](), schemaFor[Out]())
}

// newTool builds a tool from a typed run function. The input schema is inferred from In (its
// jsonschema tags are the descriptions). The schema of its structured content is Out's or
// ToolError's; it is not the tool's outputSchema in tools/list, which every agent reads whole
// into its context before any work: the results' schemas were three quarters of a 59 KB list
// (their types repeat in every tool), and a client may only check results against them. The help
// tool gives them to whoever asks (help.go). The
// handler validates the arguments itself, so a bad argument is a tool error of class usage like
// any other, not the SDK's bare text; it recovers a panic into a tool error and logs it, so one bad
// call never ends the server.
func (s *server) newTool(def mcp.Tool, run func(ctx context.Context, req *mcp.CallToolRequest, in *input) (any, string, error), inSchema, outSchema *jsonschema.Schema) tool {
	in, err := inSchema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", def.Name, err))
	}
	errSchema, err := jsonschema.For[ToolError](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: error schema: %v", def.Name, err))
	}
	def.InputSchema = inSchema
	out := &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{outSchema, errSchema}}
	name := def.Name
	return tool{def: &def, out: out, handler: func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		callstack.Grow()
		// The files this call takes ahead are made again after it (or while it waits), not in its
		// way: the server runs with one P (store.Busy).
		defer store.Busy()()
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool call panicked; the server goes on", "tool", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res = s.errorResult(name, fmt.Errorf("internal error in wcomm (%v); the server is still running: try again, and report this with the server's log", p))
			}
		}()
		args, verr := validate(in, req.Params.Arguments)
		if verr != nil {
			s.log.Info("tool call refused", "tool", name, "error", verr.Error())
			return s.errorResult(name, verr), nil
		}
		out, text, rerr := run(ctx, req, args)
		if rerr != nil {
			s.log.Info("tool call failed", "tool", name, "error", rerr.Error(), "took", time.Since(start).Round(time.Millisecond).String())
			return s.errorResult(name, rerr), nil
		}
		s.log.Debug("tool call", "tool", name, "took", time.Since(start).Round(time.Millisecond).String())
		return structured(out, text)
	}}
}

// input is a call's validated arguments, decoded into the tool's input type by decode.
type input struct{ raw json.RawMessage }

// decode unmarshals the arguments into v, refusing fields the schema does not name.
func (in *input) decode(v any) error {
	dec := json.NewDecoder(bytes.NewReader(in.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return usagef("invalid arguments: %v", err)
	}
	return nil
}

// validate checks raw arguments against the input schema. Missing arguments are an empty object.
func validate(schema *jsonschema.Resolved, raw json.RawMessage) (*input, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, usagef("invalid arguments: %v", err)
	}
	if err := schema.Validate(v); err != nil {
		return nil, usagef("invalid arguments: %v; see the tool's input schema", err)
	}
	return &input{raw: raw}, nil
}

// structured builds a successful result: the text first, then the structured value as JSON text
// for clients that read only text content.
func structured(out any, text string) (*mcp.CallToolResult, error) {
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode the result: %w", err)
	}
	res := &mcp.CallToolResult{StructuredContent: json.RawMessage(data)}
	if text != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: text})
	}
	if t, ok := out.(textDuplicate); ok {
		// The text already holds the big field (await's response): the JSON text leaves it out.
		if data, err = json.Marshal(t.withoutText()); err != nil {
			return nil, fmt.Errorf("encode the result: %w", err)
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: string(data)})
	return res, nil
}

// textDuplicate is a result whose text content already carries one of its fields whole: its JSON
// text is withoutText's, so a text-only client reads the field once, not twice.
type textDuplicate interface{ withoutText() any }

// errorResult is a tool error: IsError, the command line's words in text, and the ToolError with
// the class the engine's front door gives the error (tmuxcomm.ClassOf), as the command line's exit
// code does.
func (s *server) errorResult(name string, err error) *mcp.CallToolResult {
	err = tmuxcomm.Hinted(tmuxcomm.Named(err, argNames), needHints)
	class := tmuxcomm.ClassOf(err)
	if class == tmuxcomm.ClassOK {
		class = tmuxcomm.ClassFailure
	}
	te := ToolError{Error: err.Error(), Class: class.String(), ExitCode: class.ExitCode()}
	var de *detailedError
	if errors.As(err, &de) && de.detail != nil {
		de.detail(&te)
	}
	data, merr := json.Marshal(te)
	if merr != nil {
		data = []byte(`{"error":"encode the error","class":"failure","exit_code":1}`)
	}
	text := fmt.Sprintf("wcomm %s: %v (exit code %d: %s)", name, err, te.ExitCode, te.Class)
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(data),
	}
}

// schemaFor infers the JSON schema of T, panicking on a type that has none: the tool list is
// built once at start, and a wrong type there is a programming error.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	return s
}
